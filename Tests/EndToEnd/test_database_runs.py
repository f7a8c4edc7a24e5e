"""`health.sqlite` as others use it: Datasette serves it, a kill cannot break it, a night replaces it.

- Datasette (pinned in requirements.txt) serves the database with its `metadata.json` on a free
  loopback port: a table's JSON has the rows of its CSV, a SQL query's JSON the count worked out
  from the CSV, and the table's description comes from the declarations. Stopped by PID.
- A run killed (SIGKILL) while its database is staged leaves the previous `health.sqlite` byte for
  byte, and it still passes `PRAGMA integrity_check`.
- `healthetl nightly`: after a night, the database is the one of the newest export; a reader that
  holds a connection open through the night keeps reading the database it opened, unchanged,
  while a new connection sees the new one.

The binary is `HEALTHETL_BIN` (set by `make test-e2e`), else the debug build.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import binary, csv_rows  # noqa: E402


def sample(path: Path, days: int, seed: int) -> Path:
    subprocess.run([binary(), "sample", "--days", str(days), "--seed", str(seed), "--zip", "--out", str(path)],
                   check=True, capture_output=True, timeout=300)
    return path


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def table_dump(database: sqlite3.Connection, table: str) -> list[tuple]:
    return database.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()


class DatasetteTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        cls.out = root / "out"
        subprocess.run([binary(), "run", "--quiet", "--tz", "Europe/Berlin", "--no-workbook", "--out", str(cls.out),
                        str(sample(root / "export.zip", 21, 5))], check=True, capture_output=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def get_json(self, base: str, path: str):
        with urllib.request.urlopen(base + path, timeout=30) as response:
            return json.loads(response.read())

    def test_datasette_serves_a_table_and_a_query_with_the_metadata(self):
        datasette = Path(sys.executable).parent / "datasette"
        self.assertTrue(datasette.exists(), "datasette is missing: pip install -r Tests/EndToEnd/requirements.txt")
        port = free_port()
        log = (Path(self.tmp.name) / "datasette.log").open("w")
        self.addCleanup(log.close)
        server = subprocess.Popen(
            [str(datasette), "serve", str(self.out / "health.sqlite"), "--metadata", str(self.out / "metadata.json"),
             "--host", "127.0.0.1", "--port", str(port)], stdout=log, stderr=subprocess.STDOUT)

        def stop():
            if server.poll() is None:
                os.kill(server.pid, signal.SIGTERM)
                try:
                    server.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    os.kill(server.pid, signal.SIGKILL)
                    server.wait(timeout=20)
        self.addCleanup(stop)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 90
        while True:
            try:
                self.get_json(base, "/-/versions.json")
                break
            except OSError:
                self.assertIsNone(server.poll(), "datasette ended: " + (Path(self.tmp.name) / "datasette.log")
                                  .read_text())
                self.assertLess(time.monotonic(), deadline, "datasette did not answer within 90 s")
                time.sleep(0.3)

        daily = csv_rows(self.out / "daily.csv")
        rows = self.get_json(base, "/health/daily.json?_shape=array&_size=max")
        self.assertEqual([row["date"] for row in rows], [row["date"] for row in daily])
        self.assertEqual([row["steps"] for row in rows],
                         [float(row["steps"]) if row["steps"] else None for row in daily])

        workouts = csv_rows(self.out / "workouts.csv")
        running = sum(1 for row in workouts if row["activity_type"] == "Running")
        query = urllib.parse.quote("select count(*) as n from workouts where activity_type = 'Running'")
        self.assertEqual(self.get_json(base, f"/health.json?sql={query}&_shape=array"), [{"n": running}])

        metadata = self.get_json(base, "/-/metadata.json")
        self.assertEqual(metadata["databases"]["health"]["tables"]["daily"]["columns"]["date"], "the local date")


class KilledRunTests(unittest.TestCase):
    def test_a_kill_while_the_database_is_written_leaves_the_previous_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            out = root / "out"
            subprocess.run([binary(), "run", "--quiet", "--tz", "UTC", "--no-workbook", "--out", str(out),
                            str(sample(root / "small.zip", 7, 3))], check=True, capture_output=True, timeout=300)
            before = (out / "health.sqlite").read_bytes()
            bigger = sample(root / "bigger.zip", 240, 4)
            run = subprocess.Popen([binary(), "run", "--quiet", "--tz", "UTC", "--no-workbook", "--out", str(out),
                                    str(bigger)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            staged = root / f".out.healthetl-staging-{run.pid}" / "health.sqlite"
            deadline = time.monotonic() + 300
            while not staged.exists() and run.poll() is None and time.monotonic() < deadline:
                time.sleep(0.002)
            seen = staged.exists()
            os.kill(run.pid, signal.SIGKILL)
            run.wait(timeout=60)
            self.assertTrue(seen, "the run ended before its database was staged")
            self.assertEqual(run.returncode, -signal.SIGKILL)
            self.assertEqual((out / "health.sqlite").read_bytes(), before)
            checked = subprocess.run(["sqlite3", "-readonly", str(out / "health.sqlite"), "PRAGMA integrity_check;"],
                                     check=True, capture_output=True, text=True, timeout=60)
            self.assertEqual(checked.stdout, "ok\n")


class NightlyDatabaseTests(unittest.TestCase):
    def test_a_night_swaps_in_the_newest_database_under_an_open_reader(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            inbox, out = root / "inbox", root / "out"
            inbox.mkdir()

            def night():
                return subprocess.Popen([binary(), "nightly", "--inbox", str(inbox), "--out", str(out),
                                         "--tz", "UTC"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

            first = sample(inbox / "2024-01.zip", 10, 11)
            started = night()
            self.assertEqual(started.wait(timeout=300), 0)
            started.stderr.close()
            reader = sqlite3.connect(f"file:{out / 'health.sqlite'}?mode=ro", uri=True)
            self.addCleanup(reader.close)
            snapshot = table_dump(reader, "daily")
            self.assertEqual(len(snapshot), len(csv_rows(out / "daily.csv")))

            # Two new exports, the newer one last (by modification time, then name).
            older = sample(inbox / "2024-02.zip", 20, 12)
            newest = sample(inbox / "2024-03.zip", 30, 13)
            os.utime(first, (1_700_000_000, 1_700_000_000))
            os.utime(older, (1_700_000_100, 1_700_000_100))
            os.utime(newest, (1_700_000_200, 1_700_000_200))
            running = night()
            reads = 0
            while running.poll() is None:
                self.assertEqual(table_dump(reader, "daily"), snapshot, "the open reader saw a change")
                reads += 1
                time.sleep(0.01)
            with running.stderr:
                self.assertEqual(running.returncode, 0, running.stderr.read())
            self.assertGreater(reads, 0)
            self.assertEqual(table_dump(reader, "daily"), snapshot)

            alone = root / "alone"
            subprocess.run([binary(), "run", "--quiet", "--tz", "UTC", "--no-workbook", "--out", str(alone),
                            str(newest)], check=True, capture_output=True, timeout=300)
            fresh = sqlite3.connect(f"file:{out / 'health.sqlite'}?mode=ro", uri=True)
            self.addCleanup(fresh.close)
            expected = sqlite3.connect(f"file:{alone / 'health.sqlite'}?mode=ro", uri=True)
            self.addCleanup(expected.close)
            for table in ("daily", "workouts", "steps_per_day", "heart_rate_per_minute"):
                self.assertEqual(table_dump(fresh, table), table_dump(expected, table), table)
            self.assertNotEqual(table_dump(fresh, "daily"), snapshot)


if __name__ == "__main__":
    unittest.main()
