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
import sqlite3
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
    import pyarrow.parquet
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
    scratch = GENERATED / "gen-d2"
    scratch.mkdir()
    args = [str(BINARY), "sample", "--days", "2", "--seed", "21", "--out", str(scratch / "d2.xml")]
    subprocess.run(args, check=True, capture_output=True, timeout=60)
    (scratch / "d2.xml").rename(GENERATED / "d2.xml")  # a two-day export: no swims, for the 200-participant test
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

    def participant(self, out, pid, files, kinds=None, token=None):
        """A participant folder and status written by hand, for merge.py alone. `kinds`: file →
        {column: declared kind}, written as a run does: health.sqlite's `columns` table (a table
        per file, with the `_unix` column that follows an instant) and metadata.json's `source`.
        Without `kinds` every column of a CSV is declared text."""
        folder = out / "participants" / pid
        shutil.rmtree(folder, ignore_errors=True)
        for name, text in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text)
        if kinds is None:
            kinds = {name: {c: "text" for c in text.splitlines()[0].split(",")} for name, text in files.items()}
        outputs = [{"path": name} for name in files]
        (folder / "run.json").write_text(json.dumps({"outputs": outputs}))
        database = sqlite3.connect(folder / "health.sqlite")
        database.execute(
            'CREATE TABLE "columns" ("table" TEXT NOT NULL, "column" TEXT NOT NULL, "position" INTEGER NOT NULL, '
            '"type" TEXT NOT NULL, "kind" TEXT NOT NULL, "unit" TEXT, "precision" TEXT, "meaning" TEXT NOT NULL, '
            'PRIMARY KEY ("table", "column"))'
        )
        tables = {}
        for file, declared in kinds.items():
            table = Path(file).stem.replace("-", "_")
            tables[table] = {"source": file}
            position = 0
            for column, kind in declared.items():
                for name, stored in ((column, kind), (column + "_unix", "unix seconds")):
                    position += 1
                    database.execute(
                        'INSERT INTO "columns" VALUES (?, ?, ?, ?, ?, NULL, NULL, ?)', (table, name, position, "TEXT", stored, "m")
                    )
                    if kind != "instant":
                        break
        database.commit()
        database.close()
        (folder / "metadata.json").write_text(json.dumps({"databases": {"health": {"tables": tables}}}))
        self.ok_status(out, pid, token or pid + "-token")

    def ok_status(self, out, pid, token):
        """The status file a job writes for a participant whose run succeeded; a new token is a change."""
        status = {"participant": pid, "status": "ok", "exit_code": 0, "message": None, "sha256": "0" * 64,
                  "finished": "2025-01-01T00:00:00+00:00", "seconds": 1.0, "token": token}  # fmt: skip
        (out / ".cohort" / "status").mkdir(parents=True, exist_ok=True)
        (out / ".cohort" / "status" / f"{pid}.json").write_text(json.dumps(status))

    def merge(self, out, tables, *, check=True, kinds_outside_database=None):
        """merge.py as the workflow's merge rule runs it, in OUT, over .cohort/participants.txt."""
        command = [str(COHORT_PYTHON), str(REPO / "Pipelines/cohort/merge.py"), "--participants", ".cohort/participants.txt",
                   "--tables", json.dumps(tables), "--kinds", json.dumps(kinds_outside_database or {}),
                   "--marker", ".cohort/merged.json"]  # fmt: skip
        result = subprocess.run(command, cwd=out, capture_output=True, text=True, timeout=600)
        if check and result.returncode != 0:
            self.fail(f"merge.py exited {result.returncode}: {result.stderr[-3000:]}")
        return result

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
    return (
        f"read_parquet('{folder}/*/*.parquet', hive_partitioning = true, hive_types = {{'participant': VARCHAR}}, "
        f"union_by_name = true{extra})"
    )


# The README's mapping of declared kinds to Parquet types ("Types").
KIND_TYPES = {"text": "VARCHAR", "integer": "BIGINT", "number": "DOUBLE", "boolean": "BOOLEAN", "date": "DATE",
              "instant": "VARCHAR", "local time": "TIMESTAMP", "local minute": "TIMESTAMP"}  # fmt: skip


