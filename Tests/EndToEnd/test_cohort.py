"""The cohort workflow (Pipelines/cohort), run for real: Snakemake with the local executor, then
through a one-node Slurm cluster on 127.0.0.1 brought up for the test and torn down by PID.

Run by `make test-cohort` (part of `make test-e2e` and `make test`), which builds the release
binary, the workflow's venv (.build/cohort-venv) and installs Slurm and munge where no Slurm is
configured. The Slurm part is skipped, with the reason, on a machine that has a Slurm of its own
or where the test is not root; the local-executor part always runs.
"""

from __future__ import annotations

import csv
import datetime
import fcntl
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from slurm_cluster import SlurmCluster, _pids_named  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
# Absolute (make passes them relative to the repository), but symbolic links kept: the venv's
# python is a link whose own path selects the venv.
BINARY = Path(os.path.abspath(os.environ.get("HEALTHETL_BIN", REPO / ".build" / "release" / "healthetl")))
COHORT_PYTHON = Path(os.path.abspath(os.environ.get("COHORT_PYTHON", REPO / ".build" / "cohort-venv" / "bin" / "python")))
LAUNCH = REPO / "Pipelines" / "cohort" / "launch.py"
SAMPLE = REPO / "SampleData" / "export.zip"
RUN_TIMEOUT = 240  # seconds for one workflow run; `timeout -s KILL` ends it and its children

try:
    import duckdb
except ImportError:  # pragma: no cover - reported as a skip with the way to run it
    duckdb = None

# The good exports of the test cohort: id -> (days, seed, zip?); the bundled sample is one more.
GOOD = {"p01": (20, 11, True), "p02": (26, 12, True), "p03": (23, 13, False)}
BAD = "p04-cut"  # a copy of p03's XML cut short: healthetl exits 65
EXPECTED_TABLES = {
    "sleep_daily": "sleep_daily.csv",
    "sleep_sessions": "sleep_sessions.csv",
    "workouts": "workouts.csv",
    "swim_laps": "swim_laps.csv",
    "workout_records": "workout_records.json",
}


def _terminated(signum, frame):
    # `timeout` (make test-cohort) sends SIGTERM first: unwind, so every finally block runs
    # and the test cluster is stopped by PID, instead of dying with its daemons still up.
    raise SystemExit(f"terminated by signal {signum}")


