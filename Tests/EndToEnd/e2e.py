"""What the end-to-end test files share: the healthetl binary they run, and reading its CSV files."""

from __future__ import annotations

import csv
import os
import unittest
import zipfile
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


def write_export_folder(root: Path, xml: str, files: dict[str, str]) -> Path:
    """An unzipped export at `root` (an `apple_health_export` folder): `export.xml` and the files
    beside it, by their paths relative to it."""
    root.mkdir(parents=True)
    (root / "export.xml").write_text(xml, encoding="utf-8")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def write_export_zip(path: Path, xml: str, files: dict[str, str], others: dict[str, str]) -> Path:
    """`export.zip` as the iPhone writes it (`apple_health_export/…`), plus `others`: members
    outside that folder, by their whole names."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("apple_health_export/export.xml", xml)
        for name, text in files.items():
            z.writestr("apple_health_export/" + name, text)
        for name, text in others.items():
            z.writestr(name, text)
    return path
