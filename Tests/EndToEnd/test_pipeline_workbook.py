"""The default pipeline's `health.xlsx` and `daily.csv`, opened by a real spreadsheet program.

A synthetic export goes through the default pipeline; Gnumeric's `ssconvert` (or LibreOffice,
`WORKBOOK_TOOL=soffice`) converts `health.xlsx` and `daily.csv` to OpenDocument, whose cells
carry the type the program gave them. Asserted: the sheets the pipeline promises are there in
order, the Daily sheet's dates come back as dates, its numbers as numbers equal to `daily.csv`'s,
bedtimes as date-times; sleep durations as durations equal to `sleep_daily.csv`'s seconds;
`daily.csv` imported on its own has real dates too; `run.json` lists the sheets and the table
left to its CSV; `--no-workbook` writes none, and `--csv-bom` still starts CSVs with a BOM.

`RealExportWorkbookTests` does the same with the bundled sample and the real exports under
`../shared/fixtures/real/` (skipped when absent) and checks what a person opening the file sees:
Charts is the first sheet, no chart whose series are all empty or 0, a table without rows has a
hidden sheet, names cut at a whole word, no `_s` header over a duration, fractions as percentages.

Skipped, saying so, without a spreadsheet program or a healthetl binary (`e2e.binary()`: `HEALTHETL_BIN`,
else the release build, else the debug build).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows, real_fixtures  # noqa: E402
from test_workbook_roundtrip import convert, q, read_charts, read_tables, spreadsheet_tool  # noqa: E402

REAL = real_fixtures()


class PipelineWorkbookTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tool = spreadsheet_tool()
        if cls.tool is None:
            raise unittest.SkipTest("neither ssconvert (Debian gnumeric) nor soffice is installed")
        binary()  # without one the class skips, saying how to get one
        cls.tmp = tempfile.TemporaryDirectory()
        cls.root = Path(cls.tmp.name)
        cls.export = cls.root / "export.xml"
        subprocess.run([binary(), "sample", "--days", "30", "--seed", "3", "--out", str(cls.export)], check=True,
                       capture_output=True, timeout=300)
        cls.out = cls.root / "out"
        cls.run_pipeline(cls.out)
        cls.report = json.loads((cls.out / "run.json").read_text())
        ods = convert(cls.tool, cls.out / "health.xlsx", cls.root)
        with zipfile.ZipFile(ods) as archive:
            cls.tables = read_tables(archive.read("content.xml"), max_rows=400)
        with open(cls.out / "daily.csv", newline="", encoding="utf-8") as handle:
            cls.daily = list(csv.reader(handle))

    @classmethod
    def run_pipeline(cls, out: Path, *extra: str):
        subprocess.run([binary(), "run", "--quiet", "--pipeline", str(REPO / "Pipelines/default.json"), "--out",
                        str(out), *extra, str(cls.export)], check=True, capture_output=True, timeout=600)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_sheets_in_order_and_run_json_says_what_is_left_to_csv(self):
        names = list(self.tables)
        self.assertEqual(names[:7], [
            "Charts", "Daily", "Sleep", "Workouts", "Workout records", "Swim laps", "Steps per day"])
        self.assertNotIn("Heart rate per minute", names)
        workbook = self.report["workbook"]
        self.assertEqual(workbook["leftToCSV"][0]["file"], "stats/heart-rate-per-minute.csv")
        self.assertEqual(workbook["sheets"][0], {"table": "Daily", "rows": len(self.daily) - 1, "hidden": None,
                                                 "parts": [{"sheet": "Daily", "rows": len(self.daily) - 1}],
                                                 "truncatedTexts": 0})
        self.assertEqual(workbook["charts"], ["Steps per day", "Sleep per night by stage", "Resting heart rate"])

    def test_daily_sheet_has_dates_numbers_and_date_times_equal_to_the_csv(self):
        sheet = self.tables["Daily"]
        header = [cell.text for cell in sheet[0]]
        self.assertEqual(header, self.daily[0])
        self.assertEqual(len(sheet), len(self.daily))
        numbers = 0
        for cells, row in zip(sheet[1:], self.daily[1:]):
            cells = cells + [None] * (len(row) - len(cells))
            for name, cell, text in zip(header, cells, row):
                with self.subTest(date=row[0], column=name):
                    if text == "":
                        self.assertTrue(cell is None or cell.kind is None, f"{cell} for an empty CSV cell")
                    elif name == "date":
                        self.assertEqual(cell.kind, "date")
                        self.assertEqual(cell.value, dt.date.fromisoformat(text))
                    elif name in ("bedtime", "wake_up"):
                        self.assertEqual(cell.kind, "date")
                        self.assertEqual(cell.value, dt.datetime.fromisoformat(text))
                    else:
                        self.assertEqual(cell.kind, "float")
                        self.assertEqual(cell.value, float(text))
                        numbers += 1
        self.assertGreater(numbers, 300)

    def test_sleep_sheet_durations_equal_the_csv_seconds(self):
        sheet = self.tables["Sleep"]
        header = [cell.text for cell in sheet[0]]
        rows = csv_rows(self.out / "sleep_daily.csv")
        # The CSV's seconds, shown as h:mm under a header that says so.
        self.assertNotIn("asleep_s", header)
        column = header.index("asleep (h:mm)")
        for cells, row in zip(sheet[1:], rows):
            self.assertEqual(cells[0].kind, "date")
            if row["asleep_s"] == "":  # a night with only time in bed: blank, not 0:00
                self.assertIsNone(cells[column].kind)
                continue
            self.assertEqual(cells[column].kind, "time")
            self.assertEqual(cells[column].value, dt.timedelta(seconds=int(row["asleep_s"])))

    def test_daily_csv_alone_gives_dates_and_numbers(self):
        ods = convert(self.tool, self.out / "daily.csv", self.root)
        with zipfile.ZipFile(ods) as archive:
            table = next(iter(read_tables(archive.read("content.xml"), max_rows=400).values()))
        header = [cell.text for cell in table[0]]
        steps = header.index("steps")
        bedtime = header.index("bedtime")
        for cells, row in zip(table[1:], self.daily[1:]):
            self.assertEqual(cells[0].kind, "date")
            self.assertEqual(cells[0].value, dt.date.fromisoformat(row[0]))
            if row[steps]:
                self.assertEqual((cells[steps].kind, cells[steps].value), ("float", float(row[steps])))
            if row[bedtime]:
                self.assertEqual(cells[bedtime].kind, "date")
                self.assertEqual(cells[bedtime].value, dt.datetime.fromisoformat(row[bedtime]))

    def test_libreoffice_default_csv_import_keeps_date_times_as_text(self):
        # What Pipelines/docs/outputs.md ("Values") tells LibreOffice users: with "Detect special
        # numbers" off, as in its default CSV import, `date` is a date but `bedtime` stays text;
        # ticked (the other tests) it is a date-time.
        if not shutil.which("soffice"):
            self.skipTest("LibreOffice (soffice) is not installed")
        folder = self.root / "lo-default"
        folder.mkdir(exist_ok=True)
        ods = convert("soffice", self.out / "daily.csv", folder, libreoffice_csv="44,34,76,1,,1033,false,false")
        with zipfile.ZipFile(ods) as archive:
            table = next(iter(read_tables(archive.read("content.xml"), max_rows=400).values()))
        bedtime = [cell.text for cell in table[0]].index("bedtime")
        rows = [(cells, row) for cells, row in zip(table[1:], self.daily[1:]) if row[bedtime]]
        self.assertGreater(len(rows), 10)
        for cells, row in rows:
            self.assertEqual(cells[0].kind, "date")
            self.assertEqual((cells[bedtime].kind, cells[bedtime].text), ("string", row[bedtime]))

    def test_no_workbook_and_csv_bom(self):
        out = self.root / "plain"
        self.run_pipeline(out, "--no-workbook", "--csv-bom")
        self.assertFalse((out / "health.xlsx").exists())
        self.assertIsNone(json.loads((out / "run.json").read_text())["workbook"])
        self.assertTrue((out / "daily.csv").read_bytes().startswith(b"\xef\xbb\xbfdate,steps,"))


def column_index(letters: str) -> int:
    index = 0
    for letter in letters:
        index = index * 26 + ord(letter) - ord("A") + 1
    return index - 1


def hidden_sheets(content: bytes) -> set[str]:
    """Names of the sheets whose table style says `table:display="false"`."""
    root = ET.fromstring(content)
    hidden_styles = set()
    for style in root.iter("{urn:oasis:names:tc:opendocument:xmlns:style:1.0}style"):
        for properties in style:
            if properties.get(q("table", "display")) == "false":
                hidden_styles.add(style.get("{urn:oasis:names:tc:opendocument:xmlns:style:1.0}name"))
    return {table.get(q("table", "name")) for table in root.iter(q("table", "table"))
            if table.get(q("table", "style-name")) in hidden_styles}


class RealExportWorkbookTests(unittest.TestCase):
    """The default pipeline's workbook of real exports, read back by a spreadsheet program."""

    EXPORTS = {
        "sample": REPO / "SampleData/export.zip",
        "bwassim": REAL / "bwassim__Health-Data-Analysis/data/export.zip",
    }

    @classmethod
    def setUpClass(cls):
        cls.tool = spreadsheet_tool()
        if cls.tool is None:
            raise unittest.SkipTest("neither ssconvert (Debian gnumeric) nor soffice is installed")
        binary()  # without one the class skips, saying how to get one
        cls.tmp = tempfile.TemporaryDirectory()
        cls.books = {}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def book(self, name: str, export: Path | None = None):
        """run.json, the sheets, the hidden sheets and the charts of `name`'s workbook."""
        export = export or self.EXPORTS[name]
        if not export.exists():
            self.skipTest(f"{export} is absent (the real fixtures are not on this machine)")
        if name not in self.books:
            root = Path(self.tmp.name) / name
            out = root / "out"
            subprocess.run([binary(), "run", "--quiet", "--out", str(out), str(export)], check=True,
                           capture_output=True, timeout=1200)
            ods = zipfile.ZipFile(convert(self.tool, out / "health.xlsx", root))
            content = ods.read("content.xml")
            self.books[name] = (json.loads((out / "run.json").read_text()), read_tables(content, max_rows=5000),
                                hidden_sheets(content), read_charts(ods))
        return self.books[name]

    def check(self, name: str, export: Path | None = None):
        report, tables, hidden, charts = self.book(name, export)
        names = list(tables)
        self.assertEqual(names[:2], ["Charts", "Daily"])
        # No chart whose series are all empty or 0: each series holds a number other than 0.
        self.assertEqual(len(charts), len(report["workbook"]["charts"]))
        for chart in charts:
            self.assertTrue(chart["series"], chart)
            for series in chart["series"]:
                sheet, first, last = series["values"]
                column = column_index(re.match(r"[A-Z]+", first)[0])
                rows = range(int(re.search(r"\d+", first)[0]) - 1, int(re.search(r"\d+", last)[0]))
                values = [tables[sheet][r][column].value for r in rows
                          if column < len(tables[sheet][r]) and tables[sheet][r][column].kind == "float"]
                with self.subTest(chart=chart["titles"], series=series["name"]):
                    self.assertTrue(any(value != 0 for value in values), f"{len(values)} values, all 0 or none")
        # A sheet holding a header alone is hidden, and only such a sheet.
        for sheet in names[1:]:
            with self.subTest(sheet=sheet):
                self.assertEqual(sheet in hidden, len(tables[sheet]) <= 1, f"{len(tables[sheet])} rows")
        self.assertEqual({s["parts"][0]["sheet"] for s in report["workbook"]["sheets"] if s["hidden"]}, hidden)
        # Names within 31 characters, cut after a whole word of the table's name.
        for sheet in report["workbook"]["sheets"]:
            table, shown = sheet["table"], sheet["parts"][0]["sheet"]
            self.assertLessEqual(len(shown), 31)
            if shown != table:
                self.assertTrue(table.startswith(shown) and table[len(shown)] in "-_ .", (table, shown))
        # A header over durations says h:mm, never seconds; a fraction column shows percentages.
        for sheet, rows in tables.items():
            if len(rows) < 2:
                continue
            for column, header in enumerate(rows[0]):
                kinds = {row[column].kind for row in rows[1:] if column < len(row)} - {None}
                with self.subTest(sheet=sheet, column=header.text):
                    if "time" in kinds:
                        self.assertFalse(header.text.endswith("_s"))
                    if header.text == "weather_humidity":
                        # LibreOffice types the cell "percentage", Gnumeric "float"; both show 68.0%.
                        shown = [row[column] for row in rows[1:] if column < len(row) and row[column].kind]
                        self.assertTrue(all(cell.kind in ("percentage", "float") and cell.text.endswith("%")
                                            for cell in shown), shown[:3])
        return report, tables

    def test_sample(self):
        report, _ = self.check("sample")
        self.assertEqual(report["workbook"]["charts"],
                         ["Steps per day", "Sleep per night by stage", "Resting heart rate"])

    def test_every_real_export(self):
        """Every export under the real fixtures: older iPhones, third-party apps, a Chinese locale."""
        exports = sorted(path for pattern in ("export.zip", "Export.zip", "export.xml", "test-export*.zip")
                         for path in REAL.glob(f"**/{pattern}") if "zip_contents" not in path.parts)
        if not exports:
            self.skipTest(f"no export under {REAL} (the real fixtures are not on this machine)")
        for export in exports:
            with self.subTest(export=str(export.relative_to(REAL))):
                self.check(str(export.relative_to(REAL)), export)

    def test_bwassim_garmin_and_iphone(self):
        """Sleep without stages and no resting heart rate: asleep and in bed, and the average."""
        report, tables = self.check("bwassim")
        self.assertEqual(report["workbook"]["charts"],
                         ["Steps per day", "Sleep per night", "Average heart rate per day"])
        self.assertIn("Walking running distance per", tables)


if __name__ == "__main__":
    unittest.main()
