"""Beat-to-beat heart rate and workout activities, recomputed here from the XML alone.

Two weeks of `healthetl sample --profile multisport` (HRV readings with beat lists in the en_US
12-hour form, two triathlons with five `WorkoutActivity` legs each, runs with one) go through
`Pipelines/workouts.json` and `Pipelines/heart-rate.json`. This file reads the export with
ElementTree and works out, by the rules of Pipelines/docs/beats.md ("Beat-to-beat heart rate"; Pipelines/docs/workouts.md, "Multi-sport workouts"), every row of `heart_beats.csv`, `hrv_readings.csv` and
`workout_activities.csv`: ids (UUID v5), instants, RR intervals, SDNN and RMSSD, each leg's
statistics — and the workout row's totals, which must be its own statistics, once.

The binary is `HEALTHETL_BIN` (set by `make test-e2e`), else the debug build.
"""

from __future__ import annotations

import math
import re
import subprocess
import tempfile
import sys
import unittest
import uuid
import xml.etree.ElementTree as ET
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows  # noqa: E402

ZONE = ZoneInfo("Europe/Berlin")  # the sample's HKTimeZone, so the run's zone
TYPE = "HKWorkoutActivityType"
STATISTIC = "HKQuantityTypeIdentifier"
METERS = {"m": 1, "km": 1000}