def declared_types(folder: Path, file: str) -> list[tuple[str, str]]:
    """[(column, type)] of one output file of a participant's run: its kinds from health.sqlite's
    `columns` table (its table found by metadata.json's `source`), in the file's column order."""
    tables = json.loads((folder / "metadata.json").read_text())["databases"]["health"]["tables"]
    (table,) = [name for name, entry in tables.items() if entry.get("source") == file]
    database = sqlite3.connect(f"file:{folder / 'health.sqlite'}?mode=ro", uri=True)
    kinds = dict(database.execute('SELECT "column", kind FROM "columns" WHERE "table" = ?', (table,)).fetchall())
    database.close()
    if file.endswith(".json"):
        names = list(json.loads((folder / file).read_text())[0])
    else:
        with open(folder / file, newline="", encoding="utf-8") as handle:
            names = next(csv.reader(handle))
    return [(name, KIND_TYPES[kinds[name]]) for name in names]


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
        # Every table's columns have the types of their declarations, as each participant's run
        # wrote them into health.sqlite, by the README's mapping — with values or without: none
        # of these exports holds exercise minutes, respiratory rates or VO2 max.
        for table, info in summary["tables"].items():
            if not info["rows"]:
                continue
            described = [(n, k) for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {dataset(out, table)}")]
            self.assertEqual(described[-1], ("participant", "VARCHAR"))
            for pid in included:
                file = dict(EXPECTED_TABLES, daily="daily.csv").get(table, table + ".csv")
                self.assertEqual(described[:-1], declared_types(out / "participants" / pid, file), f"{table} of {pid}")
        empty = ["exercise_min", "respiratory_rate_per_min", "vo2max_ml_kg_min"]
        daily = dataset(out, "daily")
        self.assertEqual(self.query(f"SELECT {', '.join(f'count({c})' for c in empty)} FROM {daily}"), [(0, 0, 0)])
        types = {n: k for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {daily}")}
        self.assertEqual([types[c] for c in empty], ["DOUBLE"] * 3)

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
            self.assertEqual(born, row["HKCharacteristicTypeIdentifierDateOfBirth"])
        self.assertEqual([pid for pid, _ in me], ["p01", "sample"])
        # An element's attributes are declared text, as written; `child_elements` an integer.
        self.assertEqual(me[1][1], "1990-07-14")
        types = {n: k for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {dataset(out, 'me')}")}
        self.assertEqual(set(types.values()), {"VARCHAR", "BIGINT"})
        self.assertEqual([n for n, k in types.items() if k == "BIGINT"], ["child_elements"])

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
    """merge.py alone, on participant folders written here with their declarations (health.sqlite's
    `columns` table and metadata.json, as a run writes them), for the type rules of the README."""

    def test_types_are_the_declared_ones_whatever_the_values(self):
        out = self.work / "out"
        kinds = {
            "t.csv": {"date": "date", "n": "integer", "x": "number", "flag": "boolean", "at": "instant",
                      "local_time": "local time", "bedtime": "local minute", "code": "text", "later": "a later kind"},
            "r.json": {"recordDate": "text", "execRuntime": "text"},
        }  # fmt: skip
        header = "date,n,x,flag,at,local_time,bedtime,code,later\n"
        # a: `x` holds whole numbers only, `code` digits with a leading zero: text would make them
        # BIGINT; b: every column but the date empty, which text would make VARCHAR.
        a = header + "2024-01-01,3,60,true,2024-01-01T06:55:01+01:00,2024-01-01 06:55:01,2024-01-01 06:55,00017,z\n"
        b = header + "2024-02-01,,,,,,,,\n"
        records = [{"recordDate": "2024-01-01", "execRuntime": "60"}]
        self.participant(out, "a", {"t.csv": a, "r.json": json.dumps(records)}, kinds)
        self.participant(out, "b", {"t.csv": b, "r.json": "[]"}, kinds)
        self.participant(out, "c", {"t.csv": header}, {"t.csv": kinds["t.csv"]})  # a header, no rows: no partition
        (out / ".cohort" / "participants.txt").write_text("a\nb\nc\n")
        self.merge(out, {"t": "t.csv", "r": "r.json"})
        expected = [("date", "DATE"), ("n", "BIGINT"), ("x", "DOUBLE"), ("flag", "BOOLEAN"), ("at", "VARCHAR"),
                    ("local_time", "TIMESTAMP"), ("bedtime", "TIMESTAMP"), ("code", "VARCHAR"), ("later", "VARCHAR")]  # fmt: skip
        t = dataset(out, "t")
        self.assertEqual([(n, k) for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {t}")], expected + [("participant", "VARCHAR")])
        files = sorted((out / "cohort" / "t").glob("*/*.parquet"))
        self.assertEqual([f.parent.name for f in files], ["participant=a", "participant=b"])
        for file in [*files, out / "cohort" / "t" / "_common_metadata"]:  # each file alone, not united by a reader
            self.assertEqual(
                [(n, k) for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM read_parquet('{file}', hive_partitioning = false)")],
                expected,
                file,
            )
        self.assertEqual(
            self.query(f"SELECT * EXCLUDE (participant) FROM {t} ORDER BY participant"),
            [(datetime.date(2024, 1, 1), 3, 60.0, True, "2024-01-01T06:55:01+01:00", datetime.datetime(2024, 1, 1, 6, 55, 1),
              datetime.datetime(2024, 1, 1, 6, 55), "00017", "z"),
             (datetime.date(2024, 2, 1), None, None, None, None, None, None, None, None)],
        )  # fmt: skip
        r = dataset(out, "r")
        self.assertEqual(
            [(n, k) for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {r}")],
            [("recordDate", "VARCHAR"), ("execRuntime", "VARCHAR"), ("participant", "VARCHAR")],
        )
        self.assertEqual(self.query(f"SELECT * FROM {r}"), [("2024-01-01", "60", "a")])
        summary = self.cohort_json(out)
        self.assertEqual(summary["tables"]["t"]["columns"], [list(c) for c in expected])
        self.assertEqual(summary["tables"]["t"]["schemas"], [[list(c) for c in expected]])
        self.assertEqual((summary["tables"]["t"]["rows"], summary["tables"]["t"]["participants"]), (2, 2))
        self.assertTrue((out / "cohort").is_symlink())

    def test_a_column_only_one_participant_has_changes_no_other_file(self):
        out = self.work / "out"
        declared = {"t.csv": {"date": "date", "value": "number"}}
        self.participant(out, "a", {"t.csv": "date,value\n2024-01-01,1\n2024-01-02,2\n"}, declared)
        self.participant(out, "b", {"t.csv": "date,value\n2024-02-01,7\n"}, declared)
        (out / ".cohort" / "participants.txt").write_text("a\nb\n")
        self.merge(out, {"t": "t.csv"})
        t = dataset(out, "t")
        self.assertEqual(
            [(n, k) for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {t}")],
            [("date", "DATE"), ("value", "DOUBLE"), ("participant", "VARCHAR")],
        )
        a_file = next((out / "cohort" / "t" / "participant=a").iterdir())
        a_inode = a_file.stat().st_ino

        # b's run is now a later HealthETL's: one column more, declared an integer; and fractions.
        self.participant(
            out, "b", {"t.csv": "date,value,extra\n2024-02-01,7.5,3\n"},
            {"t.csv": {"date": "date", "value": "number", "extra": "integer"}}, token="b-night-2",
        )  # fmt: skip
        self.merge(out, {"t": "t.csv"})
        expected = [("date", "DATE"), ("value", "DOUBLE"), ("extra", "BIGINT")]
        self.assertEqual([(n, k) for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {t}")], expected + [("participant", "VARCHAR")])
        self.assertEqual(
            self.query(f"SELECT participant, date, value, extra FROM {t} ORDER BY 1, 2"),
            [("a", datetime.date(2024, 1, 1), 1.0, None), ("a", datetime.date(2024, 1, 2), 2.0, None),
             ("b", datetime.date(2024, 2, 1), 7.5, 3)],
        )  # fmt: skip
        # a's partition is the same file, with its own two columns; only b's is new.
        a_file = next((out / "cohort" / "t" / "participant=a").iterdir())
        self.assertEqual(a_file.stat().st_ino, a_inode)
        alone = "DESCRIBE SELECT * FROM read_parquet('{}', hive_partitioning = false)"
        self.assertEqual([(n, k) for n, k, *_ in self.query(alone.format(a_file))], expected[:2])
        # The table's united schema, for readers that take one (pyarrow): every column once.
        schema_file = out / "cohort" / "t" / "_common_metadata"
        self.assertEqual([(n, k) for n, k, *_ in self.query(alone.format(schema_file))], expected)
        schema = pyarrow.parquet.read_schema(schema_file).append(pyarrow.field("participant", pyarrow.string()))
        arrow = pyarrow.dataset.dataset(
            out / "cohort" / "t", format="parquet", schema=schema,
            partitioning=pyarrow.dataset.partitioning(pyarrow.schema([("participant", pyarrow.string())]), flavor="hive"),
        ).to_table()  # fmt: skip
        self.assertEqual(
            sorted(arrow.to_pylist(), key=lambda row: (row["participant"], row["date"])),
            [{"date": datetime.date(2024, 1, 1), "value": 1.0, "extra": None, "participant": "a"},
             {"date": datetime.date(2024, 1, 2), "value": 2.0, "extra": None, "participant": "a"},
             {"date": datetime.date(2024, 2, 1), "value": 7.5, "extra": 3, "participant": "b"}],
        )  # fmt: skip
        summary = self.cohort_json(out)
        self.assertEqual(summary["tables"]["t"]["columns"], [list(c) for c in expected])
        self.assertEqual(summary["tables"]["t"]["schemas"], [[list(c) for c in expected[:2]], [list(c) for c in expected]])
        self.assertEqual({p["participant"]: p.get("schemas") for p in summary["participants"]}, {"a": None, "b": {"t": 1}})

        # b leaves: the table is a's again, columns and schema file included; a's file stays.
        (out / ".cohort" / "participants.txt").write_text("a\n")
        self.merge(out, {"t": "t.csv"})
        self.assertEqual(next((out / "cohort" / "t" / "participant=a").iterdir()).stat().st_ino, a_inode)
        self.assertEqual([(n, k) for n, k, *_ in self.query(alone.format(schema_file))], expected[:2])
        self.assertEqual(self.cohort_json(out)["tables"]["t"]["columns"], [list(c) for c in expected[:2]])

    def test_outputs_without_declarations_stop_the_merge_with_one_line(self):
        out = self.work / "out"
        self.participant(out, "a", {"t.csv": "date,value\n2024-01-01,1\n"}, {"t.csv": {"date": "date", "value": "number"}})
        self.participant(out, "b", {"t.csv": "date,value\n2024-02-01,7\n"}, {"t.csv": {"date": "date", "value": "integer"}})
        self.participant(out, "c", {"t.csv": "date,value\n2024-03-01,8\n"})
        (out / "participants" / "c" / "health.sqlite").unlink()  # as a run with --no-database leaves it
        (out / ".cohort" / "participants.txt").write_text("a\nc\n")
        result = self.merge(out, {"t": "t.csv"}, check=False)
        self.assertEqual(result.returncode, 65)
        self.assertEqual(
            result.stderr,
            "cohort: participant c: t.csv: no declaration of its columns: neither its health.sqlite (with "
            "metadata.json) nor config.yaml's kinds_outside_database names this file. The cohort runs `healthetl "
            "run` with the database; delete this participant's status file (OUT/.cohort/status/c.json) to rerun it\n",
        )
        self.assertFalse((out / "cohort").exists())
        # Two declarations of one column (runs of two HealthETL versions) are not united either.
        (out / ".cohort" / "participants.txt").write_text("a\nb\n")
        result = self.merge(out, {"t": "t.csv"}, check=False)
        self.assertEqual(result.returncode, 65)
        self.assertIn("cohort: table t: column 'value' is declared DOUBLE by some participants and BIGINT by others", result.stderr)
        self.assertFalse((out / "cohort").exists())
        self.assertEqual(list((out / ".cohort" / "merged").iterdir()), [])  # no staging folder left behind
        # An elements file takes the kinds config.yaml gives for files the database leaves out.
        self.participant(out, "c", {"elements/Me.csv": "element,DateOfBirth,child_elements\nMe,1990-07-14,0\n"})
        (out / "participants" / "c" / "health.sqlite").unlink()
        (out / ".cohort" / "participants.txt").write_text("c\n")
        self.merge(out, {"me": "elements/Me.csv"}, kinds_outside_database={"elements/*.csv": {"child_elements": "integer", "*": "text"}})
        self.assertEqual(
            self.query(f"SELECT * FROM {dataset(out, 'me')}"), [("Me", "1990-07-14", 0, "c")]
        )

    def test_one_change_among_200_participants_changes_only_its_own_files(self):
        # 199 participants with the outputs of a two-day export (no swimming, no VO2 max, no
        # exercise minutes: those columns empty), as `healthetl run` writes them for the
        # cohort; then one changes to a 20-day export with swims. Only its files may change.
        import yaml  # PyYAML, pinned in Tests/EndToEnd/requirements.txt (Datasette's)

        config = yaml.safe_load((REPO / "Pipelines" / "cohort" / "config.yaml").read_text())
        tables, kinds = config["tables"], config.get("kinds_outside_database", {})
        runs = self.work / "runs"
        for name, export in (("two-days", GENERATED / "d2.xml"), ("p01", GENERATED / "p01.zip")):
            command = [str(BINARY), "run", "--pipeline", str(REPO / "Pipelines" / "default.json"), "--out", str(runs / name),
                       "--tz", "auto", "--quiet", str(export)]  # fmt: skip
            subprocess.run(command, check=True, capture_output=True, timeout=120)
        out = self.work / "out"
        ids = [f"p{n:03d}" for n in range(200)]
        for pid in ids:  # the same outputs, linked: 200 participants at the cost of one
            shutil.copytree(runs / "two-days", out / "participants" / pid, copy_function=os.link)
            self.ok_status(out, pid, pid + "-1")
        (out / ".cohort" / "participants.txt").write_text("".join(pid + "\n" for pid in ids))
        self.merge(out, tables, kinds_outside_database=kinds)

        def files():
            root = Path(os.path.realpath(out / "cohort"))
            return {str(p.relative_to(root)): p.stat().st_ino for p in root.rglob("*") if p.is_file() and p.name != "run.json"}

        before = files()
        daily = dataset(out, "daily")
        empty = ["swim_distance_m", "swim_strokes", "vo2max_ml_kg_min", "exercise_min", "respiratory_rate_per_min"]
        self.assertEqual(self.query(f"SELECT {', '.join(f'count({c})' for c in empty)} FROM {daily}"), [(0,) * len(empty)])
        types = {n: k for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {daily}")}
        self.assertEqual({c: types[c] for c in empty}, dict.fromkeys(empty, "DOUBLE"))

        changed = "p100"
        shutil.rmtree(out / "participants" / changed)
        shutil.copytree(runs / "p01", out / "participants" / changed, copy_function=os.link)
        self.ok_status(out, changed, changed + "-2")
        self.merge(out, tables, kinds_outside_database=kinds)
        after = files()
        self.assertEqual(self.query(f"SELECT count(swim_distance_m) > 0 FROM {daily} WHERE participant = '{changed}'"), [(True,)])
        self.assertEqual({n: k for n, k, *_ in self.query(f"DESCRIBE SELECT * FROM {daily}")}, types)
        different = sorted(path for path in after if before.get(path) != after[path])
        self.assertTrue(different)
        # Besides its partitions, only the schema files of tables that had no rows before (the
        # swims, which none of the others has) are new.
        new_tables = {"swim_laps", "stats/swimming-distance-per-day", "stats/swimming-strokes-per-day"}
        self.assertEqual(new_tables & {str(Path(p).parent) for p in before}, set())
        self.assertEqual(
            [p for p in different if f"/participant={changed}/" not in p],
            sorted(f"{table}/_common_metadata" for table in new_tables),
        )
        self.assertEqual(sorted(p for p in before if p not in after), [])
        unchanged = sum(1 for path in after if before.get(path) == after[path]) / len(after)
        self.assertGreaterEqual(unchanged, 0.99)
        self.assertEqual(self.cohort_json(out)["written"], {"participants_read": 1, "participants_linked": 199})


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
                declared = {"t.csv": {"night": "integer", "value": "integer"}}
                self.participant(out, pid, {"t.csv": "night,value\n" + f"{n},{n}\n" * n}, declared)
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
        wrapper = self.recording_wrapper(record)
        # Every merge to Slurm (merge_here_max_participants=0): two participant jobs, then the merge's.
        result = self.run_slurm(cohort, out, "--healthetl", wrapper, "--config", "merge_here_max_participants=0")
        self.assertEqual((result.stdout + result.stderr).count("has been submitted with SLURM jobid"), 3)
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
        # A night with one change: its participant's job is started from the submitting process
        # with srun (no sbatch, no status checks), and the merge, which reads one participant's
        # outputs, runs there too: both local rules.
        shutil.copy(GENERATED / "d2.xml", cohort / "p03.xml")
        record.write_text("")
        night = self.run_slurm(cohort, out, "--healthetl", wrapper)
        messages = night.stdout + night.stderr
        self.assertEqual(messages.count("has been submitted with SLURM jobid"), 0)
        self.assertEqual((messages.count("localrule batch:"), messages.count("localrule merge:")), (1, 1))
        events = [line.split() for line in record.read_text().splitlines()]
        self.assertEqual([kind for kind, *_ in events], ["start", "end"])
        self.assertRegex(events[0][2] if len(events[0]) > 2 else "", r"^\d+$", "healthetl ran outside a Slurm job")
        summary = self.cohort_json(out)
        self.assertEqual(
            {p["participant"]: p["status"] for p in summary["participants"]},
            {"p01": "unchanged", "p03": "ok", BAD: "bad_input", "sample": "unchanged"},
        )
        self.assert_merged_matches_participants(out, ["p01", "p03", "sample"])

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
