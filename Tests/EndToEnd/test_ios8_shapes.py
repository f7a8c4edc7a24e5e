"""The iOS 8–9 shapes, end to end: `healthetl sample --profile ios8` through the default pipeline.

The profile writes what exports of 2014–2015 hold (SampleData/README.md,
"Shapes of real exports"; Pipelines/docs/input.md, "The iOS 8–9 format"): sleep as HealthKit's numbers (`value="1"`
asleep, `value="0"` in bed), Jawbone UP's in-bed records without a value, Withings' stages as a
`Sleep Stage` attribute without a value, Sleep Cycle's heart rate as day aggregates in count/s
(`min`, `max`, `average`, `recordCount`, no value), and each date at its own offset with no
`HKTimeZone`. Before, those records gave no night and no heart rate, with nothing rejected.

Every expected number is worked out here from the export's own text (regular expressions: the
file is not well-formed XML, as such exports were not): each night's asleep, core, deep and
in-bed seconds from its records, each day's heart rate from its aggregate.

The binary is `e2e.binary()`: `HEALTHETL_BIN` (set by `make test-e2e`), else the release build, else
the debug build.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import unittest
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows, report_data  # noqa: E402

BERLIN = ZoneInfo("Europe/Berlin")
RECORD = re.compile(r'^ <Record type="HK\w+TypeIdentifier(\w+)" (.*)/>$')
ATTRIBUTE = re.compile(r'([\w ]+)="([^"]*)"')


def instant(text: str) -> datetime:
    """A compact iOS 8–9 date, `20150302224502+0100`."""
    return datetime.strptime(text, "%Y%m%d%H%M%S%z")


def records(xml: str) -> list[tuple[str, dict[str, str]]]:
    found = []
    for line in xml.splitlines():
        match = RECORD.match(line)
        if match:
            found.append((match[1], {name.strip(): value for name, value in ATTRIBUTE.findall(match[2])}))
    return found


def union_seconds(intervals: list[tuple[datetime, datetime]]) -> int:
    total, end = 0, None
    for start, stop in sorted(intervals):
        if end is None or start > end:
            total += int((stop - start).total_seconds())
            end = stop
        elif stop > end:
            total += int((stop - end).total_seconds())
            end = stop
    return total


class IOS8ShapesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = Path(tempfile.mkdtemp(prefix="healthetl-ios8-"))
        export = cls.work / "export.xml"
        # Sixty days from 2015-03-02 cross the 2015-03-29 spring-forward.
        subprocess.run([binary(), "sample", "--profile", "ios8", "--days", "60", "--seed", "1", "--out", str(export)],
                       check=True, capture_output=True, timeout=120)
        cls.xml = export.read_text(encoding="utf-8")
        cls.records = records(cls.xml)
        cls.out = cls.work / "out"
        cls.run_result = subprocess.run(
            [binary(), "run", "--pipeline", str(REPO / "Pipelines/default.json"), "--out", str(cls.out), str(export)],
            capture_output=True, text=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        subprocess.run(["rm", "-rf", str(cls.work)], check=False)

    def test_every_record_is_read_and_none_rejected(self):
        self.assertEqual(self.run_result.returncode, 0, self.run_result.stderr)
        run = json.loads((self.out / "run.json").read_text(encoding="utf-8"))
        self.assertEqual(run["rejected"], {})
        written = defaultdict(int)
        for kind, _ in self.records:
            written[kind] += 1
        self.assertGreater(written["SleepAnalysis"], 100)
        self.assertGreater(written["HeartRate"], 30)
        self.assertEqual(run["types"]["SleepAnalysis"], written["SleepAnalysis"])
        self.assertEqual(run["types"]["HeartRate"], written["HeartRate"])
        # What the value comes from is read, and so is the typed-in flag iOS 8 wrote as an
        # attribute (HKWasUserEntered="1", metadata of its own name): only Health Mate's own
        # metadata attributes are left.
        names = run["notRead"]["attributes"]["names"]
        self.assertEqual(set(names), {"Record/@Health_Mate_App_Version", "Record/@Withings_User_Identifier"})

    def test_the_zone_comes_from_the_locale_and_the_offsets(self):
        run = json.loads((self.out / "run.json").read_text(encoding="utf-8"))
        self.assertEqual(run["timeZone"], "Europe/Berlin")
        self.assertRegex(run["timeZoneReason"],
                         r"^no HKTimeZone; locale en_DE \(Germany\) and \d+ dates written at \+0100/\+0200 match Europe/Berlin$")
        html = (self.out / "report.html").read_text(encoding="utf-8")
        self.assertIn("Europe/Berlin", html)

    def test_every_night_from_its_records(self):
        """Each night from its records (Berlin dates): Mi Fit's asleep (value 1),
        Withings' Light as core and Deep as deep, the in-bed union of Jawbone UP's records without
        a value and the ones typed in (value 0)."""
        nights = defaultdict(lambda: {"unspecified": 0, "core": 0, "deep": 0, "in_bed": [], "end": None})
        for kind, attributes in self.records:
            if kind != "SleepAnalysis":
                continue
            start, end = instant(attributes["startDate"]), instant(attributes["endDate"])
            # The night's date: the morning's, or the next date for a record that ends after the
            # 18:00 day boundary (Pipelines/docs/sleep.md, "How the numbers are made").
            night = nights[(end.astimezone(BERLIN) + timedelta(hours=6)).date().isoformat()]
            seconds = int((end - start).total_seconds())
            value, stage = attributes.get("value"), attributes.get("Sleep Stage")
            if value == "1":
                night["unspecified"] += seconds
            elif stage == "Light":
                night["core"] += seconds
            elif stage == "Deep":
                night["deep"] += seconds
            else:
                self.assertIn(value, ("0", None), attributes)
                night["in_bed"].append((start, end))
                continue
            night["end"] = max(night["end"] or end, end)
        rows = {row["date"]: row for row in csv_rows(self.out / "sleep_daily.csv")}
        self.assertEqual(sorted(rows), sorted(nights))
        staged = 0
        for date, night in nights.items():
            row = rows[date]
            asleep = night["unspecified"] + night["core"] + night["deep"]
            self.assertEqual(int(row["asleep_s"]), asleep, date)
            self.assertEqual(row["unspecified_s"], str(night["unspecified"]), date)
            if night["core"]:
                staged += 1
                self.assertEqual((row["core_s"], row["deep_s"]), (str(night["core"]), str(night["deep"])), date)
                self.assertEqual(row["sources"], "Health Mate", date)
            else:
                self.assertEqual((row["core_s"], row["deep_s"]), ("", ""), date)
                self.assertEqual(row["sources"], "Mi Fit", date)
            self.assertEqual(row["in_bed_s"], str(union_seconds(night["in_bed"])) if night["in_bed"] else "", date)
            # Instants carry Berlin's offset of their own date: +01:00 before 2015-03-29, +02:00 after.
            self.assertEqual(row["sleep_end"], night["end"].astimezone(BERLIN).isoformat(), date)
        self.assertGreater(staged, 10)
        self.assertTrue(any(row["sleep_end"].endswith("+01:00") for row in rows.values()))
        self.assertTrue(any(row["sleep_end"].endswith("+02:00") for row in rows.values()))

    def test_the_heart_section_shows_the_day_aggregates(self):
        """Each aggregate's `average` in count/s, × 60, is its heart rate: what daily.csv averages
        over the day it starts (the aggregate runs into the next) and what the report's Heart
        section draws at its first minute."""
        by_start = {}
        for kind, attributes in self.records:
            if kind == "HeartRate":
                self.assertNotIn("value", attributes)
                start = instant(attributes["startDate"]).astimezone(BERLIN)
                by_start[start] = float(attributes["average"]) * 60
        data = report_data(self.out / "report.html")
        days = data["heart_rate"]["days"]
        self.assertEqual(len(days), 14)
        for day in days:
            expected = {(start.hour * 60 + start.minute, round(bpm)) for start, bpm in by_start.items()
                        if start.date().isoformat() == day["date"]}
            self.assertEqual(set(zip(day["minute"], [round(v) for v in day["bpm_max"]])), expected, day["date"])
        daily = {row["date"]: row for row in csv_rows(self.out / "daily.csv")}
        with_heart_rate = [date for date, row in daily.items() if row["hr_avg_bpm"]]
        self.assertGreater(len(with_heart_rate), 30)
        for row in daily.values():
            if row["hr_avg_bpm"]:
                self.assertTrue(40 <= float(row["hr_avg_bpm"]) <= 100, row)


if __name__ == "__main__":
    unittest.main()
