"""Memory of a run against its number of workouts (issue 31): the release binary over exports of
N tiny workouts (N = 10k, 20k, 40k, 80k) and of N full ones (5k to 40k), with each run's peak
resident set read from the kernel (wait4) for that process alone, as in test_long_samples.py.

What is asserted is the growth of the peak per 100,000 workouts (the slope of a least-squares line
through the four peaks), never a time: a workout's full row lives only while it is written, and
the parsed workouts wait in a scratch file, a small key each in memory (Pipelines/docs/workouts.md,
"Memory"); what stays per workout is that key and the id of its server record (the summary for
the other marts and the record wait in scratch too, until they are read). Tiny workouts measure
what grows whatever a workout holds; full ones (a Watch's run with its metadata, events and
statistics) what a parsed workout holds. Before issue 31, the mart held every parsed workout and
every full row at once: about 360 MB per 100k workouts, so a 300,000-workout export passed a
700 MB limit and was killed.

The memory bound holds for the release build: `e2e.binary(release=True)` is `HEALTHETL_BIN`, else the
release build, never the debug build (the class skips without one).
"""

import datetime
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary  # noqa: E402
from test_long_samples import MEASURE  # noqa: E402

SIZES = [10_000, 20_000, 40_000, 80_000]

# MB of peak RSS per 100,000 workouts; see the comment at the assertion.
SLOPE_BOUND_MB = 100


