"""``python -m economics``: see :mod:`economics.cli`."""

import sys

from .cli import main

sys.exit(main())
