"""Suite-wide collection rules: which tests are ``slow``.

``pytest -m "not slow"`` (``make quick``) is the fast loop; ``make test`` and CI run everything. A test is slow when
it drives a real browser (everything under tests/e2e), evaluates a million rows, fuzzes input or sweeps hostile input
(test names with "million", "fuzz" or "hostile"), or is a hypothesis property with 100 or more examples. The rules
live here so that no test file has to carry the marker itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

E2E_DIR = Path(__file__).parent / "e2e"
SLOW_NAME_PARTS = ("million", "fuzz", "hostile")
SLOW_HYPOTHESIS_EXAMPLES = 100


def hypothesis_examples(item: pytest.Item) -> int:
    """The ``max_examples`` a hypothesis test runs with (0 when it is not a hypothesis test)."""
    settings = getattr(getattr(item, "obj", None), "_hypothesis_internal_use_settings", None)
    return int(getattr(settings, "max_examples", 0) or 0) if settings is not None else 0


def is_slow(item: pytest.Item) -> bool:
    """True for browser, million-row, fuzz and hostile-input sweep tests and hypothesis tests of >= 100 examples."""
    if E2E_DIR in Path(str(item.fspath)).parents:
        return True
    name = item.name.lower()
    if any(part in name for part in SLOW_NAME_PARTS):
        return True
    return hypothesis_examples(item) >= SLOW_HYPOTHESIS_EXAMPLES


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
