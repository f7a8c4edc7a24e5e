"""Running out of file descriptors is the machine's fault, said as such, at every point a run meets it.

`ulimit -n N` (soft and hard) for every N from 5 (the pipeline file is the first thing opened) to
where the default pipeline succeeds: each limit stops a run at another open — the pipeline, the
workout code table, the output folder, the tz database, the inbox, health.sqlite, the report
template, the workbook's row file of each sheet, each CSV. Before, these were "unknown time zone"
(64), "report.html: not readable" (64), "inbox: no such file or folder" (66), "the sheet was
refused" without an error number (74, which a night counted against the export and quarantined
on the third) and SQLite's "unable to open database file" (74).

Now every one exits 73 with "too many open files", leaves no staging folder and no output folder,
and a night neither counts it against the export nor quarantines it: three nights at such a limit
leave the export untouched, and the next night with descriptors enough processes it.
"""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary  # noqa: E402

PIPELINE = str(REPO / "Pipelines/default.json")
# What a run said before for a limit of descriptors, none of which is true.
MISLEADING = ("no such file", "not readable", "unknown time zone", "was refused", "unable to open", "failed so on")


def limited(limit: int):
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))


class DescriptorLimitTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.root = Path(cls.tmp.name)
        cls.export = cls.root / "export.zip"
        subprocess.run([binary(), "sample", "--days", "10", "--seed", "1", "--zip", "--out", str(cls.export)],
                       check=True, capture_output=True, timeout=300)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def healthetl(self, arguments: list[str], limit: int) -> subprocess.CompletedProcess:
        return subprocess.run([binary(), *arguments], capture_output=True, text=True, timeout=300,
                              preexec_fn=limited(limit))

    def assert_said_as_such(self, done: subprocess.CompletedProcess, limit: int) -> None:
        self.assertEqual(done.returncode, 73, f"ulimit -n {limit}: {done.stderr}")
        self.assertIn("too many open files", done.stderr.lower(), f"ulimit -n {limit}")
        for words in MISLEADING:
            self.assertNotIn(words, done.stderr, f"ulimit -n {limit}: {done.stderr}")

    def test_every_limit_a_run_meets_is_said_as_such(self):
        messages = []
        for limit in range(5, 80):
            out = self.root / f"run-{limit}"
            done = self.healthetl(["run", "--pipeline", PIPELINE, "--quiet", "--tz", "Europe/Berlin", "--out",
                                   str(out), str(self.export)], limit)
            if done.returncode == 0:
                break
            messages.append(done.stderr)
            with self.subTest(limit=limit):
                self.assert_said_as_such(done, limit)
                self.assertFalse(out.exists(), "a failed run left an output folder")
                self.assertEqual(list(self.root.glob(f".run-{limit}.healthetl-staging-*")), [])
        else:
            self.fail("the run never succeeded below 80 descriptors")
        self.assertGreaterEqual(limit, 30, "the run needs fewer descriptors than it did: lower the range")
        # The sweep met each kind of open (which limit meets which varies a little with threads).
        for name in ("default.json", "health.sqlite", "report.html", "health.xlsx", "stats/"):
            self.assertTrue(any(name in message for message in messages), f"no run stopped at {name}")

    def test_a_night_without_descriptors_enough_never_counts_against_the_export(self):
        inbox = self.root / "inbox"
        inbox.mkdir()
        shutil.copy(self.export, inbox / "export.zip")
        for limit in (10, 11, 13, 20, 32, 40):
            out = self.root / f"night-{limit}"
            with self.subTest(limit=limit):
                # Three nights, as many as quarantine an export that fails by its own fault.
                for _ in range(3):
                    done = self.healthetl(["nightly", "--pipeline", PIPELINE, "--tz", "Europe/Berlin", "--inbox",
                                           str(inbox), "--out", str(out)], limit)
                    self.assert_said_as_such(done, limit)
                state_file = out / ".healthetl-state.json"
                state = json.loads(state_file.read_text()) if state_file.exists() else {}
                self.assertEqual(state.get("failing", []), [])
                self.assertEqual(state.get("quarantined", []), [])
                done = subprocess.run([binary(), "nightly", "--pipeline", PIPELINE, "--tz", "Europe/Berlin", "--inbox",
                                       str(inbox), "--out", str(out)], capture_output=True, text=True, timeout=300)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn("processed 1 export(s) (export.zip)", done.stderr)


if __name__ == "__main__":
    unittest.main()
