"""What the end-to-end test files share: the healthetl binary they run, and reading its CSV files."""

from __future__ import annotations

import csv
import os
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def binary() -> str:
    """`HEALTHETL_BIN` (what `make test-e2e` sets), else the release build, else the debug build; a
    test without any skips, saying how to get one."""
    for candidate in (os.environ.get("HEALTHETL_BIN"), REPO / ".build/release/healthetl", REPO / ".build/debug/healthetl"):
        if candidate and Path(candidate).is_file():
            return str(Path(candidate).resolve())
    raise unittest.SkipTest("needs a built healthetl (swift build, or HEALTHETL_BIN)")


def csv_rows(path: Path) -> list[dict[str, str]]:
    """A CSV output's rows, by column name."""
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))
