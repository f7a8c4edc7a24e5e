"""A night whose run dies (SIGKILL, an abort, the kernel's out-of-memory killer) counts against the
export it was running, like any failure that may be the export's own doing: on the third night in a
row it has died on, it is quarantined, and the exports after it are never held back by it
(Pipelines/docs/nightly.md, "Runs and the nightly batch").

Before, a death was never counted: an export that took the process down every night (300,000 tiny
workouts under a 700 MB limit) blocked the inbox for good. The nightly batch now commits the export
it is about to run (`attempt` in the state) before the run starts; a night that finds it still set
counts one death, and runs an export that died before after the others.

The death is real and no test hook is compiled into healthetl: strace holds every `openat` of the
doomed export for a second, and the test sends SIGKILL to healthetl once the state names the
doomed export as its attempt, while the run's own open of it is held. Needs strace (make deps
installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary  # noqa: E402
from test_content_names import export, record  # noqa: E402

SAMPLES = str(REPO / "Pipelines" / "samples.json")
TIMEOUT = 600


class NightlyDeathTests(unittest.TestCase):
    def setUp(self):
        if shutil.which("strace") is None:
            self.skipTest("needs strace (make deps installs it)")
        self.binary = binary()
        self.work = Path(tempfile.mkdtemp(prefix="healthetl-deaths-"))
        self.inbox = self.work / "inbox"
        self.out = self.work / "out"
        self.inbox.mkdir()

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def write(self, name: str, text: str, day: int) -> Path:
        path = self.inbox / name
        path.write_text(text, encoding="utf-8")
        os.utime(path, (1_700_000_000 + day * 86_400,) * 2)  # the inbox goes oldest first
        return path

    def night(self, doomed: Path, kill: bool = True) -> subprocess.CompletedProcess:
        """A night under strace, which holds each open of `doomed` for a second; with `kill`,
        healthetl is killed (SIGKILL) as soon as the state says it is attempting `doomed`."""
        command = ["strace", "-f", "-qq", "-o", "/dev/null", "-P", str(doomed), "-e", "trace=openat",
                   "-e", "inject=openat:delay_enter=1s",
                   self.binary, "nightly", "--inbox", str(self.inbox), "--out", str(self.out),
                   "--pipeline", SAMPLES, "--tz", "UTC"]
        # A state left by the night before may name it too: only a state this night committed counts.
        before = self.state_identity()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + TIMEOUT
        while kill and process.poll() is None and time.monotonic() < deadline:
            if self.state_identity() != before and self.attempting() == doomed.name:
                children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
                for child in children:  # healthetl, strace's only child
                    os.kill(int(child), signal.SIGKILL)
                break
            time.sleep(0.02)
        stdout, stderr = process.communicate(timeout=TIMEOUT)
        return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)

    def state_identity(self):
        """Each commit puts a new state file in place (a new inode)."""
        try:
            info = (self.out / ".healthetl-state.json").stat()
            return info.st_ino, info.st_mtime_ns
        except FileNotFoundError:
            return None

    def attempting(self) -> str | None:
        try:
            return (json.loads((self.out / ".healthetl-state.json").read_text(encoding="utf-8")).get("attempt")
                    or {}).get("name")
        except (FileNotFoundError, json.JSONDecodeError):
            return None

    def state(self) -> dict:
        return json.loads((self.out / ".healthetl-state.json").read_text(encoding="utf-8"))

    def assert_killed(self, result: subprocess.CompletedProcess):
        self.assertIn(result.returncode, (-signal.SIGKILL, 128 + signal.SIGKILL), result.stderr)

    def test_an_export_whose_run_dies_is_quarantined_after_three_nights(self):
        doomed = self.write("a-doomed.xml", export([record("HKQuantityTypeIdentifierStepCount", 1)]), day=0)
        self.write("b-good.xml", export([record("HKQuantityTypeIdentifierStepCount", 2)]), day=1)

        # Night 1: the oldest export first; the run dies on it, with the attempt committed.
        self.assert_killed(self.night(doomed))
        state = self.state()
        self.assertEqual(state["attempt"]["name"], "a-doomed.xml")
        self.assertEqual(state["processed"], [])

        # Night 2: the death is counted, the good export goes first and is processed, then the
        # doomed one dies again.
        self.assert_killed(self.night(doomed))
        state = self.state()
        self.assertEqual([e["name"] for e in state["processed"]], ["b-good.xml"])
        self.assertEqual([(f["name"], f["exitCode"], f["nights"]) for f in state["failing"]],
                         [("a-doomed.xml", 0, 1)])

        # Night 3: counted again (2 nights), tried last, dies.
        self.assert_killed(self.night(doomed))
        self.assertEqual([f["nights"] for f in self.state()["failing"]], [2])

        # The next night counts the third death: quarantined at once, not run again, and the
        # night ends as one that quarantined an export: exit 65.
        result = self.night(doomed, kill=False)
        self.assertEqual(result.returncode, 65, result.stderr)
        state = self.state()
        self.assertNotIn("attempt", state)
        self.assertNotIn("failing", state)
        [quarantined] = state["quarantined"]
        self.assertEqual((quarantined["name"], quarantined["exitCode"]), ("a-doomed.xml", 0))
        self.assertIn("died", quarantined["reason"])
        self.assertIn("3 night(s)", quarantined["reason"])
        report = json.loads((self.out / "run.json").read_text(encoding="utf-8"))
        self.assertEqual([q["name"] for q in report["nightly"]["quarantined"]], ["a-doomed.xml"])

        # And later nights skip it as still quarantined, exit 0.
        result = self.night(doomed, kill=False)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_a_night_killed_after_its_commit_counts_nothing(self):
        # The attempt is set, but the export is processed: the run died after its commit.
        good = self.write("good.xml", export([record("HKQuantityTypeIdentifierStepCount", 2)]), day=0)
        result = subprocess.run([self.binary, "nightly", "--inbox", str(self.inbox), "--out", str(self.out),
                                 "--pipeline", SAMPLES, "--tz", "UTC"],
                                capture_output=True, text=True, timeout=TIMEOUT)
        self.assertEqual(result.returncode, 0, result.stderr)
        state_path = self.out / ".healthetl-state.json"
        state = self.state()
        self.assertNotIn("attempt", state)
        state["version"] = 6
        state["attempt"] = dict(state["processed"][0])
        state_path.write_text(json.dumps(state), encoding="utf-8")
        result = self.night(good, kill=False)
        self.assertEqual(result.returncode, 0, result.stderr)
        state = self.state()
        self.assertNotIn("attempt", state)
        self.assertNotIn("failing", state)
        self.assertEqual(state["quarantined"], [])


if __name__ == "__main__":
    unittest.main()
