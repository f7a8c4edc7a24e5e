"""`daily.csv` joined back to the outputs it repeats, cell by cell.

A synthetic export (`healthetl sample`) goes through the default pipeline. Every cell of
`daily.csv` must be the value of its underlying output for that date — a `stats/*.csv` value, a
night of `sleep_daily.csv`, the rows of `workouts.csv` that start on the date, or the export's own
`ActivitySummary` attributes (read here straight from the XML) — scaled to the column's unit and
rounded half away from zero to the column's places, computed here with `decimal` from the text
of those files. Dates must run without gaps, and a cell with no underlying value must be empty.

The binary is `e2e.binary()`: `HEALTHETL_BIN` (set by `make test-e2e`), else the release build, else
the debug build.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import unittest
import xml.etree.ElementTree as ET
from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows, real_fixtures  # noqa: E402

# column: (stats job, option, scale, places)
STATISTICS = {
    "steps": ("steps-per-day", "sum", 1, 0),
    "distance_km": ("walking-running-distance-per-day", "sum", Decimal("0.001"), 2),
    "active_energy_kcal": ("active-energy-per-day", "sum", 1, 0),
    "basal_energy_kcal": ("basal-energy-per-day", "sum", 1, 0),
    "flights": ("flights-per-day", "sum", 1, 0),
    "exercise_min": ("exercise-time-per-day", "sum", 1 / Decimal(60), 0),
    "resting_hr_bpm": ("resting-heart-rate-per-day", "avg", 1, 1),
    "walking_hr_avg_bpm": ("walking-heart-rate-per-day", "avg", 1, 1),
    "hrv_sdnn_ms": ("hrv-per-day", "avg", 1, 1),
    "hr_min_bpm": ("heart-rate-per-day", "min", 1, 1),
    "hr_avg_bpm": ("heart-rate-per-day", "avg", 1, 1),
    "hr_max_bpm": ("heart-rate-per-day", "max", 1, 1),
    "respiratory_rate_per_min": ("respiratory-rate-per-day", "avg", 1, 1),
    "vo2max_ml_kg_min": ("vo2max-per-day", "mostRecent", 1, 1),
    "body_mass_kg": ("body-mass-per-day", "mostRecent", 1, 1),
    "swim_distance_m": ("swimming-distance-per-day", "sum", 1, 0),
    "swim_strokes": ("swimming-strokes-per-day", "sum", 1, 0),
}
SLEEP = {"asleep_h": "asleep_s", "in_bed_h": "in_bed_s", "core_h": "core_s", "deep_h": "deep_s", "rem_h": "rem_s",
         "awake_h": "awake_s"}
RINGS = {"move_kcal": "activeEnergyBurned", "move_goal_kcal": "activeEnergyBurnedGoal",
         "exercise_ring_min": "appleExerciseTime", "exercise_goal_min": "appleExerciseTimeGoal",
         "stand_h": "appleStandHours", "stand_goal_h": "appleStandHoursGoal"}


def shown(text: str, scale, places: int) -> str:
    """The decimal text of `text` × `scale` rounded half away from zero, shortest form."""
    value = (Decimal(text) * Decimal(scale)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return canonical(value)


def canonical(value) -> str:
    value = Decimal(value)
    if value == value.to_integral():
        return str(value.quantize(Decimal(1)))
    return format(value.normalize(), "f")


def run_zone(out: Path) -> ZoneInfo:
    return ZoneInfo(json.loads((out / "run.json").read_text())["timeZone"])


def mindful_seconds(export: Path, zone: ZoneInfo) -> dict[str, int]:
    """Per local date: the seconds covered by MindfulSession records (overlaps once, split at midnight)."""
    def instant(text: str) -> datetime:
        return datetime.strptime(text, "%Y-%m-%d %H:%M:%S %z")
    spans = sorted((instant(r.get("startDate")), instant(r.get("endDate")))
                   for r in ET.parse(export).getroot().iter("Record")
                   if r.get("type") == "HKCategoryTypeIdentifierMindfulSession")
    merged: list[list[datetime]] = []
    for start, end in spans:
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    seconds: dict[str, int] = defaultdict(int)
    for start, end in merged:
        while start < end:
            local = start.astimezone(zone)
            midnight = datetime.combine(local.date() + timedelta(days=1), datetime.min.time(), zone)
            piece_end = min(end, midnight)
            seconds[local.date().isoformat()] += int((piece_end - start).total_seconds())
            start = piece_end
    return seconds


def blood_pressure(export: Path, zone: ZoneInfo) -> dict[str, dict[str, str]]:
    """Per local date: the mean systolic and diastolic of the distinct samples (a correlation's
    members repeat at top level: one sample), whole mmHg, and the readings — distinct (source,
    start, end) of either type."""
    distinct = {}
    for r in ET.parse(export).getroot().iter("Record"):
        kind = r.get("type", "").removeprefix("HKQuantityTypeIdentifierBloodPressure")
        if kind in ("Systolic", "Diastolic"):
            distinct[(kind, r.get("sourceName"), r.get("startDate"), r.get("endDate"), r.get("value"), r.get("unit"))] = r
    values: dict[str, dict[str, list[Decimal]]] = defaultdict(lambda: defaultdict(list))
    readings: dict[str, set] = defaultdict(set)
    for (kind, source, start, end, value, _), _ in distinct.items():
        day = datetime.strptime(start, "%Y-%m-%d %H:%M:%S %z").astimezone(zone).date().isoformat()
        values[day][kind].append(Decimal(value))
        readings[day].add((source, start, end))
    cells: dict[str, dict[str, str]] = defaultdict(dict)
    for day, kinds in values.items():
        for kind, column in (("Systolic", "bp_systolic_mmhg"), ("Diastolic", "bp_diastolic_mmhg")):
            if kinds[kind]:
                cells[day][column] = shown(str(sum(kinds[kind]) / len(kinds[kind])), 1, 0)
        cells[day]["bp_readings"] = str(len(readings[day]))
    return cells


class DailyTableTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        healthetl = binary()
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        cls.export = root / "export.xml"
        subprocess.run([healthetl, "sample", "--days", "45", "--seed", "7", "--out", str(cls.export)], check=True,
                       capture_output=True, timeout=300)
        cls.out = root / "out"
        subprocess.run([healthetl, "run", "--quiet", "--pipeline", str(REPO / "Pipelines/default.json"), "--out",
                        str(cls.out), str(cls.export)], check=True, capture_output=True, timeout=600)
        cls.daily = csv_rows(cls.out / "daily.csv")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def expected(self) -> dict[str, dict[str, str]]:
        """Per date, per column: the value worked out from the other outputs."""
        cells: dict[str, dict[str, str]] = defaultdict(dict)
        for column, (job, option, scale, places) in STATISTICS.items():
            for row in csv_rows(self.out / "stats" / f"{job}.csv"):
                if row[option] != "":
                    cells[row["date"]][column] = shown(row[option], scale, places)
        for row in csv_rows(self.out / "sleep_daily.csv"):
            for column, source in SLEEP.items():
                if row[source] != "":
                    cells[row["date"]][column] = shown(row[source], 1 / Decimal(3600), 2)
            # The instants are already on the run zone's clock: cut to the minute.
            for column, source in (("bedtime", "sleep_start"), ("wake_up", "sleep_end")):
                if row[source] != "":
                    cells[row["date"]][column] = row[source][:16].replace("T", " ")
        workouts: dict[str, list[dict[str, str]]] = defaultdict(list)
        for row in csv_rows(self.out / "workouts.csv"):
            workouts[row["local_time"][:10]].append(row)
        for day, rows in workouts.items():
            cells[day]["workouts"] = str(len(rows))
            durations = [Decimal(r["duration_s"]) for r in rows if r["duration_s"] != ""]
            energies = [Decimal(r["energy_kcal"]) for r in rows if r["energy_kcal"] != ""]
            if durations:
                cells[day]["workout_min"] = shown(str(sum(durations)), 1 / Decimal(60), 0)
            if energies:
                cells[day]["workout_kcal"] = shown(str(sum(energies)), 1, 0)
        for day, seconds in mindful_seconds(self.export, run_zone(self.out)).items():
            cells[day]["mindful_min"] = shown(str(seconds), 1 / Decimal(60), 0)
        for day, values in blood_pressure(self.export, run_zone(self.out)).items():
            cells[day].update(values)
        for element in ET.parse(self.export).getroot().iter("ActivitySummary"):
            day = element.get("dateComponents")
            kilojoules = element.get("activeEnergyBurnedUnit") == "kJ"
            for column, attribute in RINGS.items():
                text = element.get(attribute)
                if text is None:
                    continue
                scale = 1 / Decimal("4.184") if kilojoules and column.startswith("move") else 1
                cells[day][column] = shown(text, scale, 0)
        return cells

    def test_every_cell_is_the_value_of_its_output(self):
        expected = self.expected()
        self.assertGreater(len(self.daily), 40)
        columns = list(self.daily[0].keys())
        self.assertEqual(columns[0], "date")
        checked = 0
        for row in self.daily:
            want = expected.get(row["date"], {})
            for column in columns[1:]:
                with self.subTest(date=row["date"], column=column):
                    got = row[column]
                    if got != "":
                        got = canonical(got) if column not in ("bedtime", "wake_up") else got
                    self.assertEqual(got, want.get(column, ""))
                    checked += 1 if got != "" else 0
        # Every source kind actually reached the table.
        filled = {column for row in self.daily for column in columns if row[column] != ""}
        for column in ["steps", "distance_km", "asleep_h", "bedtime", "workouts", "workout_min", "move_kcal",
                       "stand_goal_h", "hr_max_bpm", "resting_hr_bpm", "swim_distance_m", "body_mass_kg", "mindful_min"]:
            self.assertIn(column, filled)
        self.assertGreater(checked, 500)

    def test_dates_are_continuous_and_cover_every_date_with_data(self):
        days = [date.fromisoformat(row["date"]) for row in self.daily]
        self.assertEqual(days, [days[0] + timedelta(days=n) for n in range(len(days))])
        with_data = sorted(self.expected())
        self.assertEqual((days[0].isoformat(), days[-1].isoformat()), (with_data[0], with_data[-1]))

    def test_columns_carry_their_units_and_values_are_in_shortest_form(self):
        columns = list(self.daily[0].keys())
        for column in columns:
            if column not in ("date", "steps", "flights", "workouts", "bedtime", "wake_up", "swim_strokes", "bp_readings", "bmi"):
                self.assertRegex(column, r"_(km|kcal|min|h|bpm|ms|kg|m|per_min|ml_kg_min|mmhg|mg_dl|g|fraction|kmh|cm|dba)$")
        for row in self.daily:
            for column in columns[1:]:
                value = row[column]
                if value and column not in ("bedtime", "wake_up"):
                    self.assertEqual(value, canonical(value), f"{column} {value} is not in shortest form")
                    self.assertNotIn("e", value)


class RealNightsWithoutStagesTests(unittest.TestCase):
    """bwassim's Garmin Connect + iPhone export: sleep without stages, 47 nights of only time in bed."""

    EXPORT = real_fixtures() / "bwassim__Health-Data-Analysis/data/export.zip"

    @classmethod
    def setUpClass(cls):
        healthetl = binary()
        if not cls.EXPORT.exists():
            raise unittest.SkipTest(f"{cls.EXPORT} is absent (real fixtures are not beside this checkout)")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.out = Path(cls.tmp.name) / "out"
        subprocess.run([healthetl, "run", "--quiet", "--pipeline", str(REPO / "Pipelines/default.json"), "--no-workbook",
                        "--out", str(cls.out), str(cls.EXPORT)],
                       check=True, capture_output=True, timeout=600)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_zero_where_nothing_was_measured(self):
        nights = {row["date"]: row for row in csv_rows(self.out / "sleep_daily.csv")}
        daily = {row["date"]: row for row in csv_rows(self.out / "daily.csv")}
        self.assertEqual(len(nights), 119)
        for day, night in nights.items():
            with self.subTest(date=day):
                # No source records stages: every stage cell is empty in both files.
                for column, source in SLEEP.items():
                    if column not in ("asleep_h", "in_bed_h"):
                        self.assertEqual((night[source], daily[day][column]), ("", ""))
                # Asleep is empty exactly on the nights with only time in bed, and never 0.
                self.assertEqual(night["asleep_s"] == "", night["sources"] == "")
                self.assertEqual(daily[day]["asleep_h"] == "", night["asleep_s"] == "")
                self.assertNotIn("0", (night["asleep_s"], daily[day]["asleep_h"]))
                self.assertTrue(night["in_bed_s"] != "" or night["asleep_s"] != "", "a night of nothing")
        self.assertEqual(sum(1 for night in nights.values() if night["asleep_s"] == ""), 47)


