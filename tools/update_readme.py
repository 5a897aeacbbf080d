"""Regenerate the README's generated blocks (fields table, worked example) from the code: `make docs`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from economics.io.documents import model_markdown  # noqa: E402


def run(*args: str) -> str:
    return subprocess.run([sys.executable, "-m", "economics", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout


def blocks() -> dict[str, str]:
    return {
        "fields": run("fields"),
        "model": model_markdown(),
        "worked-example": "```text\n" + run("explain", "docs/example.csv", "--row", "worked-example") + "```\n",
    }


def main() -> None:
    path = ROOT / "README.md"
    text = path.read_text(encoding="utf-8")
    for name, body in blocks().items():
        text, n = re.subn(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)",
                          lambda m, body=body: m.group(1) + body + m.group(2), text, flags=re.S)
        if n != 1:
            sys.exit(f"README.md: block {name} not found")
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
