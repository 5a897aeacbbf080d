"""The widths of the store's text columns: the longest name, author and project tag a save may give (the tables'
columns in :mod:`economics.store.models`, the checks in :mod:`economics.store.records`).

Kept apart from the models, which import SQLAlchemy, so that the records' checks (and the MCP tools' schemas) read
them without a database library (issue #43).
"""

from __future__ import annotations

NAME_CHARS = 200
"""The longest name of a scenario, study or curve (the scenario's own ``name`` field holds as many)."""
WHO_CHARS = 100
PROJECT_CHARS = 100
