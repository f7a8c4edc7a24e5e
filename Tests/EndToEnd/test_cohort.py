"""The cohort workflow (Pipelines/cohort), run for real: Snakemake with the local executor, then
through a one-node Slurm cluster on 127.0.0.1 brought up for the test and torn down by PID.

Run by `make test-cohort` (part of `make test-e2e` and `make test`), which builds the release
binary, the workflow's venv (.build/cohort-venv) and installs Slurm and munge where no Slurm is
configured. The Slurm part is skipped, with the reason, on a machine that has a Slurm of its own
or where the test is not root; the local-executor part always runs.

The workflow runs the binary for every participant within RUN_TIMEOUT, so the binary is the release
build: `e2e.binary(release=True)`, `HEALTHETL_BIN` else .build/release/healthetl, never the debug build.
"""

from __future__ import annotations

import collections
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
import threading
import time
import unittest
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import REPO, binary, csv_rows  # noqa: E402
from slurm_cluster import SlurmCluster, _pids_named  # noqa: E402

# Absolute (make passes it relative to the repository), but symbolic links kept: the venv's
# python is a link whose own path selects the venv.
COHORT_PYTHON = Path(os.path.abspath(os.environ.get("COHORT_PYTHON", REPO / ".build" / "cohort-venv" / "bin" / "python")))
LAUNCH = REPO / "Pipelines" / "cohort" / "launch.py"
SAMPLE = REPO / "SampleData" / "export.zip"
RUN_TIMEOUT = 240  # seconds for one workflow run; `timeout -s KILL` ends it and its children

try:
    import duckdb
except ImportError:  # pragma: no cover - reported as a skip with the way to run it
    duckdb = None
try:
    import pyarrow
    import pyarrow.dataset
