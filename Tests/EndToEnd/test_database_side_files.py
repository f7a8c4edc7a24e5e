"""A new `health.sqlite` never sits beside the side files of the database it replaces.

SQLite keeps `health.sqlite-journal` (rollback mode) or `health.sqlite-wal` and `-shm` (WAL mode)
beside a database, and whoever opens the file next applies them to it. A run replaces the file;
were those carried over with the folder's other files, the next opener would apply the old
database's pages to the new one ("database disk image is malformed"). Each case below leaves them
as readers do, replaces the database with another export's, then checks with the real `sqlite3`
tool and Python's sqlite3:

- rollback mode, a hot journal left by a client (the `sqlite3` tool or Python) killed (SIGKILL) in
  the middle of a write whose pages had already reached the file; the run either swaps the folder
  or, from inside it, renames file by file;
- WAL mode, a client (the `sqlite3` tool or Python) that enabled WAL and wrote, still open.

After the run: `PRAGMA integrity_check` is `ok` for both tools, no side file is left beside the new
file, it holds the new export's rows, and a reader that had the old file open reads the old
database as it was committed (in rollback mode the hot journal was rolled back into the old file
before it was replaced; in WAL mode the client keeps its own log).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from contextlib import closing
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows  # noqa: E402

SIDE_FILES = ("health.sqlite-journal", "health.sqlite-wal", "health.sqlite-shm")
# A write that reaches the database file before its commit: a cache of 2 pages makes SQLite
# spill changed pages to the file once the journal holds their old contents.
SPILLING_WRITE = ("PRAGMA cache_size = 2; BEGIN; "
                  "UPDATE heart_rate_per_minute SET avg = -1, type = 'overwritten by a killed client'; "
                  "UPDATE daily SET steps = -1;")


def sample(path: Path, days: int, seed: int) -> Path:
    subprocess.run([binary(), "sample", "--days", str(days), "--seed", str(seed), "--zip", "--out", str(path)],
                   check=True, capture_output=True, timeout=300)
    return path


def run(export: Path, out: Path, cwd: Path | None = None) -> None:
    done = subprocess.run([binary(), "run", "--pipeline", str(REPO / "Pipelines/default.json"), "--quiet", "--tz",
                           "UTC", "--no-workbook", "--out", str(out), str(export)], capture_output=True, text=True, timeout=300, cwd=cwd)
    if done.returncode != 0:
        raise AssertionError(f"healthetl run exited {done.returncode}: {done.stderr}")


def dump(connection: sqlite3.Connection, table: str) -> list[tuple]:
    return connection.execute(f'SELECT * FROM "{table}" ORDER BY rowid').fetchall()


class SQLiteTool:
    """The `sqlite3` command-line tool on a pipe, answering one command at a time."""

    def __init__(self, database: Path):
        self.process = subprocess.Popen(["sqlite3", "-batch", str(database)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def ask(self, sql: str) -> list[str]:
        """The lines `sql` printed (the tool prints errors there too)."""
        self.process.stdin.write(sql + "\nSELECT 'end-of-answer';\n")
        self.process.stdin.flush()
        lines = []
        while (line := self.process.stdout.readline()) not in ("end-of-answer\n", ""):
            lines.append(line.rstrip("\n"))
        return lines

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)
        self.process.stdin.close()
        self.process.stdout.close()


PYTHON_KILLED_WRITER = textwrap.dedent("""
    import sqlite3, sys, time
    connection = sqlite3.connect(sys.argv[1], isolation_level=None)
    connection.executescript(sys.argv[2])
    print("written", flush=True)
    time.sleep(600)