if __name__ == "__main__":
    unittest.main()


class RealMindfulMinutesTests(unittest.TestCase):
    """`mindful_min` on the real exports that hold MindfulSession records, worked out by hand."""

    # export, date, minutes: Headspace 05:33:59–05:51:56 is 1077 s (17.95 min) and 14:43:53–15:00:31
    # 998 s (16.63 min); Breathe 15:55–16:00 is 300 s; a session typed into Health 03:46–06:46 is 3 h.
    CASES = [
        ("paulstaab__healthieR/inst/example_data/Export.zip", "2016-10-17", "18"),
        ("paulstaab__healthieR/inst/example_data/Export.zip", "2016-10-20", "17"),
        ("grll__apple-health-landing-zone/data/export.xml", "2025-05-28", "5"),
        ("rgosdin__docs/export.zip", "2019-06-16", "180"),
    ]

    def test_the_sessions_of_each_date_in_whole_minutes(self):
        healthetl = binary()
        for export in sorted({case[0] for case in self.CASES}):
            path = real_fixtures() / export
            if not path.exists():
                self.skipTest(f"{path} is absent (real fixtures are not beside this checkout)")
            with tempfile.TemporaryDirectory() as tmp, self.subTest(export=export):
                out = Path(tmp) / "out"
                subprocess.run([healthetl, "run", "--quiet", "--pipeline", str(REPO / "Pipelines/default.json"),
                                "--no-workbook", "--out", str(out), str(path)],
                               check=True, capture_output=True, timeout=600)
                daily = csv_rows(out / "daily.csv")
                filled = {row["date"]: row["mindful_min"] for row in daily if row["mindful_min"] != ""}
                want = {day: minutes for name, day, minutes in self.CASES if name == export}
                self.assertEqual(filled, want)
