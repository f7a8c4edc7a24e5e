"""The workbook writer, checked by a real spreadsheet program.

`WorkbookTests/roundTripFixture` (Swift) writes `health-roundtrip.xlsx` through libxlsxwriter and
`daily.csv` holding the same Daily table as text. Gnumeric's `ssconvert` (or LibreOffice headless,
`WORKBOOK_TOOL=soffice`) converts both to OpenDocument, whose cells carry explicit value types
(`office:value-type="date"`, "float", "time", ...), and this test asserts that dates come back
as dates, numbers as numbers and durations as durations, with the CSV's values; that the header
is frozen and filtered, a long table continues on a second sheet, and the charts are native
charts over the right ranges.

Run by `make test-workbook`, which installs Gnumeric when missing. Without either program the
test is skipped, saying so.
"""

from __future__ import annotations

import csv
import datetime as dt
import os
import re
import shutil
import signal
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURE_TEST = "WorkbookTests/roundTripFixture"
CONVERT_SECONDS = 180
BUILD_SECONDS = 1800

NS = {
    "table": "urn:oasis:names:tc:opendocument:xmlns:table:1.0",
    "office": "urn:oasis:names:tc:opendocument:xmlns:office:1.0",
    "text": "urn:oasis:names:tc:opendocument:xmlns:text:1.0",
    "chart": "urn:oasis:names:tc:opendocument:xmlns:chart:1.0",
    "config": "urn:oasis:names:tc:opendocument:xmlns:config:1.0",
}


def q(prefix: str, name: str) -> str:
    return "{%s}%s" % (NS[prefix], name)


def spreadsheet_tool() -> str | None:
    wanted = os.environ.get("WORKBOOK_TOOL")
    for tool in [wanted] if wanted else ["ssconvert", "soffice"]:
        if shutil.which(tool):
            return tool
    return None


def run(command: list[str], timeout: int, env: dict[str, str] | None = None) -> str:
    """Runs `command` in its own process group, killed by its PID when it overruns."""
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise AssertionError(f"{command[0]} took more than {timeout} s")
    if process.returncode != 0:
        raise AssertionError(f"{' '.join(command)} failed ({process.returncode}):\n{output[-4000:]}")
    return output


# LibreOffice's CSV import: comma, ", UTF-8, from row 1, English (US), quoted fields not text, and
# "Detect special numbers" on (also what a shorter option string means) — off, as in its default
# import, date-times stay text (Pipelines/docs/outputs.md, "Values").
LIBREOFFICE_CSV = "44,34,76,1,,1033,false,true"


def convert(tool: str, source: Path, folder: Path, libreoffice_csv: str = LIBREOFFICE_CSV) -> Path:
    """`source` (xlsx or csv) as an .ods written by the spreadsheet program."""
    target = folder / (source.stem + "-" + source.suffix.lstrip(".") + ".ods")
    if tool == "ssconvert":
        command = ["ssconvert", "--export-type=Gnumeric_OpenCalc:odf"]
        if source.suffix == ".csv":
            # Named explicitly: Gnumeric's guesser takes a CSV with a control character for binary.
            command.append("--import-type=Gnumeric_stf:stf_csvtab")
        run(command + [str(source), str(target)], CONVERT_SECONDS)
        return target
    out = folder / ("lo-" + source.suffix.lstrip("."))
    command = ["soffice", "--headless", f"-env:UserInstallation=file://{folder}/lo-profile"]
    if source.suffix == ".csv":
        command.append(f"--infilter=Text - txt - csv (StarCalc):{libreoffice_csv}")
    run(command + ["--convert-to", "ods", "--outdir", str(out), str(source)], CONVERT_SECONDS)
    (out / (source.stem + ".ods")).rename(target)
    return target


# ---------------------------------------------------------------------------------------------
# Reading OpenDocument back

