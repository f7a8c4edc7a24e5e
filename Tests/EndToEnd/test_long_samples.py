"""Memory does not depend on one sample's span: the release binary on exports holding one very
long record, with its peak resident set read from the kernel (wait4) for that process alone.

A record may last up to 366 days (Pipelines/docs/input.md, "Bad input"); within that, statistics
hand a long sample out bucket by bucket, so per-minute buckets of a year-long sample are written
one at a time (before, one row per bucket was held: about 300 MB for this year). Longer records are
rejected as `implausible span` and cost nothing.

The memory bound holds for the release build: `e2e.binary(release=True)` is `HEALTHETL_BIN`, else the
release build, never the debug build (the class skips without one).
"""

import csv
import json
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows  # noqa: E402

# A run of a tiny export stays well under this; holding one row per minute of a year does not.
RSS_BOUND_MB = 150

# Runs argv[2:] with a timeout of argv[1] seconds and prints "<peak RSS in KB> <exit code>", or
# "timeout -". A child's peak RSS starts from its parent's high-water mark (the kernel carries it
# over fork and exec), so the test process, which reads large tables, must not be that parent: this
# small interpreter is, and what it prints is the binary's own peak.
MEASURE = """
import os, sys, time
limit = time.monotonic() + float(sys.argv[1])
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.argv[2], sys.argv[2:])
while True:
    done, status, usage = os.wait4(pid, os.WNOHANG)
    if done == pid:
        print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
        break
    if time.monotonic() > limit:
        os.kill(pid, 9)
        os.wait4(pid, 0)
        print("timeout -")
        break
    time.sleep(0.02)
"""


def export(records: list[str]) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<HealthData locale="en_US">\n'
        ' <ExportDate value="2025-01-02 10:00:00 +0000"/>\n'
        + "\n".join(" " + r for r in records)
        + "\n</HealthData>\n"
    )


def record(kind: str, unit: str, value: str, start: str, end: str, source: str = "Watch") -> str:
    return (
        f'<Record type="HKQuantityTypeIdentifier{kind}" sourceName="{source}" unit="{unit}" '
        f'creationDate="{start}" startDate="{start}" endDate="{end}" value="{value}"/>'
    )


class LongSampleTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary = binary(release=True)

    def setUp(self):
        tmp = tempfile.TemporaryDirectory(prefix="long-samples-")
        self.addCleanup(tmp.cleanup)
        self.dir = Path(tmp.name)

    def pipeline(self, jobs: list[dict]) -> Path:
        path = self.dir / "pipeline.json"
        path.write_text(json.dumps({"version": 1, "name": "long", "jobs": jobs}), encoding="utf-8")
        return path

    def run_with_rusage(self, xml: str, pipeline: Path, timeout: float = 120):
        """Runs `healthetl run` under `MEASURE`; returns (seconds, peak RSS in MB, run.json, out dir)."""
        source = self.dir / "export.xml"
        source.write_text(xml, encoding="utf-8")
        out = self.dir / "out"
        # No output budget: these exports are a few hundred bytes whose long samples legitimately
        # give a row per minute (a year: 67 MB), and what is measured here is memory. The budget
        # that stops such an export by default is tested in test_output_budget.py.
        args = ["run", "--quiet", "--tz", "UTC", "--output-budget", "0", "--pipeline", str(pipeline), "--out",
                str(out), str(source)]
        started = time.monotonic()
        measured = subprocess.run(
            [sys.executable, "-c", MEASURE, str(timeout), self.binary, *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout + 30,
        )
        seconds = time.monotonic() - started
        self.assertEqual(measured.returncode, 0, measured.stderr)
        verdict, value = measured.stdout.split()
        self.assertNotEqual(verdict, "timeout", f"healthetl run did not finish in {timeout} s")
        self.assertEqual(value, "0", f"healthetl run exited {value}: {measured.stderr}")
        report = json.loads((out / "run.json").read_text(encoding="utf-8"))
        return seconds, int(verdict) / 1024, report, out

    def test_a_year_long_sample_per_minute_is_written_one_bucket_at_a_time(self):
        # 2024 is a leap year: 2024-01-01 to 2025-01-01 is 366 days, the longest record accepted,
        # and 527,040 minutes. Per minute: twavg 72 (the sample holds its value to its end),
        # duration 60 s, sum 1 (527,040 steps, one a minute); count 1 in the first minute only.
        start, end = "2024-01-01 00:00:00 +0000", "2025-01-01 00:00:00 +0000"
        xml = export(
            [
                record("HeartRate", "count/min", "72", start, end),
                record("StepCount", "count", "527040", start, end, source="Phone"),
            ]
        )
        pipeline = self.pipeline(
            [
                {"name": "hr", "kind": "statistics", "type": "HeartRate", "interval": "1m",
                 "options": ["twavg", "duration", "count"]},
                {"name": "steps", "kind": "statistics", "type": "StepCount", "interval": "1m",
                 "options": ["sum", "duration"], "separateBySource": True},
            ]
        )
        seconds, peak_mb, report, out = self.run_with_rusage(xml, pipeline)
        self.assertEqual(report["rejected"], {})
        self.assertLess(peak_mb, RSS_BOUND_MB, f"peak RSS {peak_mb:.0f} MB")
        rows = csv_rows(out / "stats" / "hr.csv")
        self.assertEqual(len(rows), 527_040)
        self.assertEqual(
            rows[0],
            {"local_time": "2024-01-01 00:00:00", "type": "HeartRate", "bucket_start": "2024-01-01T00:00:00+00:00",
             "bucket_end": "2024-01-01T00:01:00+00:00", "twavg": "72", "duration": "60", "count": "1"},
        )
        self.assertEqual(rows[-1]["bucket_start"], "2024-12-31T23:59:00+00:00")
        self.assertEqual(rows[-1]["bucket_end"], "2025-01-01T00:00:00+00:00")
        self.assertEqual({(r["twavg"], r["duration"]) for r in rows}, {("72", "60")})
        self.assertEqual(sum(int(r["count"]) for r in rows), 1)
        steps = csv_rows(out / "stats" / "steps.csv")
        self.assertEqual(len(steps), 527_040)
        self.assertEqual({(r["source"], r["sum"], r["duration"]) for r in steps}, {("Phone", "1", "60")})
        print(f"\n  a year per minute: {seconds:.1f} s, peak RSS {peak_mb:.0f} MB", end="")

    def test_records_from_year_0_to_9999_are_rejected_in_the_shipped_pipelines(self):
        # The reproducers: one HeartRate record through Pipelines/heart-rate.json (87.7 M hourly
        # buckets) and one StepCount record through the default pipeline (3.65 M days). A record
        # from year 0 is an implausible date; one from 2000 to 9999 an implausible span. One
        # plausible record keeps the run from having nothing usable (exit 65).
        for kind, unit, pipeline in [
            ("HeartRate", "count/min", REPO / "Pipelines" / "heart-rate.json"),
            ("StepCount", "count", REPO / "Pipelines" / "default.json"),
        ]:
            with self.subTest(kind):
                xml = export([
                    record(kind, unit, "72", "0000-01-01 00:00:00 +0000", "9999-12-31 23:59:59 +0000"),
                    record(kind, unit, "72", "2000-01-01 00:00:00 +0000", "9999-12-31 23:59:59 +0000"),
                    record(kind, unit, "72", "2024-01-01 10:00:00 +0000", "2024-01-01 10:00:00 +0000"),
                ])
                seconds, peak_mb, report, out = self.run_with_rusage(xml, pipeline, timeout=30)
                self.assertEqual(report["rejected"], {"implausible date": 1, "implausible span": 1})
                self.assertEqual(report["rejectedExamples"]["implausible date"][0]["line"], 4)
                example = report["rejectedExamples"]["implausible span"][0]
                self.assertEqual(example["line"], 5)
                self.assertIn(f"{kind} lasts 252455615999 s, more than 366 days", example["detail"])
                self.assertLess(peak_mb, RSS_BOUND_MB, f"peak RSS {peak_mb:.0f} MB")
                self.assertLess(seconds, 20)
                # Only the plausible record's bucket: a header and at most one row per table.
                for table in (out / "stats").glob("*.csv"):
                    with open(table, newline="", encoding="utf-8") as f:
                        self.assertLessEqual(len(list(csv.reader(f))), 2, f"{table.name} has rows")
                self.assertTrue(any((out / "stats").glob("*.csv")))


if __name__ == "__main__":
    unittest.main()