except ImportError:  # pragma: no cover - reported as a skip with the way to run it
    pyarrow = None

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
    global BINARY  # the release build; without one the module skips, saying so
    missing = [str(p) for p in (COHORT_PYTHON,) if not p.exists()]
    try:
        BINARY = Path(binary(release=True))
    except unittest.SkipTest as reason:
        missing.insert(0, str(reason))
    missing += [name for name, module in (("duckdb", duckdb), ("pyarrow", pyarrow)) if module is None]
    if missing:
        raise unittest.SkipTest(
            "cohort tests need the release binary, the workflow venv, duckdb and pyarrow "
            f"(run `make test-cohort`); missing: {', '.join(missing)}"
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
        # The binary the test found, not launch.py's default (.build/release): a test's own
        # --healthetl in `args` comes later and wins.
        command += ["--healthetl", str(BINARY)] + [str(a) for a in args]
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
        merged_tables = sorted(
            str(p.parent.relative_to(out / "cohort")) for p in (out / "cohort").rglob("participant=*")
        )
        # A table no participant has a row of has no folder (run.json lists it with 0 rows).
        self.assertEqual(sorted(set(merged_tables)), sorted(t for t in tables if summary["tables"][t]["rows"]))
        for table, file in tables.items():
            if not summary["tables"][table]["rows"]:
                columns, merged = ["participant", *(c for c, _ in summary["tables"][table]["columns"])], []
            else:
                # Every partition holds one participant's rows in the order of its file.
                columns = [row[0] for row in con.execute(f"DESCRIBE SELECT * FROM {dataset(out, table)}").fetchall()]
                self.assertEqual(columns[-1], "participant", table)
                columns = ["participant", *columns[:-1]]
                merged = con.execute(
                    f"SELECT participant, * EXCLUDE (participant, file_row_number) "
                    f"FROM {dataset(out, table, file_row_number=True)} ORDER BY participant, file_row_number"
                ).fetchall()
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
                if rows or summary["tables"][table]["rows"]:
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

    def participant(self, out, pid, files):
        """A participant folder and status written by hand, for merge.py alone."""
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

    def partition_files(self, out) -> dict:
        """(table, participant) -> the inode of its Parquet file in the published version."""
        found = {}
        for file in (Path(out) / "cohort").rglob("participant=*/*.parquet"):
            table = str(file.parent.parent.relative_to(Path(out) / "cohort"))
            found[(table, file.parent.name.removeprefix("participant="))] = file.stat().st_ino
        return found

    def query(self, sql, *params):
        con = duckdb.connect()
        try:
            return con.execute(sql, list(params)).fetchall()
        finally:
            con.close()


def dataset(out, table, file_row_number=False) -> str:
    """DuckDB's reader of one partitioned table, `participant` (text) taken from the folder names."""
    folder = str(Path(out) / "cohort" / table).replace("'", "''")
    extra = ", file_row_number = true" if file_row_number else ""
    return f"read_parquet('{folder}/*/*.parquet', hive_partitioning = true, hive_types = {{'participant': VARCHAR}}{extra})"


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
        workouts = self.query(f"SELECT count(*) FROM {dataset(out, 'workouts')} WHERE participant = 'sample'")
        self.assertEqual(workouts, [(17,)])
        steps = self.query(
            f"SELECT bucket_start, sum FROM {dataset(out, 'stats/steps-per-day')} WHERE participant = 'sample' "
            "ORDER BY bucket_start LIMIT 3"
        )
        self.assertEqual(steps[0], ("2024-03-18T00:00:00+01:00", 13248.0))
        self.assertEqual(steps[2], ("2024-03-20T00:00:00+01:00", 10336.0))
        types = dict(
            (name, kind) for name, kind, *_ in self.query(f"DESCRIBE SELECT * FROM {dataset(out, 'sleep_daily')}")
        )
        self.assertEqual((types["date"], types["asleep_s"], types["sleep_start"]), ("DATE", "BIGINT", "VARCHAR"))
        records = self.query(f"DESCRIBE SELECT * FROM {dataset(out, 'workout_records')}")
        self.assertEqual([kind for _, kind, *_ in records], ["VARCHAR"] * 8)  # seven strings + participant

        # The Me element is neither extracted nor merged by default.
        self.assertFalse((out / "cohort" / "me").exists())
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
        files_before = self.partition_files(out)
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
        # Only p02's partitions are new files; every other one is the same file, linked in.
        files_after = self.partition_files(out)
        self.assertEqual(sorted(files_after), sorted(files_before))
        self.assertEqual(
            sorted(key for key in files_after if files_after[key] != files_before[key]),
            sorted(key for key in files_after if key[1] == "p02"),
        )
        self.assertEqual(summary["written"], {"participants_read": 1, "participants_linked": 2})
        # pyarrow takes each table as one too, `participant` from the folder names.
        for table in ("sleep_daily", "workouts", "stats/steps-per-day"):
            arrow = pyarrow.dataset.dataset(
                out / "cohort" / table, format="parquet",
                partitioning=pyarrow.dataset.partitioning(pyarrow.schema([("participant", pyarrow.string())]), flavor="hive"),
            ).to_table()  # fmt: skip
            counts = sorted(collections.Counter(arrow.column("participant").to_pylist()).items())
            self.assertEqual(counts, self.query(f"SELECT participant, count(*) FROM {dataset(out, table)} GROUP BY 1 ORDER BY 1"))
            self.assertEqual([p for p, _ in counts], ["p01", "p02", "p03"])
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
        self.assertEqual(self.query(f"SELECT DISTINCT participant FROM {dataset(out, 'workouts')} ORDER BY 1"), [("p01",), ("p02",), ("p03",)])
        # Two versions are kept at most: the current one and the one before it.
        self.assertLessEqual(len(list((out / ".cohort" / "merged").iterdir())), 2)

    def test_a_killed_run_is_finished_by_the_next(self):
        cohort = self.work / "exports"
        cohort.mkdir()
        for n in range(8):
            source = GENERATED / ("p01.zip", "p02.zip", "p03.xml", "sample.zip")[n % 4]
            shutil.copy(source, cohort / f"s{n}{source.suffix}")
        out = self.work / "out"
        command = [str(COHORT_PYTHON), str(LAUNCH), "--healthetl", str(BINARY), "--cohort", str(cohort), "--out", str(out),
                   "--jobs", "1"]  # fmt: skip
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
            f"SELECT participant, HKCharacteristicTypeIdentifierDateOfBirth FROM {dataset(out, 'me')} ORDER BY 1"
        )
        for pid, born in me:
            row = csv_rows(out / "participants" / pid / "elements/Me.csv")[0]
            self.assertEqual(born.isoformat(), row["HKCharacteristicTypeIdentifierDateOfBirth"])
        self.assertEqual([pid for pid, _ in me], ["p01", "sample"])
        self.assertEqual(me[1][1], datetime.date(1990, 7, 14))

        # Switched off again: every participant reruns, the table and the extracted files go.
        self.run_cohort(cohort, out)
        self.assertFalse((out / "cohort" / "me").exists())
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
            self.query(f"SELECT participant, count(*) FROM {dataset(out, 'sleep_daily')} GROUP BY 1 ORDER BY 1"),
            [("subject-A", 23), ("subject-B", 20)],
        )
        self.assertTrue((out / "participants" / "subject-A" / "run.json").exists())

        manifest.write_text("participant,export\nsubject-A,exports/p03.xml\nsubject-A,exports/p01.zip\n")
        result = self.run_cohort(manifest, self.work / "out2", check=False)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn("participant 'subject-A' is listed twice", result.stdout + result.stderr)
        self.assertTrue(exports.exists())

    def test_a_name_without_ascii_letters_or_digits_is_one_participant_with_a_stable_id(self):
        # Issue 31, item 8: `日本.zip` or `é.xml` left an empty id, which stopped the whole cohort
        # before any participant ran. Such a name's id is `id-` and the first 12 hex digits of the
        # SHA-256 of its stem in Unicode NFC as UTF-8, worked out here independently: the same
        # name gives the same id on every run and machine, whichever normalization it arrives in.
        cohort = self.work / "exports"
        cohort.mkdir()
        shutil.copy(GENERATED / "p01.zip", cohort / "日本.zip")
        shutil.copy(GENERATED / "p03.xml", cohort / "e\u0301.xml")  # é decomposed (NFD), as macOS may write it
        shutil.copy(GENERATED / "p01.zip", cohort / "p02.zip")
        nihon = "id-" + hashlib.sha256("日本".encode()).hexdigest()[:12]
        e_acute = "id-" + hashlib.sha256("\u00e9".encode()).hexdigest()[:12]
        self.assertEqual(e_acute, "id-" + hashlib.sha256(b"\xc3\xa9").hexdigest()[:12])
        out = self.work / "out"
        self.run_cohort(cohort, out)
        summary = self.cohort_json(out)
        self.assertEqual(
            {p["participant"]: p["status"] for p in summary["participants"]},
            {nihon: "ok", e_acute: "ok", "p02": "ok"},
        )
        self.assertEqual(
            self.query(f"SELECT participant, count(*) FROM {dataset(out, 'sleep_daily')} GROUP BY 1 ORDER BY 1"),
            sorted([(nihon, 20), (e_acute, 23), ("p02", 20)]),
        )
        # Stable: the next run finds the same participants, unchanged.
        result = self.run_cohort(cohort, out)
        self.assertIn("Nothing to be done", result.stdout + result.stderr)

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
        limit = ["--healthetl", wrapper, "--config", "time_limit_s=4", "retries=1"]

        self.run_cohort(cohort, out, *limit)  # RUN_TIMEOUT catches a hang
        summary = self.cohort_json(out)
        by_id = {p["participant"]: p for p in summary["participants"]}
        self.assertEqual({pid: p["status"] for pid, p in by_id.items()}, {"p01": "ok", "stalled": "timed_out"})
        stalled = by_id["stalled"]
        self.assertEqual((stalled["exit_code"], stalled["tries"], by_id["p01"]["tries"]), (None, 2, 1))
        self.assertEqual(
            stalled["message"],
            "healthetl run did not finish within its time limit of 4 s on any of 2 tries and was stopped; "
            "the next run tries again (config.yaml: participant: time_limit_s_*, retries)",
        )
        self.assertGreaterEqual(stalled["seconds"], 4)
        self.assertEqual((summary["totals"]["included"], summary["totals"]["timed_out"]), (1, 1))
        self.assert_merged_matches_participants(out, ["p01"])
        log = (out / ".cohort" / "logs" / "stalled.log").read_text()
        self.assertEqual((log.count("try 1 of 2"), log.count("try 2 of 2")), (1, 1))
        with self.assertRaises(ProcessLookupError):  # killed after ignoring SIGTERM, not left behind
            os.kill(int(pid_file.read_text()), 0)

        # The next run tries it again (and only it); this time it finishes.
        stall.unlink()
        result = self.run_cohort(cohort, out, *limit)
        self.assertIn("cohort: run again after timing out or being cancelled: stalled", result.stderr)
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
        t = dataset(out, "t")
        types = [(n, k) for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {t}")]
        self.assertEqual(
            types,
            [("date", "DATE"), ("value", "DOUBLE"), ("extra", "BIGINT"), ("only_c", "BOOLEAN"), ("participant", "VARCHAR")],
        )
        self.assertEqual(
            self.query(f"SELECT participant, count(*), sum(value) FROM {t} GROUP BY 1 ORDER BY 1"),
            [("a", 30001, sum(range(30000)) + 0.5), ("b", 1, 7.0), ("c", 1, 8.0)],
        )
        self.assertEqual(
            self.query(f"SELECT extra, only_c FROM {t} WHERE participant <> 'a' ORDER BY 1"),
            [(42, True), (None, None)],
        )
        summary = self.cohort_json(out)
        self.assertEqual(sorted(summary["tables"]), ["leftover", "t"])  # b's stale.csv is not b's output
        self.assertTrue((out / "cohort").is_symlink())

    def test_a_later_night_widens_a_column_in_every_partition(self):
        out = self.work / "out"
        self.participant(out, "a", {"t.csv": "date,value,extra\n2024-01-01,1,\n2024-01-02,2,\n"})
        self.participant(out, "b", {"t.csv": "date,value,extra\n2024-02-01,7,\n"})
        (out / ".cohort" / "participants.txt").write_text("a\nb\n")
        merge = [str(COHORT_PYTHON), str(REPO / "Pipelines/cohort/merge.py"), "--participants", ".cohort/participants.txt",
                 "--tables", json.dumps({"t": "t.csv"}), "--marker", ".cohort/merged.json"]  # fmt: skip
        subprocess.run(merge, cwd=out, check=True, capture_output=True, timeout=120)
        t = dataset(out, "t")
        self.assertEqual(
            [(n, k) for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {t}")],
            [("date", "DATE"), ("value", "BIGINT"), ("extra", "VARCHAR"), ("participant", "VARCHAR")],
        )
        a_inode = next((out / "cohort" / "t" / "participant=a").iterdir()).stat().st_ino

        # b changes: `value` gets a fraction and `extra` (empty so far) whole numbers. a's partition
        # is rewritten to the wider types, so every file of the table has one schema.
        self.participant(out, "b", {"t.csv": "date,value,extra\n2024-02-01,7.5,3\n"})
        status = out / ".cohort" / "status" / "b.json"
        status.write_text(json.dumps(dict(json.loads(status.read_text()), token="b-night-2")))
        subprocess.run(merge, cwd=out, check=True, capture_output=True, timeout=120)
        expected = [("date", "DATE"), ("value", "DOUBLE"), ("extra", "BIGINT"), ("participant", "VARCHAR")]
        self.assertEqual([(n, k) for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {t}")], expected)
        for file in (out / "cohort" / "t").glob("*/*.parquet"):  # each file alone, not united by a reader
            self.assertEqual(
                [(n, k) for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM read_parquet('{file}', hive_partitioning = false)")], expected[:-1]
            )
        self.assertEqual(
            self.query(f"SELECT participant, date, value, extra FROM {t} ORDER BY 1, 2"),
            [("a", datetime.date(2024, 1, 1), 1.0, None), ("a", datetime.date(2024, 1, 2), 2.0, None),
             ("b", datetime.date(2024, 2, 1), 7.5, 3)],
        )  # fmt: skip
        self.assertNotEqual(next((out / "cohort" / "t" / "participant=a").iterdir()).stat().st_ino, a_inode)


class PublishTests(CohortCase):
    """The dataset is swapped in whole: a reader that resolves `cohort` once sees one night."""

    def test_a_reader_never_sees_half_a_night(self):
        out = self.work / "out"
        merge = [str(COHORT_PYTHON), str(REPO / "Pipelines/cohort/merge.py"), "--participants", ".cohort/participants.txt",
                 "--tables", json.dumps({"t": "t.csv"}), "--marker", ".cohort/merged.json"]  # fmt: skip
        (out / ".cohort").mkdir(parents=True)
        (out / ".cohort" / "participants.txt").write_text("a\nb\n")

        def night(n):
            # Night n: a and b both have n rows whose value is n.
            for pid in ("a", "b"):
                self.participant(out, pid, {"t.csv": "night,value\n" + f"{n},{n}\n" * n})
                status = out / ".cohort" / "status" / f"{pid}.json"
                status.write_text(json.dumps(dict(json.loads(status.read_text()), token=f"{pid}-{n}")))
            subprocess.run(merge, cwd=out, check=True, capture_output=True, timeout=120)

        night(1)
        seen: list[tuple] = []
        problems: list[str] = []
        stop = threading.Event()

        def reader():
            con = duckdb.connect()
            while not stop.is_set():
                version = Path(os.path.realpath(out / "cohort"))  # resolved once per read
                try:
                    summary = json.loads((version / "run.json").read_text())
                    rows = con.execute(
                        f"SELECT participant, count(*), min(night), max(night) FROM read_parquet('{version}/t/*/*.parquet', "
                        "hive_partitioning = true, hive_types = {'participant': VARCHAR}) GROUP BY 1 ORDER BY 1"
                    ).fetchall()
                except (FileNotFoundError, duckdb.IOException) as error:
                    # Only a version two merges old may go while being read; that is documented.
                    if version.exists():
                        problems.append(f"{version.name}: {error}")
                    continue
                nights = {n for _, _, low, high in rows for n in (low, high)}
                if len(nights) != 1 or [r[1] for r in rows] != [nights.copy().pop()] * 2:
                    problems.append(f"{version.name}: {rows}")
                if summary["totals"]["rows"]["t"] != sum(r[1] for r in rows):
                    problems.append(f"{version.name}: run.json says {summary['totals']['rows']}, files {rows}")
                seen.append(tuple(rows))
            con.close()

        thread = threading.Thread(target=reader)
        thread.start()
        try:
            for n in range(2, 7):
                night(n)
        finally:
            stop.set()
            thread.join(timeout=60)
        self.assertEqual(problems, [])
        self.assertGreater(len(seen), 5)
        self.assertGreater(len(set(seen)), 1, "the reader saw only one night")
        self.assertEqual(self.query(f"SELECT count(*), min(night) FROM {dataset(out, 't')}"), [(12, 6)])


class SlurmExecutorTests(CohortCase):
    """The same workflow through the Slurm executor, as `make cohort EXECUTOR=slurm` runs it (the
    profile's settings, no extra Snakemake arguments), on one cluster started for these tests."""

    cluster: SlurmCluster | None = None

    @classmethod
    def setUpClass(cls):
        reason = SlurmCluster.unavailable_reason()
        if reason:
            print(f"\ncohort tests: Slurm part skipped: {reason}", file=sys.stderr)
            raise unittest.SkipTest(f"Slurm part skipped: {reason}")
        cls.cluster = SlurmCluster()
        try:
            cls.cluster.start()
        except BaseException:
            cls.cluster.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        scratch = cls.cluster.scratch
        cls.cluster.stop()
        left = _pids_named(("slurmctld", "slurmd", "slurmstepd", "munged"))
        if left or Path("/etc/slurm/slurm.conf").exists() or scratch.exists():
            raise AssertionError(f"the test cluster was not taken down: pids {sorted(left)}")

    def run_slurm(self, cohort, out, *args, jobs=2, **kwargs):
        account = ["--slurm-account", "root", "--slurm-partition", self.cluster.partition]
        return self.run_cohort(cohort, out, *account, *args, executor="slurm", jobs=jobs, **kwargs)

    def drain(self):
        """No job can start until the node is resumed (on cleanup)."""
        node = f"NodeName={self.cluster.host}"
        subprocess.run(["scontrol", "update", node, "State=DRAIN", "Reason=cohort-test"], check=True, timeout=30)
        self.addCleanup(subprocess.run, ["scontrol", "update", node, "State=RESUME"], timeout=30)

    def our_jobs(self) -> list[str]:
        listing = subprocess.run(["squeue", "-h", "-o", "%i %j %T"], capture_output=True, text=True, timeout=30).stdout
        return [line for line in listing.splitlines() if " healthetl-cohort-" in line]

    def recording_wrapper(self, record: Path) -> Path:
        """A healthetl that notes when each run starts and ends (and which Slurm job ran it), and
        takes 2 s longer, so that two jobs that run side by side overlap by a margin."""
        wrapper = self.work / "healthetl"
        wrapper.write_text(
            "#!/bin/sh\n"
            'case "$1" in run) ;; *) exec "' + str(BINARY) + '" "$@";; esac\n'
            f'echo "start $(date +%s.%N) $SLURM_JOB_ID" >> "{record}"\n'
            f'"{BINARY}" "$@"; code=$?; sleep 2\n'
            f'echo "end $(date +%s.%N) $SLURM_JOB_ID" >> "{record}"\n'
            "exit $code\n"
        )
        wrapper.chmod(0o755)
        return wrapper

    def test_slurm_run_groups_participants_and_matches_them(self):
        cohort = self.make_cohort(ids=("p01", "p03", BAD, "sample"))
        out = self.work / "out"
        record = self.work / "runs.txt"
        result = self.run_slurm(cohort, out, "--healthetl", self.recording_wrapper(record))
        self.assertIn("has been submitted with SLURM jobid", result.stdout + result.stderr)
        self.assertIn("cohort: 4 of 4 participants to run, in 2 job(s)", result.stderr)
        summary = self.cohort_json(out)
        self.assertEqual(
            {p["participant"]: p["status"] for p in summary["participants"]},
            {"p01": "ok", "p03": "ok", BAD: "bad_input", "sample": "ok"},
        )
        self.assert_merged_matches_participants(out, ["p01", "p03", "sample"])
        # Two participants per job (4 participants, JOBS=2), each job asking for 1 CPU, so that
        # both run at once on this 2-CPU node: their runs overlap in time.
        events = [line.split() for line in record.read_text().splitlines()]
        jobs = {}
        for kind, when, job in events:
            jobs.setdefault(job, []).append(float(when))
        self.assertEqual(sorted(len(times) for times in jobs.values()), [4, 4], events)
        (first, last_of_first), (second, last_of_second) = sorted((min(t), max(t)) for t in jobs.values())
        self.assertLess(second, last_of_first, f"the two jobs ran one after the other: {events}")
        # Nothing changed: nothing is submitted.
        again = self.run_slurm(cohort, out)
        self.assertIn("Nothing to be done", again.stdout + again.stderr)

    def test_a_participant_that_times_out_or_whose_job_is_cancelled_is_retried_then_reported(self):
        cohort = self.make_cohort(ids=("p01",))
        shutil.copy(GENERATED / "p03.xml", cohort / "stalled.xml")
        shutil.copy(GENERATED / "p03.xml", cohort / "killed.xml")
        job_ids = self.work / "killed-jobs.txt"
        wrapper = self.work / "healthetl"
        wrapper.write_text(
            "#!/bin/sh\n"
            'case "$*" in\n'
            "  *stalled.xml*) exec sleep 3600;;\n"
            f'  *killed.xml*) echo "$SLURM_JOB_ID" >> "{job_ids}"; exec sleep 3600;;\n'
            "esac\n"
            f'exec "{BINARY}" "$@"\n'
        )
        wrapper.chmod(0o755)
        out = self.work / "out"
        command = [
            "timeout", "-s", "KILL", str(RUN_TIMEOUT), str(COHORT_PYTHON), str(LAUNCH), "--cohort", str(cohort),
            "--out", str(out), "--executor", "slurm", "--jobs", "3", "--healthetl", str(wrapper),
            "--slurm-account", "root", "--slurm-partition", self.cluster.partition,
            "--config", "time_limit_s=6", "retries=1", "participants_per_job=1",
        ]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
        cancelled = []
        try:
            deadline = time.monotonic() + RUN_TIMEOUT
            while process.poll() is None and time.monotonic() < deadline:
                # Each job that starts on `killed` is cancelled from outside, as an operator would.
                for job in job_ids.read_text().split() if job_ids.exists() else []:
                    if job not in cancelled:
                        subprocess.run(["scancel", job], check=True, timeout=30)
                        cancelled.append(job)
                time.sleep(0.2)
            output = process.communicate(timeout=30)[0]
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.assertEqual(process.returncode, 0, output[-5000:])
        self.assertEqual(len(cancelled), 2, "the job running `killed` was submitted again once (retries=1)")
        summary = self.cohort_json(out)
        by_id = {p["participant"]: p for p in summary["participants"]}
        self.assertEqual(
            {pid: (p["status"], p["tries"]) for pid, p in by_id.items()},
            {"p01": ("ok", 1), "stalled": ("timed_out", 2), "killed": ("cancelled", 2)},
        )
        self.assertEqual(
            by_id["killed"]["message"],
            "its job was stopped while running it on 2 of 2 tries (scancel, a node failure or Slurm's time limit); "
            "left out, and the next run tries again (config.yaml: retries)",
        )
        self.assertEqual((summary["totals"]["cancelled"], summary["totals"]["timed_out"]), (1, 1))
        self.assert_merged_matches_participants(out, ["p01"])
        self.assertEqual(self.our_jobs(), [])

    def test_a_job_stuck_in_the_queue_ends_the_run_with_a_clear_error(self):
        cohort = self.make_cohort(ids=("p01",))
        self.drain()
        out = self.work / "out"
        result = self.run_slurm(cohort, out, "--pending-timeout-min", "0.2", check=False)
        self.assertEqual(result.returncode, 75, result.stderr[-3000:])
        lines = [line for line in result.stderr.splitlines() if "in the queue" in line]
        self.assertEqual(len(lines), 1, result.stderr[-3000:])
        self.assertRegex(
            lines[0],
            r"^cohort: Slurm job \d+ has waited 1\d s in the queue \(reason: Nodes required for job are DOWN, DRAINED[^)]*\), "
            r"longer than the pending limit "
            r"of 12 s; the run is stopped and its jobs cancelled\.",
        )
        self.assertEqual(self.our_jobs(), [])
        self.assertFalse((out / "cohort").exists())

    def test_sigterm_stops_the_run_and_cancels_its_jobs(self):
        cohort = self.make_cohort(ids=("p01", "p03"))
        self.drain()
        out = self.work / "out"
        command = [str(COHORT_PYTHON), str(LAUNCH), "--healthetl", str(BINARY), "--cohort", str(cohort), "--out", str(out),
                   "--executor", "slurm", "--slurm-account", "root", "--slurm-partition", self.cluster.partition]  # fmt: skip
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while not self.our_jobs():
                self.assertIsNone(process.poll(), "the run ended before it submitted a job")
                self.assertLess(time.monotonic(), deadline, "no job was submitted")
                time.sleep(0.2)
            started = time.monotonic()
            process.send_signal(signal.SIGTERM)
            stderr = process.communicate(timeout=90)[1]
            stopped_in = time.monotonic() - started
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.assertEqual(process.returncode, 128 + signal.SIGTERM, stderr[-3000:])
        self.assertIn("cohort: SIGTERM: stopping Snakemake and its jobs", stderr)
        self.assertLess(stopped_in, 45)
        self.assertEqual(self.our_jobs(), [])
        with self.assertRaises(ProcessLookupError):  # nothing of the run is left: launch.py, Snakemake
            os.killpg(process.pid, 0)


if __name__ == "__main__":
    unittest.main()