def setUpModule():
    signal.signal(signal.SIGTERM, _terminated)
    missing = [str(p) for p in (BINARY, COHORT_PYTHON) if not p.exists()]
    if missing or duckdb is None:
        raise unittest.SkipTest(
            "cohort tests need the release binary, the workflow venv and duckdb "
            f"(run `make test-cohort`); missing: {', '.join(missing) or 'duckdb'}"
        )
    global GENERATED
    GENERATED = Path(tempfile.mkdtemp(prefix="healthetl-cohort-exports-"))
    for pid, (days, seed, zipped) in GOOD.items():
        target = GENERATED / f"{pid}.{'zip' if zipped else 'xml'}"
        scratch = GENERATED / f"gen-{pid}"
        scratch.mkdir()
        produced = scratch / target.name
        args = [str(BINARY), "sample", "--days", str(days), "--seed", str(seed), "--out", str(produced)]
        subprocess.run(args + (["--zip"] if zipped else []), check=True, capture_output=True, timeout=60)
        produced.rename(target)  # without the workout-routes/ folder an .xml sample writes beside it
        shutil.rmtree(scratch)
    whole = (GENERATED / "p03.xml").read_bytes()
    (GENERATED / f"{BAD}.xml").write_bytes(whole[: len(whole) // 3])
    shutil.copy(SAMPLE, GENERATED / "sample.zip")
    # A different export to put in place of p02 in the incremental test.
    replacement = GENERATED / "gen-replacement"
    replacement.mkdir()
    subprocess.run(
        [str(BINARY), "sample", "--days", "31", "--seed", "99", "--zip", "--out", str(replacement / "p02.zip")],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip


def tearDownModule():
    shutil.rmtree(GENERATED, ignore_errors=True)


class CohortCase(unittest.TestCase):
    def setUp(self):
        self.work = Path(tempfile.mkdtemp(prefix="healthetl-cohort-"))
        self.addCleanup(shutil.rmtree, self.work, True)

    # ---- helpers -------------------------------------------------------------------------------

    def make_cohort(self, name="exports", ids=("p01", "p02", "p03", BAD, "sample")) -> Path:
        folder = self.work / name
        folder.mkdir()
        for pid in ids:
            source = next(GENERATED.glob(f"{pid}.*"))
            shutil.copy(source, folder / source.name)
        return folder

    def run_cohort(self, cohort, out, *args, executor="local", jobs=2, timeout=RUN_TIMEOUT, check=True):
        command = ["timeout", "-s", "KILL", str(timeout), str(COHORT_PYTHON), str(LAUNCH)]
        command += ["--cohort", str(cohort), "--out", str(out), "--executor", executor, "--jobs", str(jobs)]
        command += [str(a) for a in args]
        started = time.monotonic()
        result = subprocess.run(command, capture_output=True, text=True, start_new_session=True)
        self.elapsed = time.monotonic() - started
        if check and result.returncode != 0:
            self.fail(f"cohort run exited {result.returncode}:\n{result.stdout[-3000:]}\n{result.stderr[-5000:]}")
        return result

    def cohort_json(self, out) -> dict:
        return json.loads((Path(out) / "cohort" / "run.json").read_text())

    def tokens(self, out) -> dict:
        return {
            p.stem: json.loads(p.read_text())["token"] for p in sorted((Path(out) / ".cohort" / "status").glob("*.json"))
        }

    def assert_merged_matches_participants(self, out, included):
        """Every merged table, row for row and value for value, equals the participants' own files."""
        out = Path(out)
        summary = self.cohort_json(out)
        con = duckdb.connect()
        stats_jobs = sorted(p.stem for p in (out / "participants" / included[0] / "stats").glob("*.csv"))
        # One file per statistics job of the default pipeline each participant runs.
        default = json.loads((REPO / "Pipelines" / "default.json").read_text())
        self.assertEqual(stats_jobs, sorted(j["name"] for j in default["jobs"] if j["kind"] == "statistics"))
        tables = dict(EXPECTED_TABLES, **{f"stats/{job}": f"stats/{job}.csv" for job in stats_jobs})
        if (out / "participants" / included[0] / "daily.csv").exists():
            tables["daily"] = "daily.csv"  # written by healthetl versions that have a daily table
        self.assertEqual(sorted(summary["tables"]), sorted(tables))
        merged_files = sorted(str(p.relative_to(out / "cohort")) for p in (out / "cohort").rglob("*.parquet"))
        self.assertEqual(merged_files, sorted(f"{t}.parquet" for t in tables))
        for table, file in tables.items():
            parquet = out / "cohort" / f"{table}.parquet"
            columns = [row[0] for row in con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(parquet)]).fetchall()]
            self.assertEqual(columns[0], "participant", table)
            merged = con.execute("SELECT * FROM read_parquet(?)", [str(parquet)]).fetchall()
            expected_rows = []
            for pid in included:
                source = out / "participants" / pid / file
                if file.endswith(".json"):
                    records = json.loads(source.read_text())
                    header = list(records[0]) if records else columns[1:]
                    rows = [[r.get(c, "") for c in header] for r in records]
                else:
                    with open(source, newline="", encoding="utf-8") as handle:
                        reader = csv.reader(handle)
                        header = next(reader)
                        rows = list(reader)
                self.assertEqual(header, columns[1:], f"{table}: columns of {pid}")
                expected_rows += [[pid, *row] for row in rows]
                self.assertEqual(
                    summary["participants"][[p["participant"] for p in summary["participants"]].index(pid)]["rows"].get(
                        table, 0
                    ),
                    len(rows),
                    f"{table}: run.json row count of {pid}",
                )
            self.assertEqual(len(merged), len(expected_rows), f"{table}: rows")
            self.assertEqual(summary["tables"][table]["rows"], len(expected_rows))
            for number, (got, want) in enumerate(zip(merged, expected_rows)):
                for column, value, text in zip(columns, got, want):
                    self.assertTrue(
                        same_value(value, text), f"{table} row {number} {column}: parquet {value!r} vs file {text!r}"
                    )
        con.close()

    def query(self, sql, *params):
        con = duckdb.connect()
        try:
            return con.execute(sql, list(params)).fetchall()
        finally:
            con.close()


def same_value(value, text: str) -> bool:
    """A typed Parquet value against the text the participant's CSV (or JSON string) holds."""
    if text == "" or text is None:
        return value is None
    if isinstance(value, bool):
        return text == ("true" if value else "false")
    if isinstance(value, int):
        return int(text) == value
    if isinstance(value, float):
        return float(text) == value
    if isinstance(value, datetime.datetime) and value.tzinfo is None:
        # A local wall-clock column (`local_time`, daily `bedtime`): to the second or the minute.
        return text in (value.isoformat(sep=" "), value.isoformat(sep=" ", timespec="minutes"))
    if isinstance(value, (datetime.date, datetime.time)):
        return text == value.isoformat()
    return text == value


class LocalExecutorTests(CohortCase):
    def test_merges_every_good_export_and_reports_the_bad_one(self):
        cohort = self.make_cohort()
        out = self.work / "out"
        self.run_cohort(cohort, out)
        summary = self.cohort_json(out)
        by_id = {p["participant"]: p for p in summary["participants"]}
        self.assertEqual(sorted(by_id), sorted(["p01", "p02", "p03", BAD, "sample"]))
        self.assertEqual(
            {k: summary["totals"][k] for k in ("participants", "included", "ok", "unchanged", "bad_input")},
            {"participants": 5, "included": 4, "ok": 4, "unchanged": 0, "bad_input": 1},
        )
        bad = by_id[BAD]
        self.assertEqual((bad["status"], bad["exit_code"]), ("bad_input", 65))
        self.assertIn("ends too early", bad["message"])
        self.assertNotIn("rows", bad)
        self.assertFalse((out / "participants" / BAD / "run.json").exists())

        included = ["p01", "p02", "p03", "sample"]
        self.assert_merged_matches_participants(out, included)

        # Hand-picked values of the bundled sample (SampleData/README.md, Pipelines/README.md):
        # 17 workouts; merged steps 13,248 on 2024-03-18 and 10,336 on 2024-03-20.
        workouts = self.query("SELECT count(*) FROM read_parquet(?) WHERE participant = 'sample'", str(out / "cohort/workouts.parquet"))
        self.assertEqual(workouts, [(17,)])
        steps = self.query(
            "SELECT bucket_start, sum FROM read_parquet(?) WHERE participant = 'sample' ORDER BY bucket_start LIMIT 3",
            str(out / "cohort/stats/steps-per-day.parquet"),
        )
        self.assertEqual(steps[0], ("2024-03-18T00:00:00+01:00", 13248.0))
        self.assertEqual(steps[2], ("2024-03-20T00:00:00+01:00", 10336.0))
        types = dict(
            (name, kind) for name, kind, *_ in self.query("DESCRIBE SELECT * FROM read_parquet(?)", str(out / "cohort/sleep_daily.parquet"))
        )
        self.assertEqual((types["date"], types["asleep_s"], types["sleep_start"]), ("DATE", "BIGINT", "VARCHAR"))
        records = self.query("DESCRIBE SELECT * FROM read_parquet(?)", str(out / "cohort/workout_records.parquet"))
        self.assertEqual([kind for _, kind, *_ in records], ["VARCHAR"] * 8)  # participant + seven strings

        # The Me element is neither extracted nor merged by default.
        self.assertFalse((out / "cohort" / "me.parquet").exists())
        self.assertEqual(list((out / "participants").rglob("Me.csv")), [])
        # First run: every record of every participant is new.
        for pid in included:
            folder = out / "participants" / pid
            self.assertEqual(
                json.loads((folder / "workout_records.new.json").read_text())["records"],
                json.loads((folder / "workout_records.json").read_text()),
            )

    def test_reruns_only_what_changed_keyed_by_content(self):
        cohort = self.make_cohort(ids=("p01", "p02", "p03"))
        out = self.work / "out"
        self.run_cohort(cohort, out)
        first = self.tokens(out)
        version = self.cohort_json(out)["version"]
        old_records = json.loads((out / "participants/p02/workout_records.json").read_text())

        # Nothing changed: nothing runs, the dataset is not rewritten.
        result = self.run_cohort(cohort, out)
        self.assertIn("Nothing to be done", result.stdout + result.stderr)
        self.assertEqual((self.tokens(out), self.cohort_json(out)["version"]), (first, version))

        # Touched (mtime moves, content the same): still nothing.
        later = time.time() + 3600
        for export in cohort.iterdir():
            os.utime(export, (later, later))
        result = self.run_cohort(cohort, out)
        self.assertIn("Nothing to be done", result.stdout + result.stderr)
        self.assertEqual((self.tokens(out), self.cohort_json(out)["version"]), (first, version))

        # Replaced by another export whose mtime is *older* than every output: p02 and the merge rerun.
        replacement = GENERATED / "gen-replacement" / "p02.zip"
        staged = cohort / ".incoming.zip"
        shutil.copy(replacement, staged)
        os.utime(staged, (1e9, 1e9))  # 2001
        os.replace(staged, cohort / "p02.zip")
        self.run_cohort(cohort, out)
        second = self.tokens(out)
        self.assertNotEqual(second["p02"], first["p02"])
        self.assertEqual({k: v for k, v in second.items() if k != "p02"}, {k: v for k, v in first.items() if k != "p02"})
        summary = self.cohort_json(out)
        self.assertNotEqual(summary["version"], version)
        self.assertEqual(
            {p["participant"]: p["status"] for p in summary["participants"]},
            {"p01": "unchanged", "p02": "ok", "p03": "unchanged"},
        )
        self.assertEqual(summary["totals"]["ok"], 1)
        # Once-only delivery per participant: .new holds exactly the records p02 never had.
        all_records = json.loads((out / "participants/p02/workout_records.json").read_text())
        delta = json.loads((out / "participants/p02/workout_records.new.json").read_text())
        self.assertTrue(delta["final"])
        new_records = delta["records"]
        old_ids = {r["recordUuid"] for r in old_records}
        self.assertEqual(new_records, [r for r in all_records if r["recordUuid"] not in old_ids])
        self.assertLess(len(new_records), len(all_records) + 1)
        self.assert_merged_matches_participants(out, ["p01", "p02", "p03"])

        # The whole cohort folder moved: the content is the same, so nothing reruns.
        moved = self.work / "moved-exports"
        cohort.rename(moved)
        result = self.run_cohort(moved, out)
        self.assertIn("Nothing to be done", result.stdout + result.stderr)
        self.assertEqual(self.tokens(out), second)

        # A new participant: only it and the merge run; taking it out again reruns only the merge.
        shutil.copy(GENERATED / "sample.zip", moved / "sample.zip")
        self.run_cohort(moved, out)
        third = self.tokens(out)
        self.assertEqual({k: third[k] for k in second}, second)
        self.assertEqual(self.cohort_json(out)["totals"]["included"], 4)
        (moved / "sample.zip").unlink()
        self.run_cohort(moved, out)
        summary = self.cohort_json(out)
        self.assertEqual(sorted(p["participant"] for p in summary["participants"]), ["p01", "p02", "p03"])
        self.assertEqual(summary["totals"]["unchanged"], 3)
        self.assertEqual(self.query("SELECT DISTINCT participant FROM read_parquet(?) ORDER BY 1", str(out / "cohort/workouts.parquet")), [("p01",), ("p02",), ("p03",)])
        # Two versions are kept at most: the current one and the one before it.
        self.assertLessEqual(len(list((out / ".cohort" / "merged").iterdir())), 2)

    def test_a_killed_run_is_finished_by_the_next(self):
        cohort = self.work / "exports"
        cohort.mkdir()
        for n in range(8):
            source = GENERATED / ("p01.zip", "p02.zip", "p03.xml", "sample.zip")[n % 4]
            shutil.copy(source, cohort / f"s{n}{source.suffix}")
        out = self.work / "out"
        command = [str(COHORT_PYTHON), str(LAUNCH), "--cohort", str(cohort), "--out", str(out), "--jobs", "1"]
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        status_dir = out / ".cohort" / "status"
        try:
            deadline = time.monotonic() + RUN_TIMEOUT
            while len(list(status_dir.glob("*.json"))) < 3:
                self.assertIsNone(process.poll(), "the workflow ended before it could be killed")
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.02)
        finally:
            os.killpg(process.pid, signal.SIGKILL)  # Snakemake and the job it was running
            process.wait()
        done = self.tokens(out)
        self.assertLess(len(done), 8)
        self.assertFalse((out / "cohort").exists())

        self.run_cohort(cohort, out, jobs=1)
        after = self.tokens(out)
        self.assertEqual(len(after), 8)
        # One job runs at a time; the one whose status file was written just before the kill may
        # not yet be recorded as finished by Snakemake, and is then run again. No other is.
        rerun = [k for k in done if after[k] != done[k]]
        self.assertLessEqual(len(rerun), 1, f"finished participants ran again: {rerun}")
        self.assertEqual(self.cohort_json(out)["totals"]["included"], 8)

    def test_me_is_merged_only_when_asked(self):
        cohort = self.make_cohort(ids=("p01", "sample"))
        out = self.work / "out"
        self.run_cohort(cohort, out, "--config", "include_me=true")
        me = self.query(
            "SELECT participant, HKCharacteristicTypeIdentifierDateOfBirth FROM read_parquet(?) ORDER BY 1",
            str(out / "cohort/me.parquet"),
        )
        for pid, born in me:
            with open(out / "participants" / pid / "elements/Me.csv", newline="") as handle:
                row = next(csv.DictReader(handle))
            self.assertEqual(born.isoformat(), row["HKCharacteristicTypeIdentifierDateOfBirth"])
        self.assertEqual([pid for pid, _ in me], ["p01", "sample"])
        self.assertEqual(me[1][1], datetime.date(1990, 7, 14))

        # Switched off again: every participant reruns, the table and the extracted files go.
        self.run_cohort(cohort, out)
        self.assertFalse((out / "cohort" / "me.parquet").exists())
        self.assertEqual(list((out / "participants").rglob("Me.csv")), [])

    def test_a_manifest_names_the_participants(self):
        exports = self.make_cohort(ids=("p01", "p03"))
        manifest = self.work / "manifest.csv"
        manifest.write_text("participant,export\nsubject-A,exports/p03.xml\nsubject-B,exports/p01.zip\n")
        out = self.work / "out"
        self.run_cohort(manifest, out)
        summary = self.cohort_json(out)
        self.assertEqual([p["participant"] for p in summary["participants"]], ["subject-A", "subject-B"])
        self.assertEqual(
            self.query("SELECT participant, count(*) FROM read_parquet(?) GROUP BY 1 ORDER BY 1", str(out / "cohort/sleep_daily.parquet")),
            [("subject-A", 23), ("subject-B", 20)],
        )
        self.assertTrue((out / "participants" / "subject-A" / "run.json").exists())

        manifest.write_text("participant,export\nsubject-A,exports/p03.xml\nsubject-A,exports/p01.zip\n")
        result = self.run_cohort(manifest, self.work / "out2", check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("participant 'subject-A' is listed twice", result.stdout + result.stderr)
        self.assertTrue(exports.exists())

    def test_a_job_that_cannot_write_fails_the_run_and_is_retried(self):
        cohort = self.make_cohort(ids=("p01", "p03"))
        out = self.work / "out"
        (out / "participants").mkdir(parents=True)
        (out / "participants" / "p01").write_text("in the way\n")  # healthetl exits 73
        result = self.run_cohort(cohort, out, check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("healthetl exited with 73", result.stdout + result.stderr)
        self.assertEqual(sorted(self.tokens(out)), ["p03"])  # the other participant finished
        self.assertFalse((out / "cohort").exists())  # no merge over a missing participant
        done = self.tokens(out)

        (out / "participants" / "p01").unlink()
        self.run_cohort(cohort, out)
        self.assertEqual(self.tokens(out)["p03"], done["p03"])
        self.assertEqual(
            {p["participant"]: p["status"] for p in self.cohort_json(out)["participants"]}, {"p01": "ok", "p03": "ok"}
        )

    def test_a_second_run_into_the_same_out_is_refused(self):
        cohort = self.make_cohort(ids=("p01",))
        out = self.work / "out"
        (out / ".cohort").mkdir(parents=True)
        with open(out / ".cohort" / "lock", "w") as held:
            fcntl.flock(held, fcntl.LOCK_EX)
            result = self.run_cohort(cohort, out, check=False)
        self.assertEqual(result.returncode, 75)
        self.assertIn("another cohort run", result.stderr)
        self.assertFalse((out / "participants").exists())

    def test_links_devices_and_fifos_never_hang_the_cohort(self):
        # A participant folder that is no export: links to /dev/zero and out of the folder, a FIFO,
        # a socket. `healthetl run` refuses it at once (65); the workflow's content key must read
        # none of them. Beside it: exports named *.zip / *.xml that are a device and a FIFO, and
        # what `healthetl sample --out p.xml` and a person leave in a cohort folder.
        cohort = self.make_cohort(ids=("p01",))
        elsewhere = self.work / "elsewhere"
        elsewhere.mkdir()
        (elsewhere / "notes.xml").write_text("someone else's notes\n")
        (elsewhere / "other.xml").write_text("other notes\n")
        bad = cohort / "bad"
        bad.mkdir()
        (bad / "zero.xml").symlink_to("/dev/zero")
        (bad / "outside.xml").symlink_to(elsewhere / "notes.xml")
        os.mkfifo(bad / "pipe")
        listener = socket.socket(socket.AF_UNIX)
        self.addCleanup(listener.close)
        listener.bind(str(bad / "sock"))
        (cohort / "zero.zip").symlink_to("/dev/zero")
        os.mkfifo(cohort / "fifo.xml")
        (cohort / "workout-routes").mkdir()
        (cohort / "workout-routes" / "route_2024-03-18_7.41am.gpx").write_text("<gpx/>\n")
        (cohort / "notes.txt").write_text("exported on the 18th\n")
        out = self.work / "out"

        result = self.run_cohort(cohort, out)  # RUN_TIMEOUT catches the hang this used to be
        self.assertIn("cohort: not exports, so not participants: notes.txt, workout-routes/", result.stderr)
        summary = self.cohort_json(out)
        by_id = {p["participant"]: p for p in summary["participants"]}
        self.assertEqual(
            {pid: (p["status"], p["exit_code"]) for pid, p in by_id.items()},
            {"bad": ("bad_input", 65), "fifo": ("bad_input", None), "p01": ("ok", 0), "zero": ("bad_input", None)},
        )
        self.assertIn("the folder holds no XML file that starts with <HealthData>", by_id["bad"]["message"])
        self.assertEqual(
            by_id["fifo"]["message"],
            f"{cohort.resolve() / 'fifo.xml'}: a FIFO, not an export (a .zip or .xml file, or an unpacked export folder)",
        )
        self.assertEqual(
            by_id["zero"]["message"],
            "/dev/zero: a character device, not an export (a .zip or .xml file, or an unpacked export folder)",
        )
        self.assertEqual((by_id["zero"]["sha256"], by_id["fifo"]["sha256"]), ("special:character device", "special:FIFO"))
        self.assertEqual(
            {k: summary["totals"][k] for k in ("participants", "included", "ok", "bad_input", "timed_out")},
            {"participants": 4, "included": 1, "ok": 1, "bad_input": 3, "timed_out": 0},
        )
        self.assert_merged_matches_participants(out, ["p01"])
        first = self.tokens(out)

        # New lstat of every link and of the folder's FIFO: keys are worked out again at the
        # start, and are the same, since a link counts by where it points. So does new content
        # behind a link out of the export: it is not this participant's.
        for path in (bad / "zero.xml", bad / "outside.xml", bad / "pipe", cohort / "zero.zip"):
            os.utime(path, (time.time() + 60,) * 2, follow_symlinks=False)
        (elsewhere / "notes.xml").write_text("changed notes\n")
        result = self.run_cohort(cohort, out)
        self.assertIn("Nothing to be done", result.stdout + result.stderr)
        self.assertEqual(self.tokens(out), first)

        # Pointed elsewhere, the link is a change of the participant's folder: it alone reruns.
        (bad / "outside.xml").unlink()
        (bad / "outside.xml").symlink_to(elsewhere / "other.xml")
        result = self.run_cohort(cohort, out)
        self.assertIn("cohort: changed exports: bad", result.stderr)
        after = self.tokens(out)
        self.assertNotEqual(after["bad"], first["bad"])
        self.assertEqual({k: v for k, v in after.items() if k != "bad"}, {k: v for k, v in first.items() if k != "bad"})

    def test_a_participant_over_its_time_limit_is_stopped_reported_and_retried(self):
        # A healthetl that never ends for one participant and ignores SIGTERM (so the job has to
        # kill it) while `stall` exists, and is the real one otherwise.
        cohort = self.make_cohort(ids=("p01",))
        shutil.copy(GENERATED / "p03.xml", cohort / "stalled.xml")
        stall = self.work / "stall"
        stall.write_text("")
        pid_file = self.work / "stalled.pid"
        wrapper = self.work / "healthetl"
        wrapper.write_text(
            "#!/bin/sh\n"
            f'if [ -e "{stall}" ]; then case "$*" in *stalled.xml*)\n'
            f'  echo $$ > "{pid_file}"; trap "" TERM; exec sleep 3600;; esac; fi\n'
            f'exec "{BINARY}" "$@"\n'
        )
        wrapper.chmod(0o755)
        self.addCleanup(self.kill_recorded, pid_file)
        out = self.work / "out"
        limit = ["--healthetl", wrapper, "--", "--set-resources", "participant:time_limit_s=30"]

        self.run_cohort(cohort, out, *limit)  # RUN_TIMEOUT catches a hang
        summary = self.cohort_json(out)
        by_id = {p["participant"]: p for p in summary["participants"]}
        self.assertEqual({pid: p["status"] for pid, p in by_id.items()}, {"p01": "ok", "stalled": "timed_out"})
        stalled = by_id["stalled"]
        self.assertIsNone(stalled["exit_code"])
        self.assertEqual(
            stalled["message"],
            "healthetl run did not finish within its time limit of 30 s and was stopped; "
            "the next run tries again (config.yaml, participant: time_limit_s_*)",
        )
        self.assertGreaterEqual(stalled["seconds"], 30)
        self.assertEqual((summary["totals"]["included"], summary["totals"]["timed_out"]), (1, 1))
        self.assert_merged_matches_participants(out, ["p01"])
        with self.assertRaises(ProcessLookupError):  # killed after ignoring SIGTERM, not left behind
            os.kill(int(pid_file.read_text()), 0)

        # The next run tries it again (and only it); this time it finishes.
        stall.unlink()
        result = self.run_cohort(cohort, out, *limit)
        self.assertIn("cohort: run again after hitting their time limit: stalled", result.stderr)
        summary = self.cohort_json(out)
        self.assertEqual(
            {p["participant"]: p["status"] for p in summary["participants"]}, {"p01": "unchanged", "stalled": "ok"}
        )
        self.assert_merged_matches_participants(out, ["p01", "stalled"])

    def kill_recorded(self, pid_file):
        """Kills the stand-in healthetl this test started, by the PID it recorded, if it is alive."""
        try:
            os.kill(int(pid_file.read_text()), signal.SIGKILL)
        except (FileNotFoundError, ValueError, ProcessLookupError):
            pass


class ContentKeyTests(unittest.TestCase):
    """cohortlib's content keys on their own, in a child process with a time limit (a read of
    /dev/zero or a FIFO's open would otherwise hang the test), against values worked out here."""

    def setUp(self):
        self.work = Path(tempfile.mkdtemp(prefix="healthetl-cohort-keys-"))
        self.addCleanup(shutil.rmtree, self.work, True)

    def keys(self, path) -> dict:
        code = (
            "import json, sys; sys.path.insert(0, sys.argv[1]); import cohortlib as c; p = sys.argv[2]; "
            "print(json.dumps({'sha256': c.content_sha256(p), 'xml_bytes': c.xml_bytes(p), "
            "'stat': c.stat_signature(p)}))"
        )
        result = subprocess.run(
            [str(COHORT_PYTHON), "-c", code, str(REPO / "Pipelines" / "cohort"), str(path)],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        return json.loads(result.stdout)

    def test_a_folder_is_keyed_by_its_files_and_by_where_its_links_point(self):
        export = self.work / "export"
        (export / "workout-routes").mkdir(parents=True)
        (export / "export.xml").write_bytes(b"<HealthData/>\n")
        (export / "workout-routes" / "r.gpx").write_bytes(b"<gpx/>\n")
        (export / "zero.xml").symlink_to("/dev/zero")
        big = self.work / "big.bin"
        big.write_bytes(b"\0" * 5_000_000)
        (export / "workout-routes" / "big.gpx").symlink_to(big)
        os.mkfifo(export / "pipe")

        def sha(data: bytes) -> str:
            return hashlib.sha256(data).hexdigest()

        # os.walk's order: a folder's entries by name, then its sub-folders.
        expected = sha(
            b"export.xml\0" + sha(b"<HealthData/>\n").encode() + b"\n"
            + b"pipe\0FIFO\n"
            + b"zero.xml\0link:/dev/zero\n"
            + b"workout-routes/big.gpx\0link:" + str(big).encode() + b"\n"
            + b"workout-routes/r.gpx\0" + sha(b"<gpx/>\n").encode() + b"\n"
        )  # fmt: skip
        keys = self.keys(export)
        self.assertEqual(keys["sha256"], "dir:" + expected)
        self.assertEqual(keys["xml_bytes"], 14)  # export.xml; the 5 MB behind a link are not the export's
        self.assertEqual(
            [(entry[0], entry[1]) for entry in keys["stat"]],
            [("export.xml", "file"), ("pipe", "FIFO"), ("zero.xml", "link"), ("workout-routes/big.gpx", "link"),
             ("workout-routes/r.gpx", "file")],
        )  # fmt: skip

    def test_an_export_path_that_is_no_file_is_keyed_by_its_kind(self):
        os.mkfifo(self.work / "p.xml")
        self.assertEqual(self.keys(self.work / "p.xml")["sha256"], "special:FIFO")
        self.assertEqual(self.keys("/dev/zero")["sha256"], "special:character device")
        missing = self.keys(self.work / "gone.zip")
        self.assertEqual((missing["sha256"], missing["xml_bytes"], missing["stat"][0]), ("missing", 0, "missing"))
        (self.work / "p.zip").write_bytes(b"PK not really")
        self.assertEqual(self.keys(self.work / "p.zip")["sha256"], hashlib.sha256(b"PK not really").hexdigest())


class MergeTypeTests(CohortCase):
    """merge.py alone, on participant folders written here, for the type rules of the README."""

    def participant(self, out, pid, files):
        folder = out / "participants" / pid
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        outputs = [{"path": name} for name in files]
        (folder / "run.json").write_text(json.dumps({"outputs": outputs}))
        status = {"participant": pid, "status": "ok", "exit_code": 0, "message": None, "sha256": "0" * 64,
                  "finished": "2025-01-01T00:00:00+00:00", "seconds": 1.0, "token": pid + "-token"}  # fmt: skip
        (out / ".cohort" / "status").mkdir(parents=True, exist_ok=True)
        (out / ".cohort" / "status" / f"{pid}.json").write_text(json.dumps(status))

    def test_types_are_united_across_participants_and_whole_files(self):
        out = self.work / "out"
        # a: 30,000 whole numbers, then one with decimals (past DuckDB's 20,480-row sample);
        # b: its `extra` column is empty everywhere, c has it as whole numbers.
        late = "date,value,extra\n" + "".join(f"2024-01-01,{n}," + "\n" for n in range(30000)) + "2024-01-02,0.5,\n"
        self.participant(out, "a", {"t.csv": late, "leftover.csv": "x\n1\n"})
        self.participant(out, "b", {"t.csv": "date,value,extra\n2024-02-01,7,\n"})
        self.participant(out, "c", {"t.csv": "date,value,extra,only_c\n2024-03-01,8,42,true\n"})
        (out / "participants" / "b" / "stale.csv").write_text("x\n2\n")  # not in b's run.json
        (out / ".cohort" / "participants.txt").write_text("a\nb\nc\n")
        tables = json.dumps({"t": "t.csv", "stale": "stale.csv", "leftover": "leftover.csv"})
        merge = [str(COHORT_PYTHON), str(REPO / "Pipelines/cohort/merge.py"), "--participants", ".cohort/participants.txt",
                 "--tables", tables, "--marker", ".cohort/merged.json"]  # fmt: skip
        subprocess.run(merge, cwd=out, check=True, capture_output=True, timeout=120)
        parquet = str(out / "cohort" / "t.parquet")
        types = [(n, k) for n, k, *_ in self.query("DESCRIBE SELECT * FROM read_parquet(?)", parquet)]
        self.assertEqual(
            types,
            [("participant", "VARCHAR"), ("date", "DATE"), ("value", "DOUBLE"), ("extra", "BIGINT"), ("only_c", "BOOLEAN")],
        )
        self.assertEqual(
            self.query("SELECT participant, count(*), sum(value) FROM read_parquet(?) GROUP BY 1 ORDER BY 1", parquet),
            [("a", 30001, sum(range(30000)) + 0.5), ("b", 1, 7.0), ("c", 1, 8.0)],
        )
        self.assertEqual(
            self.query("SELECT extra, only_c FROM read_parquet(?) WHERE participant <> 'a' ORDER BY 1", parquet),
            [(42, True), (None, None)],
        )
        summary = self.cohort_json(out)
        self.assertEqual(sorted(summary["tables"]), ["leftover", "t"])  # b's stale.csv is not b's output
        self.assertTrue((out / "cohort").is_symlink())


class SlurmExecutorTests(CohortCase):
    """The same workflow through `snakemake --executor slurm` on a cluster started for the test."""

    def test_slurm_run_matches_the_participants(self):
        reason = SlurmCluster.unavailable_reason()
        if reason:
            print(f"\ncohort tests: Slurm part skipped: {reason}", file=sys.stderr)
            self.skipTest(f"Slurm part skipped: {reason}")
        cohort = self.make_cohort(ids=("p01", "p03", BAD, "sample"))
        out = self.work / "out"
        cluster = SlurmCluster()
        try:
            cluster.start()
            result = self.run_cohort(
                cohort, out, "--slurm-account", "root", "--slurm-partition", cluster.partition, "--",
                "--slurm-init-seconds-before-status-checks", "1",
                executor="slurm", jobs=2,
            )  # fmt: skip
            log = (cluster.scratch / "log" / "slurmctld.log").read_text()
            completed = log.count("WEXITSTATUS 0")
        finally:
            cluster.stop()
        # Every participant and the merge ran as Slurm batch jobs (plus the start-up probe).
        self.assertGreaterEqual(completed, 4 + 1)
        self.assertIn("has been submitted with SLURM jobid", result.stdout + result.stderr)
        summary = self.cohort_json(out)
        self.assertEqual(
            {p["participant"]: p["status"] for p in summary["participants"]},
            {"p01": "ok", "p03": "ok", BAD: "bad_input", "sample": "ok"},
        )
        self.assert_merged_matches_participants(out, ["p01", "p03", "sample"])
        self.assertEqual(cluster.running_daemons(), {})
        self.assertEqual(_pids_named(("slurmctld", "slurmd", "slurmstepd", "munged")), set())
        self.assertFalse(Path("/etc/slurm/slurm.conf").exists())
        self.assertFalse(cluster.scratch.exists())


if __name__ == "__main__":
    unittest.main()