def instant(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%d %H:%M:%S %z")


def iso(moment: datetime) -> str:
    """ISO 8601 in the run's zone, as the instant columns write it."""
    return moment.astimezone(ZONE).isoformat()


def clock(text: str) -> int:
    """Milliseconds since midnight of `7:47:41.86 PM` (the generator writes only this form)."""
    hour, minute, second, fraction, half = re.fullmatch(r"(\d{1,2}):(\d\d):(\d\d)\.(\d\d) (AM|PM)", text).groups()
    hour = int(hour) % 12 + (12 if half == "PM" else 0)
    return ((hour * 60 + int(minute)) * 60 + int(second)) * 1000 + int(fraction) * 10


def place(milliseconds: int, start: datetime) -> datetime:
    """The clock time on the start's local date, the day before or after: the one nearest the start."""
    local = start.astimezone(ZONE)
    candidates = []
    for days in (-1, 0, 1):
        day = local.date() + timedelta(days=days)
        wall = datetime(day.year, day.month, day.day) + timedelta(milliseconds=milliseconds)
        candidates.append(wall.replace(tzinfo=ZONE))
    return min(candidates, key=lambda moment: abs((moment - start).total_seconds()))


def close(testcase: unittest.TestCase, text: str, value: float | None, places: int, label: str) -> None:
    if value is None:
        testcase.assertEqual(text, "", label)
    else:
        testcase.assertAlmostEqual(float(text), value, delta=0.6 * 10 ** -places, msg=label)


class BeatsAndActivitiesTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.TemporaryDirectory(prefix="healthetl-beats-")
        root = Path(cls.folder.name)
        cls.export = root / "export.xml"
        subprocess.run([binary(), "sample", "--profile", "multisport", "--days", "14", "--seed", "1", "--out",
                        str(cls.export)], check=True, capture_output=True)
        cls.out = root / "out"
        subprocess.run([binary(), "run", "--quiet", "--pipeline", str(REPO / "Pipelines/workouts.json"), "--pipeline",
                        str(REPO / "Pipelines/heart-rate.json"), "--out", str(cls.out), str(cls.export)],
                       check=True, capture_output=True)
        cls.document = ET.parse(cls.export).getroot()

    @classmethod
    def tearDownClass(cls):
        cls.folder.cleanup()

    def test_every_beat_and_reading(self):
        beats = csv_rows(self.out / "heart_beats.csv")
        readings = csv_rows(self.out / "hrv_readings.csv")
        expected_beats, expected_readings = [], []
        for record in self.document.iter("Record"):
            entries = record.findall("HeartRateVariabilityMetadataList/InstantaneousBeatsPerMinute")
            if not entries:
                continue
            start, end = instant(record.get("startDate")), instant(record.get("endDate"))
            name = (f"healthetl:sample:HeartRateVariabilitySDNN|{record.get('sourceName')}|{int(start.timestamp())}|"
                    f"{int(end.timestamp())}|{record.get('value')}|{record.get('unit')}")
            record_id = str(uuid.uuid5(uuid.NAMESPACE_URL, name))
            intervals, differences, previous, previous_interval, from_times = [], [], None, None, 0
            for number, entry in enumerate(entries, 1):
                moment = place(clock(entry.get("time")), start)
                bpm = int(entry.get("bpm"))
                interval, source = 60_000 / bpm, "bpm"
                if previous is not None:
                    gap = round((moment - previous).total_seconds() * 1000)
                    if abs(gap - 60_000 / bpm) <= 10 + 30_000 / bpm ** 2:
                        interval, source = gap, "times"
                        from_times += 1
                        if previous_interval is not None:
                            differences.append(interval - previous_interval)
                intervals.append(interval)
                previous, previous_interval = moment, interval
                expected_beats.append((record_id, str(number), moment, bpm, interval, source))
            mean = sum(intervals) / len(intervals)
            sdnn = math.sqrt(sum((x - mean) ** 2 for x in intervals) / (len(intervals) - 1))
            rmssd = math.sqrt(sum(d * d for d in differences) / len(differences)) if differences else None
            expected_readings.append((record_id, start, float(record.get("value")), sdnn, rmssd, len(entries),
                                      from_times, len(differences)))
        self.assertGreater(len(expected_readings), 20)
        self.assertEqual(len(beats), len(expected_beats))
        for row, (record_id, number, moment, bpm, interval, source) in zip(beats, expected_beats):
            label = f"{record_id} beat {number}"
            self.assertEqual((row["record_id"], row["beat"], row["bpm"], row["rr_from"]),
                             (record_id, number, str(bpm), source), label)
            local = moment.astimezone(ZONE)
            self.assertEqual(row["time"], local.isoformat(timespec="milliseconds"), label)
            self.assertEqual(row["local_time"], local.strftime("%Y-%m-%d %H:%M:%S"), label)
            close(self, row["rr_ms"], interval, 4, label)
        self.assertEqual(len(readings), len(expected_readings))
        for row, (record_id, start, apple, sdnn, rmssd, count, from_times, pairs) in zip(readings, expected_readings):
            self.assertEqual((row["record_id"], row["start"], row["beats"], row["intervals"]),
                             (record_id, iso(start), str(count), str(count)))
            self.assertEqual((row["intervals_from_times"], row["successive_pairs"]), (str(from_times), str(pairs)))
            self.assertEqual((row["beats_unread"], row["beats_repeated"], row["beats_outside"]), ("0", "0", "0"))
            close(self, row["apple_sdnn_ms"], apple, 4, record_id)
            close(self, row["sdnn_ms"], sdnn, 4, record_id)
            close(self, row["rmssd_ms"], rmssd, 4, record_id)

    def test_every_activity_and_the_workouts_totals(self):
        activities = csv_rows(self.out / "workout_activities.csv")
        workouts = {row["id"]: row for row in csv_rows(self.out / "workouts.csv")}
        expected = []
        triathlons = 0
        for workout in self.document.iter("Workout"):
            start, end = instant(workout.get("startDate")), instant(workout.get("endDate"))
            name = f"healthetl:workout:{workout.get('sourceName')}|{workout.get('workoutActivityType')}|" \
                   f"{int(start.timestamp())}|{int(end.timestamp())}"
            workout_id = str(uuid.uuid5(uuid.NAMESPACE_URL, name)).upper()
            legs = workout.findall("WorkoutActivity")
            if workout.get("workoutActivityType") == TYPE + "SwimBikeRun":
                triathlons += 1
                self.assertEqual(len(legs), 5)
                # The workout's own distance statistics, once: the legs' repeat them.
                own = sum(float(s.get("sum")) * METERS[s.get("unit")] for s in workout.findall("WorkoutStatistics")
                          if s.get("type").startswith(STATISTIC + "Distance"))
                close(self, workouts[workout_id]["distance_m"], own, 5, workout_id)
            for number, leg in enumerate(legs, 1):
                statistics = {s.get("type")[len(STATISTIC):]: s for s in leg.findall("WorkoutStatistics")}
                distances = [float(s.get("sum")) * METERS[s.get("unit")] for t, s in statistics.items()
                             if t.startswith("Distance")]
                heart = statistics.get("HeartRate")
                leg_start, leg_end = instant(leg.get("startDate")), instant(leg.get("endDate"))
                own_type = leg.get("workoutActivityType")
                expected.append({
                    "local_time": leg_start.astimezone(ZONE).strftime("%Y-%m-%d %H:%M:%S"),
                    "workout_id": workout_id, "activity": str(number), "uuid": leg.get("uuid"),
                    "activity_type": (own_type or workout.get("workoutActivityType"))[len(TYPE):],
                    "activity_type_from": "activity" if own_type else "workout",
                    "start": iso(leg_start), "end": iso(leg_end),
                    "elapsed_s": str(int((leg_end - leg_start).total_seconds())),
                    "duration_s": float(leg.get("duration")) * 60,
                    "distance_m": sum(distances) if distances else None,
                    "energy_kcal": float(statistics["ActiveEnergyBurned"].get("sum")),
                    "hr_avg": float(heart.get("average")), "hr_max": float(heart.get("maximum")),
                    "events": f"segment={len(leg.findall('WorkoutEvent'))}",
                })
        self.assertEqual(triathlons, 2)
        # The workouts table's order: start, then id.
        order = {row_id: index for index, row_id in enumerate(workouts)}
        expected.sort(key=lambda row: (order[row["workout_id"]], int(row["activity"])))
        self.assertEqual(len(activities), len(expected))
        for row, want in zip(activities, expected):
            label = f"{want['workout_id']} activity {want['activity']}"
            for column in ("local_time", "workout_id", "activity", "uuid", "activity_type", "activity_type_from",
                           "start", "end", "elapsed_s", "events"):
                self.assertEqual(row[column], want[column], f"{label} {column}")
            close(self, row["duration_s"], want["duration_s"], 3, label)
            close(self, row["distance_m"], want["distance_m"], 5, label)
            close(self, row["energy_kcal"], want["energy_kcal"], 4, label)
            close(self, row["hr_avg"], want["hr_avg"], 4, label)
            close(self, row["hr_max"], want["hr_max"], 4, label)
            self.assertEqual(row["hr_from"], "statistics", label)


if __name__ == "__main__":
    unittest.main()
