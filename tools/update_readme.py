"""Regenerate the documentation's generated blocks from the code: `make docs`.

The blocks live in the docs site's pages (they were in the README before it was cut down):

- `fields` in docs/fields.md: the tables `python -m economics fields` prints;
- `model` in docs/model.md: every formula, from the formula definitions;
- `worked-example` in docs/model.md: what `explain` prints for docs/example.csv's row `worked-example`;
- `api-endpoints`, `api-errors`, `api-settings` in docs/http-api.md: the HTTP API's routes, error codes and limits.

tests/test_docs.py checks that each page holds exactly what `blocks()` gives.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from economics.api import reference  # noqa: E402
from economics.io.documents import model_markdown  # noqa: E402

# block name -> the page (relative to the repository root) that holds it
PAGES = {
    "fields": "docs/fields.md",
    "model": "docs/model.md",
    "worked-example": "docs/model.md",
    "api-endpoints": "docs/http-api.md",
    "api-errors": "docs/http-api.md",
    "api-settings": "docs/http-api.md",
}


def run(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "economics", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout


def blocks() -> dict[str, str]:
    return {
        "fields": run("fields"),
        "model": model_markdown(),
        "worked-example": "```text\n" + run("explain", "docs/example.csv", "--row", "worked-example") + "```\n",
        "api-endpoints": reference.endpoints_markdown(),
        "api-errors": reference.errors_markdown(),
        "api-settings": reference.settings_markdown(),
    }


def block_pattern(name: str) -> str:
    return rf"(<!-- {name}:start -->\n)(.*?)(<!-- {name}:end -->)"


def main() -> None:
    for name, body in blocks().items():
        path = ROOT / PAGES[name]
        text = path.read_text(encoding="utf-8")
        def fill(m: re.Match[str], body: str = body) -> str:
            return m.group(1) + body + m.group(3)

        text, n = re.subn(block_pattern(name), fill, text, flags=re.S)
        if n != 1:
            sys.exit(f"{PAGES[name]}: block {name} not found")
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
