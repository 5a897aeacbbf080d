"""The README: short, its quick-start commands exist, its two examples are shown whole, its links resolve.

The generated blocks (fields, model, worked example) and the calibration figures moved to the documentation site
with the rest of the depth; tests/test_docs.py checks them there, and runs the README's examples with every other
page's (exact output here: the README's examples elide nothing).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README_BYTES = (ROOT / "README.md").read_bytes()
README = README_BYTES.decode("utf-8")


def test_readme_is_under_10_kb() -> None:
    assert len(README_BYTES) < 10_000, len(README_BYTES)


def test_quick_start_commands_exist() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("run", "test"):
        assert f"make {target}" in README
        assert re.search(rf"^{target}:", makefile, flags=re.M), target
    assert "make test" in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_docs_commands_exist() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for target in ("docs-serve", "docs-build"):
        assert f"make {target}" in README
        assert re.search(rf"^{target}:", makefile, flags=re.M), target
    assert "mkdocs build --strict" in README


def test_one_cli_and_one_python_example_shown_whole() -> None:
    """tests/test_docs.py runs both and compares; here: there is one of each, and neither elides a line."""
    console = re.findall(r"^```console\n(.*?)^```", README, flags=re.S | re.M)
    pycon = re.findall(r"^```pycon\n(.*?)^```", README, flags=re.S | re.M)
    assert len(console) == 1 and len(pycon) == 1
    for body in console + pycon:
        assert "..." not in body.replace(">>> ", "").replace("... ", "").splitlines()
    assert len(console[0].splitlines()) > 2 and console[0].startswith("$ python -m economics ")
    assert re.search(r"^[^>\s].*", pycon[0], flags=re.M), "the Python example shows its output"


def test_one_screenshot_that_exists() -> None:
    images = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    assert len(images) == 1 and images[0].startswith("docs/screenshots/")
    assert (ROOT / images[0]).is_file()


def test_relative_links_resolve() -> None:
    links = [link.split("#")[0] for link in re.findall(r"\]\(([^)]+)\)", README)
                if not re.match(r"[a-z]+://", link)]
    assert len(links) >= 15
    assert [link for link in links if not (ROOT / link).exists()] == []
    assert "docs/tutorial.md" in links and "docs/model.md" in links and "docs/fields.md" in links