def tiny_workouts(count: int) -> str:
    """`count` distinct 20-minute runs of 3 to 6 km (none too fast: no oddity per workout) of one
    source, one every half hour from 2013 on (200,000 end in 2024, before the export date; about
    340 bytes each, like the exports of issue 31)."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<HealthData locale="en_US">',
             ' <ExportDate value="2025-01-02 10:00:00 +0000"/>']
    base = 1_356_998_400  # 2013-01-01 00:00:00 UTC
    def stamp(seconds: int) -> str:
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S +0000")

    for index in range(count):
        start = base + index * 1800
        lines.append(
            f' <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="20" durationUnit="min" '
            f'totalDistance="{3 + index % 4}" totalDistanceUnit="km" totalEnergyBurned="{300 + index % 50}" '
            f'totalEnergyBurnedUnit="kcal" sourceName="Watch" sourceVersion="10.0" '
            f'creationDate="{stamp(start + 1200)}" startDate="{stamp(start)}" endDate="{stamp(start + 1200)}"/>')
    lines.append("</HealthData>\n")
    return "\n".join(lines)


FULL_SIZES = [5_000, 10_000, 20_000, 40_000]

# MB of peak RSS per 100,000 full workouts; see the comment at the assertion.
FULL_SLOPE_BOUND_MB = 140


def full_workouts(count: int) -> str:
    """`count` runs as a Watch writes them: a device, six metadata entries, pause, resume, two
    segments and two laps, five statistics (about 2.3 KB each, a parsed workout about 2 KB)."""
    def stamp(seconds: int) -> str:
        return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S +0000")

    device = ("&lt;&lt;HKDevice: 0x1&gt;, name:Apple Watch, manufacturer:Apple Inc., model:Watch, "
              "hardware:Watch6,2, software:9.1&gt;")
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<HealthData locale="en_US">',
             ' <ExportDate value="2025-01-02 10:00:00 +0000"/>']
    base = 1_356_998_400
    for index in range(count):
        start = base + index * 1800
        end = start + 1200
        lines.append(
            f' <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="20" durationUnit="min" '
            f'sourceName="Watch" sourceVersion="10.0" device="{device}" creationDate="{stamp(end)}" '
            f'startDate="{stamp(start)}" endDate="{stamp(end)}">')
        for key, value in [("HKIndoorWorkout", "0"), ("HKTimeZone", "Europe/Paris"),
                           ("HKElevationAscended", f"{1000 + index % 500} cm"), ("HKWeatherTemperature", "60 degF"),
                           ("HKWeatherHumidity", "5500 %"), ("HKAverageMETs", "9.1 kcal/hr·kg")]:
            lines.append(f'  <MetadataEntry key="{key}" value="{value}"/>')
        for minute, kind in enumerate(["Pause", "Resume", "Segment", "Segment", "Lap", "Lap"], start=1):
            lines.append(f'  <WorkoutEvent type="HKWorkoutEventType{kind}" date="{stamp(start + 60 * minute)}" '
                         f'duration="{60 if kind == "Segment" else 0}" durationUnit="s"/>')
        for kind, unit, values in [("ActiveEnergyBurned", "kcal", f'sum="{300 + index % 50}"'),
                                   ("DistanceWalkingRunning", "km", f'sum="{3 + index % 4}"'),
                                   ("HeartRate", "count/min", 'average="140" minimum="100" maximum="170"'),
                                   ("RunningPower", "W", 'average="250" minimum="100" maximum="400"'),
                                   ("StepCount", "count", 'sum="3000"')]:
            lines.append(f'  <WorkoutStatistics type="HKQuantityTypeIdentifier{kind}" startDate="{stamp(start)}" '
                         f'endDate="{stamp(end)}" {values} unit="{unit}"/>')
        lines.append(' </Workout>')
    lines.append("</HealthData>\n")
    return "\n".join(lines)


def slope(sizes: list[int], peaks: list[float]) -> float:
    """MB per 100,000 workouts: the slope of the least-squares line through the peaks."""
    xs = [count / 100_000 for count in sizes]
    mean_x, mean_y = sum(xs) / len(xs), sum(peaks) / len(peaks)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, peaks)) / sum((x - mean_x) ** 2 for x in xs)


class WorkoutMemoryTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary = binary(release=True)

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="workout-memory-")
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def peak_mb(self, count: int, timeout: float = 120, export=tiny_workouts) -> float:
        """Runs the default pipeline over `count` workouts of `export` (tiny ones by default);
        returns the peak RSS in MB after checking that every workout was written."""
        source = self.dir / f"export-{count}.xml"
        source.write_text(export(count), encoding="utf-8")
        out = self.dir / f"out-{count}"
        args = ["run", "--quiet", "--tz", "UTC", "--output-budget", "0", "--pipeline",
                str(REPO / "Pipelines/default.json"), "--out", str(out), str(source)]
        measured = subprocess.run([sys.executable, "-c", MEASURE, str(timeout), self.binary, *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout + 30)
        self.assertEqual(measured.returncode, 0, measured.stderr)
        verdict, value = measured.stdout.split()
        self.assertNotEqual(verdict, "timeout", f"healthetl run did not finish in {timeout} s")
        self.assertEqual(value, "0", f"healthetl run exited {value}: {measured.stderr}")
        with (out / "workouts.csv").open(encoding="utf-8") as written:
            self.assertEqual(sum(1 for _ in written) - 1, count)
        source.unlink()
        return int(verdict) / 1024

    def test_peak_memory_grows_little_with_the_number_of_workouts(self):
        peaks = [self.peak_mb(count) for count in SIZES]
        growth = slope(SIZES, peaks)
        figures = ", ".join(f"{count // 1000}k: {peak:.0f} MB" for count, peak in zip(SIZES, peaks))
        print(f"\n  peak RSS {figures}; {growth:.1f} MB per 100k workouts", end="")
        # At first the mart held every parsed workout and every full row (with its laps, splits,
        # activity rows and server record) at once: 359 MB per 100k (release, 208 MB at 40k, 639 MB
        # at 160k; 369 at these sizes). Then a row lived only while it was written, but the parsed
        # workouts (about 1 KB each) waited in memory until `finish` and the delivery delta and
        # state were built as one text each: 79/109/164/265 MB at 10k/20k/40k/80k, 265 MB per 100k
        # (main 8b7ce45). Now the parsed workouts wait in scratch, the delivery files are written
        # a record at a time and route totals are kept only for workouts with route points:
        # 64/74/102/156 MB, 132 MB per 100k (148 on another run). With the server records in
        # scratch too, read from there into the delta and the state's outbox: 61/72/95/142 MB,
        # 115 per 100k (138 for the code before on the same machine). With the summaries in
        # scratch, the report's page streamed, route totals and split requests only where there is
        # something to total or cut: 57/60/74/88 MB, 45 per 100k (49 on another run). What still
        # grows is the key, the identity that finds copies and the record's id (150-450 bytes).
        # 100 leaves room for a busy machine and fails every code before (132 and more).
        self.assertLess(growth, SLOPE_BOUND_MB, figures)

    def test_what_a_workout_holds_waits_in_scratch(self):
        peaks = [self.peak_mb(count, export=full_workouts) for count in FULL_SIZES]
        growth = slope(FULL_SIZES, peaks)
        figures = ", ".join(f"{count // 1000}k: {peak:.0f} MB" for count, peak in zip(FULL_SIZES, peaks))
        print(f"\n  peak RSS {figures}; {growth:.1f} MB per 100k full workouts", end="")
        # Parsed workouts held until their rows were built cost what they hold: 78/106/163/272 MB
        # at 5k/10k/20k/40k, 554 MB per 100k (main 8b7ce45), and still 74/95/139/222 MB, 424 per
        # 100k, with the delivery files written a record at a time. With the workouts in scratch
        # and a key each in memory: 60/65/81/118 MB, 168 per 100k; with the server records in
        # scratch too, 60/64/78/110 MB, 148 per 100k; with the summaries in scratch and the
        # report streamed, 61/63/73/85 MB, 60-69 per 100k. 140 leaves room for a busy machine and
        # fails every code before (148 and more).
        self.assertLess(growth, FULL_SLOPE_BOUND_MB, figures)


if __name__ == "__main__":
    unittest.main()
