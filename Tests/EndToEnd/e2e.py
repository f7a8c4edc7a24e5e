"""What the end-to-end test files share: the healthetl binary they run, the real exports, and
reading what a run writes (CSV files, the data report.html embeds)."""

from __future__ import annotations

import csv
import json
import os
import re
import unittest
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# The last match: the report template's comment names the element too.
REPORT_DATA = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)


def binary(release: bool = False) -> str:
    """`HEALTHETL_BIN` (what `make test-e2e` sets), else the release build, else the debug build; a
    test without one skips, saying how to get one. A `HEALTHETL_BIN` that names no file skips too,
    rather than quietly running another build.

    `release`: only a release build will do (a bound on memory or time, a workflow that runs the
    binary many times), so `HEALTHETL_BIN` or the release build, never the debug one."""
    named = os.environ.get("HEALTHETL_BIN")
    if named:
        if not Path(named).is_file():
            raise unittest.SkipTest(f"HEALTHETL_BIN={named} is not a file: build it or set HEALTHETL_BIN to a built healthetl")
        return str(Path(named).resolve())
    candidates = [REPO / ".build/release/healthetl"] + ([] if release else [REPO / ".build/debug/healthetl"])
    for candidate in candidates:
        if candidate.is_file():
            return str(candidate.resolve())
    if release:
        raise unittest.SkipTest("needs the release build of healthetl (make release, or HEALTHETL_BIN)")
    raise unittest.SkipTest("needs a built healthetl (swift build, or HEALTHETL_BIN)")


def real_fixtures() -> Path:
    """`../shared/fixtures/real` beside the checkout, or the folder `HEALTHETL_REAL_FIXTURES` names
    (a git worktree sits elsewhere)."""
    named = os.environ.get("HEALTHETL_REAL_FIXTURES")
    return Path(named) if named else REPO.parent / "shared/fixtures/real"


def csv_rows(path: Path, *, missing_ok: bool = False) -> list[dict[str, str]]:
    """A CSV output's rows, by column name. `missing_ok`: a file the run did not write (a table
    without rows for this export) reads as no rows."""
    if missing_ok and not path.exists():
        return []
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def report_data(html: Path) -> dict:
    """The data a written report.html embeds."""
    return json.loads(REPORT_DATA.findall(html.read_text(encoding="utf-8"))[-1])


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
