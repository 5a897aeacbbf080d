"""``python -m economics``: see :mod:`economics.cli`."""

import sys

from economics.cli import main

sys.exit(main())