""")


class DatabaseSideFilesTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        cls.old_export = sample(root / "old.zip", 10, 1)
        cls.new_export = sample(root / "new.zip", 30, 2)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def fresh_output(self, name: str) -> Path:
        out = Path(self.tmp.name) / name
        run(self.old_export, out)
        return out

    def assert_new_database_whole(self, out: Path) -> None:
        left = [side for side in SIDE_FILES if (out / side).exists()]
        checked = subprocess.run(["sqlite3", str(out / "health.sqlite"), "PRAGMA integrity_check;"],
                                 capture_output=True, text=True, timeout=60)
        self.assertEqual((checked.returncode, checked.stdout, checked.stderr), (0, "ok\n", ""))
        with closing(sqlite3.connect(out / "health.sqlite")) as connection:
            self.assertEqual(connection.execute("PRAGMA integrity_check").fetchall(), [("ok",)])
            self.assertEqual(len(dump(connection, "daily")), len(csv_rows(out / "daily.csv")))
            self.assertEqual(len(dump(connection, "heart_rate_per_minute")),
                             len(csv_rows(out / "stats/heart-rate-per-minute.csv")))
        self.assertEqual(left, [], "side files left beside the new database")
        self.assertEqual([side for side in SIDE_FILES if (out / side).exists()], [], "side files after the checks")

    def leave_hot_journal(self, out: Path, client: str) -> None:
        """A client killed in the middle of a write: its journal is hot, the file half-changed."""
        before = (out / "health.sqlite").read_bytes()
        if client == "sqlite3":
            tool = SQLiteTool(out / "health.sqlite")
            self.assertEqual(tool.ask(SPILLING_WRITE), [])
            tool.kill()
        else:
            writer = subprocess.Popen([sys.executable, "-c", PYTHON_KILLED_WRITER, str(out / "health.sqlite"),
                                       SPILLING_WRITE], stdout=subprocess.PIPE, text=True)
            self.assertEqual(writer.stdout.readline(), "written\n")
            os.kill(writer.pid, signal.SIGKILL)
            writer.wait(timeout=30)
            writer.stdout.close()
        self.assertTrue((out / "health.sqlite-journal").exists())
        self.assertNotEqual((out / "health.sqlite").read_bytes(), before, "no page reached the file")

    def test_a_hot_journal_stays_with_the_database_it_belongs_to(self):
        for client in ("sqlite3", "python"):
            for inside in (False, True):
                with self.subTest(client=client, run_from_inside_the_folder=inside):
                    out = self.fresh_output(f"rollback-{client}-{inside}")
                    with closing(sqlite3.connect(out / "health.sqlite")) as reader:
                        committed = dump(reader, "heart_rate_per_minute"), dump(reader, "daily")
                    # Opened before the crash and not read since: holds the old file, no pages.
                    old_reader = sqlite3.connect(out / "health.sqlite")
                    self.addCleanup(old_reader.close)
                    self.leave_hot_journal(out, client)
                    run(self.new_export, out, cwd=out if inside else None)
                    self.assert_new_database_whole(out)
                    self.assertEqual((dump(old_reader, "heart_rate_per_minute"), dump(old_reader, "daily")),
                                     committed, "the old reader does not see the old database as committed")

    def test_a_client_in_wal_mode_keeps_its_log_and_the_new_database_is_whole(self):
        for client in ("sqlite3", "python"):
            with self.subTest(client=client):
                out = self.fresh_output(f"wal-{client}")
                write = ("CREATE TABLE notes (note TEXT); "
                         "WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 2000) "
                         "INSERT INTO notes SELECT 'a note by a client, number ' || k FROM n; "
                         "UPDATE daily SET steps = 1;")
                if client == "sqlite3":
                    tool = SQLiteTool(out / "health.sqlite")
                    self.addCleanup(tool.kill)
                    self.assertEqual(tool.ask("PRAGMA journal_mode = WAL;" + write), ["wal"])

                    def read():
                        return tool.ask("SELECT count(*), sum(steps) FROM daily; SELECT count(*) FROM notes;")
                else:
                    connection = sqlite3.connect(out / "health.sqlite", isolation_level=None)
                    self.addCleanup(connection.close)
                    self.assertEqual(connection.execute("PRAGMA journal_mode = WAL").fetchone(), ("wal",))
                    connection.executescript(write)

                    def read():
                        return [connection.execute("SELECT count(*), sum(steps) FROM daily").fetchone(),
                                connection.execute("SELECT count(*) FROM notes").fetchone()]
                seen = read()
                self.assertIn("2000", str(seen[1]))
                self.assertGreater((out / "health.sqlite-wal").stat().st_size, 0)
                run(self.new_export, out)
                self.assert_new_database_whole(out)
                again = read()
                self.assertEqual(again, seen, "the open client lost its view of the old database")


if __name__ == "__main__":
    unittest.main()
