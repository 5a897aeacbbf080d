"""The package's version, the one place it is written: ``pyproject.toml`` reads it (``[tool.setuptools.dynamic]``),
the HTTP API sends it with every response and reports print it.
"""

__version__ = "0.1.0"
