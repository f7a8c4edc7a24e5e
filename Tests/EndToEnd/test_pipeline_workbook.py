"""The default pipeline's `health.xlsx` and `daily.csv`, opened by a real spreadsheet program.

A synthetic export goes through the default pipeline; Gnumeric's `ssconvert` (or LibreOffice,
`WORKBOOK_TOOL=soffice`) converts `health.xlsx` and `daily.csv` to OpenDocument, whose cells
carry the type the program gave them. Asserted: the sheets the pipeline promises are there in
order, the Daily sheet's dates come back as dates, its numbers as numbers equal to `daily.csv`'s,
bedtimes as date-times; sleep durations as durations equal to `sleep_daily.csv`'s seconds;
`daily.csv` imported on its own has real dates too; `run.json` lists the sheets and the table
left to its CSV; `--no-workbook` writes none, and `--csv-bom` still starts CSVs with a BOM.

Skipped, saying so, without a spreadsheet program or a healthetl binary.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import zipfile
from pathlib import Path

from test_workbook_roundtrip import convert, read_tables, spreadsheet_tool

REPO = Path(__file__).resolve().parents[2]


def binary() -> str:
    return os.environ.get("HEALTHETL_BIN") or str(REPO / ".build/debug/healthetl")


class PipelineWorkbookTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tool = spreadsheet_tool()
        if cls.tool is None:
            raise unittest.SkipTest("neither ssconvert (Debian gnumeric) nor soffice is installed")
        if not Path(binary()).exists():
            raise unittest.SkipTest(f"no healthetl binary at {binary()}")
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
        self.assertEqual(names[:6], ["Daily", "Sleep", "Workouts", "Workout records", "Swim laps", "steps-per-day"])
        self.assertIn("Charts", names)
        self.assertNotIn("heart-rate-per-minute", names)
        workbook = self.report["workbook"]
        self.assertEqual(workbook["leftToCSV"][0]["file"], "stats/heart-rate-per-minute.csv")
        self.assertEqual(workbook["sheets"][0], {"table": "Daily", "rows": len(self.daily) - 1,
                                                 "parts": [{"sheet": "Daily", "rows": len(self.daily) - 1}]})
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
        with open(self.out / "sleep_daily.csv", newline="", encoding="utf-8") as handle:
            rows = list(csv.DictReader(handle))
        column = header.index("asleep_s")
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
        # What README.md ("In a spreadsheet") tells LibreOffice users: with "Detect special
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


if __name__ == "__main__":
    unittest.main()