class Cell:
    """One cell as the program typed it: `kind` is the ODF value type (None for an empty cell)."""

    def __init__(self, kind: str | None, value, text: str):
        self.kind, self.value, self.text = kind, value, text

    def __repr__(self) -> str:
        return f"Cell({self.kind!r}, {self.value!r}, {self.text!r})"


def parse_duration(text: str) -> dt.timedelta:
    match = re.fullmatch(r"-?PT(\d+)H(\d+)M(\d+(?:\.\d+)?)S", text)
    assert match, f"not an ODF duration: {text}"
    hours, minutes, seconds = int(match[1]), int(match[2]), float(match[3])
    return dt.timedelta(hours=hours, minutes=minutes, seconds=seconds)


def paragraph_text(element: ET.Element) -> str:
    parts = [element.text or ""]
    for child in element:
        if child.tag == q("text", "s"):
            parts.append(" " * int(child.get(q("text", "c"), "1")))
        elif child.tag == q("text", "tab"):
            parts.append("\t")
        elif child.tag == q("text", "line-break"):
            parts.append("\n")
        else:
            parts.append(paragraph_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def read_cell(element: ET.Element) -> Cell:
    kind = element.get(q("office", "value-type"))
    text = "\n".join(paragraph_text(p) for p in element.findall(q("text", "p")))
    if kind in ("float", "percentage", "currency"):
        value = float(element.get(q("office", "value")))
    elif kind == "date":
        raw = element.get(q("office", "date-value"))
        value = dt.datetime.fromisoformat(raw) if "T" in raw else dt.date.fromisoformat(raw)
    elif kind == "time":
        value = parse_duration(element.get(q("office", "time-value")))
    elif kind == "boolean":
        value = element.get(q("office", "boolean-value")) == "true"
    elif kind == "string":
        value = text
    else:
        value = None
    return Cell(kind, value, text)


def read_tables(content: bytes, max_rows: int = 100) -> dict[str, list[list[Cell]]]:
    """Sheet name -> rows of cells, trailing empty rows and cells dropped."""
    tables = {}
    root = ET.fromstring(content)
    for table in root.iter(q("table", "table")):
        rows: list[list[Cell]] = []
        for row in table.iter(q("table", "table-row")):
            cells: list[Cell] = []
            for element in row:
                if element.tag not in (q("table", "table-cell"), q("table", "covered-table-cell")):
                    continue
                repeat = int(element.get(q("table", "number-columns-repeated"), "1"))
                cell = read_cell(element)
                if cell.kind is None and repeat > 100:
                    break  # the rest of a 16 384-column row
                cells.extend([cell] * repeat)
            while cells and cells[-1].kind is None:
                cells.pop()
            repeat = int(row.get(q("table", "number-rows-repeated"), "1"))
            if not cells and repeat > max_rows:
                break
            rows.extend([cells] * repeat)
            if len(rows) > max_rows:
                break
        while rows and not rows[-1]:
            rows.pop()
        tables[table.get(q("table", "name"))] = rows
    return tables


def unquote_range(address: str) -> tuple[str, str, str]:
    """`'Bob’s nights'.A2:'Bob’s nights'.A3` or `$'Daily'.$A$2:.$A$5` -> (sheet, first, last); a
    range of one cell (`'Daily'.B876`, a chart of one day) is that cell twice."""
    address = address.replace("$", "")
    left, _, right = address.partition(":")
    sheet, first = left.rsplit(".", 1)
    last = right.rsplit(".", 1)[1] if right else first
    return sheet.strip("'"), first, last


def read_charts(ods: zipfile.ZipFile) -> list[dict]:
    """The ODS's chart objects in document order: class, stacking, titles, series."""
    charts = []
    members = [name for name in ods.namelist() if name.endswith("/content.xml")]
    members.sort(key=lambda name: [int(n) for n in re.findall(r"\d+", name)])
    for name in members:
        root = ET.fromstring(ods.read(name))
        chart = root.find(f".//{q('chart', 'chart')}")
        if chart is None:
            continue
        series = []
        for element in root.iter(q("chart", "series")):
            label = next((v for k, v in element.attrib.items() if k.endswith("label-string")
                          or k.endswith("label-cell-expression")), "")
            domain = element.find(q("chart", "domain"))
            series.append({
                "values": unquote_range(element.get(q("chart", "values-cell-range-address"))),
                "domain": unquote_range(domain.get(q("table", "cell-range-address"))) if domain is not None else None,
                "name": label.strip('"'),
            })
        # Gnumeric exports a chart's own title as chart:subtitle.
        headings = [*root.iter(q("chart", "title")), *root.iter(q("chart", "subtitle"))]
        titles = {paragraph_text(p) for heading in headings for p in heading.iter(q("text", "p"))}
        charts.append({
            "class": chart.get(q("chart", "class")),
            "stacked": b'chart:stacked="true"' in ods.read(name),
            "titles": titles,
            "series": series,
        })
    return charts


def frozen_rows(settings: bytes) -> dict[str, int]:
    """Sheet name -> rows frozen at the top (0 when not frozen), from settings.xml."""
    result = {}
    root = ET.fromstring(settings)
    for item_map in root.iter(q("config", "config-item-map-named")):
        if item_map.get(q("config", "name")) != "Tables":
            continue
        for entry in item_map.findall(q("config", "config-item-map-entry")):
            items = {i.get(q("config", "name")): i.text for i in entry.findall(q("config", "config-item"))}
            frozen = items.get("VerticalSplitMode") == "2"
            result[entry.get(q("config", "name"))] = int(items.get("VerticalSplitPosition", "0")) if frozen else 0
    return result


def filter_ranges(content: bytes) -> dict[str, str]:
    """Sheet name -> the range its autofilter buttons cover."""
    result = {}
    for element in ET.fromstring(content).iter(q("table", "database-range")):
        if element.get(q("table", "display-filter-buttons")) == "true":
            sheet, first, last = unquote_range(element.get(q("table", "target-range-address")))
            result[sheet] = f"{first}:{last}"
    return result


# ---------------------------------------------------------------------------------------------

def without_controls(text: str) -> str:
    return "".join(c for c in text if c >= " " or c in "\t\n\r")


def seconds(cell: Cell) -> float:
    assert cell.kind == "time", cell
    return cell.value.total_seconds()


class WorkbookRoundTrip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tool = spreadsheet_tool()
        if cls.tool is None:
            raise unittest.SkipTest("neither ssconvert (Debian gnumeric) nor soffice (libreoffice-calc-nogui) "
                                    "is installed; `make test-workbook` installs Gnumeric")
        cls.folder = Path(tempfile.mkdtemp(prefix="workbook-roundtrip-"))
        env = dict(os.environ, HEALTHETL_WORKBOOK_FIXTURE_DIR=str(cls.folder))
        swift = os.environ.get("SWIFT", "swift")
        run([swift, "test", "--filter", FIXTURE_TEST], BUILD_SECONDS, env=env)
        cls.xlsx = cls.folder / "health-roundtrip.xlsx"
        cls.csv_path = cls.folder / "daily.csv"
        ods = zipfile.ZipFile(convert(cls.tool, cls.xlsx, cls.folder))
        cls.content = ods.read("content.xml")
        cls.tables = read_tables(cls.content)
        cls.settings = ods.read("settings.xml")
        cls.charts = read_charts(ods)
        cls.csv_tables = read_tables(zipfile.ZipFile(convert(cls.tool, cls.csv_path, cls.folder)).read("content.xml"))

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "folder", None) and not os.environ.get("KEEP_WORKBOOK_FIXTURE"):
            shutil.rmtree(cls.folder, ignore_errors=True)

    def test_sheets_in_order_with_a_continued_table(self):
        self.assertEqual(list(self.tables), [
            "Daily", "Workout records", "Bob’s nights", "Swim_laps_ 50m", "Swim_laps_ 50m (2)", "Charts"])
        first = self.tables["Swim_laps_ 50m"]
        second = self.tables["Swim_laps_ 50m (2)"]
        self.assertEqual([r[0].value for r in first], ["lap", 1.0, 2.0, 3.0, 4.0])
        self.assertEqual([r[0].value for r in second], ["lap", 5.0, 6.0])
        self.assertTrue(all(r[0].kind == "float" for r in first[1:] + second[1:]))

    def test_daily_equals_the_csv_with_types(self):
        with open(self.csv_path, newline="", encoding="utf-8") as handle:
            records = list(csv.DictReader(handle))
        rows = self.tables["Daily"]
        self.assertEqual([c.value for c in rows[0]], [
            "date", "steps", "distance_km", "resting_heart_rate_bpm", "asleep", "wake_time", "bedtime", "note",
            "complete"])
        self.assertEqual(len(rows) - 1, len(records))
        for row, record in zip(rows[1:], records):
            cells = row + [Cell(None, None, "")] * (9 - len(row))
            date, steps, distance, heart, asleep, wake, bedtime, note, complete = cells
            with self.subTest(date=record["date"]):
                self.assertEqual(date.kind, "date")
                self.assertEqual(date.value, dt.date.fromisoformat(record["date"]))
                for cell, text in [(steps, record["steps"]), (distance, record["distance_km"]),
                                   (heart, record["resting_heart_rate_bpm"])]:
                    if text == "":
                        self.assertIsNone(cell.kind, cell)
                    else:
                        self.assertEqual(cell.kind, "float", cell)
                        self.assertEqual(cell.value, float(text))
                if record["asleep_s"] == "":
                    self.assertIsNone(asleep.kind)
                else:
                    self.assertEqual(seconds(asleep), float(record["asleep_s"]))
                if record["wake_time"] == "":
                    self.assertIsNone(wake.kind)
                else:
                    self.assertEqual(wake.kind, "date")
                    self.assertEqual(wake.value, dt.datetime.fromisoformat(record["wake_time"]))
                if record["bedtime"] == "":
                    self.assertIsNone(bedtime.kind)
                else:
                    hours, minutes = map(int, record["bedtime"].split(":"))
                    self.assertEqual(seconds(bedtime), hours * 3600 + minutes * 60)
                self.assertEqual(note.kind, "string")
                self.assertEqual(note.value, without_controls(record["note"]))
                if record["complete"] == "":
                    self.assertIsNone(complete.kind)
                elif complete.kind == "boolean":  # Gnumeric
                    self.assertEqual(complete.value, record["complete"] == "true")
                else:  # LibreOffice shows a boolean as a number formatted TRUE/FALSE
                    self.assertEqual((complete.kind, complete.value, complete.text),
                                     ("float", 1.0 if record["complete"] == "true" else 0.0, record["complete"].upper()))

    def test_the_csv_opened_in_the_program_agrees(self):
        """The program reads daily.csv's dates as dates and its numbers as numbers, equal to the
        workbook's cells (seconds there, a duration here)."""
        workbook = self.tables["Daily"][1:]
        from_csv = next(iter(self.csv_tables.values()))[1:]  # one sheet, named after the file
        self.assertEqual(len(from_csv), len(workbook))
        for book, text in zip(workbook, from_csv):
            self.assertEqual((text[0].kind, text[0].value), (book[0].kind, book[0].value))
            for column in (1, 2, 3):
                if column < len(book) and book[column].kind is not None:
                    self.assertEqual((text[column].kind, text[column].value), ("float", book[column].value))
                else:
                    self.assertTrue(column >= len(text) or text[column].kind is None)
            if len(book) > 4 and book[4].kind is not None:
                self.assertEqual((text[4].kind, text[4].value), ("float", seconds(book[4])))

    def test_other_tables_hold_hand_worked_values(self):
        records = self.tables["Workout records"]
        self.assertEqual([(c.kind, c.value) for c in records[1]], [
            ("date", dt.datetime(2024, 3, 9, 18, 30)), ("string", "HKQuantityTypeIdentifierDistanceSwimming"),
            ("float", 1234567.891), ("string", "m")])
        # Serial 61.5: past Excel's phantom 1900-02-29, where every program agrees on the date.
        self.assertEqual([(c.kind, c.value) for c in records[2]], [
            ("date", dt.datetime(1900, 3, 1, 12, 0)), ("string", "edge"), ("float", -0.5)])
        nights = self.tables["Bob’s nights"]
        self.assertEqual(nights[1][0].value, dt.date(2024, 3, 9))
        self.assertEqual([seconds(c) for c in nights[1][1:]], [3600, 14400, 5400])
        self.assertEqual([seconds(c) for c in nights[2][1:3]], [2700, 16200])
        self.assertEqual(len(nights[2]), 3)  # the blank REM cell is empty, not zero

    def test_shown_formats(self):
        daily = self.tables["Daily"]
        self.assertEqual(daily[1][0].text, "2024-02-29")
        self.assertEqual(daily[1][2].text, "0.13")  # 0.125 to two decimals; the value stays 0.125
        self.assertEqual(daily[1][4].text, "27:46")  # [h]:mm keeps counting past a day
        self.assertEqual(daily[1][5].text, "2024-02-29 23:59:59")
        self.assertEqual(daily[2][6].text, "23:10")
        self.assertEqual(self.tables["Workout records"][1][0].text, "2024-03-09 18:30")

    def test_header_is_frozen_and_filtered(self):
        frozen = frozen_rows(self.settings)
        filters = filter_ranges(self.content)
        expected = {"Daily": "A1:I5", "Workout records": "A1:D3", "Bob’s nights": "A1:D3", "Swim_laps_ 50m": "A1:A5",
                    "Swim_laps_ 50m (2)": "A1:A3"}
        self.assertEqual(filters, expected)
        if not frozen:
            # LibreOffice headless writes no view settings, so the panes are read from the xlsx.
            self.assertEqual(self.tool, "soffice")
            xlsx = zipfile.ZipFile(self.xlsx)
            for number in range(1, len(expected) + 1):
                sheet = xlsx.read(f"xl/worksheets/sheet{number}.xml").decode()
                self.assertIn('<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/>', sheet)
            return
        for sheet in expected:
            self.assertEqual(frozen.get(sheet), 1, sheet)

    def test_native_charts_over_the_tables(self):
        self.assertEqual(len(self.charts), 3)
        steps, sleep, heart = self.charts
        self.assertEqual((steps["class"], steps["stacked"]), ("chart:line", False))
        self.assertTrue({"Steps per day", "Date", "Steps (count)"} <= steps["titles"], steps["titles"])
        self.assertEqual([s["values"] for s in steps["series"]], [("Daily", "B2", "B5")])

        self.assertEqual((sleep["class"], sleep["stacked"]), ("chart:bar", True))
        self.assertTrue({"Sleep per night by stage", "Night", "Asleep (h:mm)"} <= sleep["titles"], sleep["titles"])
        self.assertEqual([s["values"] for s in sleep["series"]],
                         [("Bob’s nights", c + "2", c + "3") for c in "BCD"])
        self.assertEqual([s["name"] for s in sleep["series"]], ["Deep", "Core", "REM"])

        self.assertEqual(heart["class"], "chart:line")
        self.assertEqual([s["values"] for s in heart["series"]], [("Daily", "D2", "D5")])
        self.assertEqual([s["name"] for s in heart["series"]], ["Resting heart rate"])
        for chart in (steps, sleep, heart):
            for series in chart["series"]:
                if series["domain"] is not None:  # Gnumeric names the categories per series
                    sheet, _, last = series["values"]
                    self.assertEqual(series["domain"], (sheet, "A2", "A" + last[1:]))


if __name__ == "__main__":
    unittest.main()
