"""The output budget (Pipelines/docs/outputs.md, "Output budget"): a run whose output files pass
allowance + ratio x the export's size stops while writing with exit 65 and writes nothing, and a
night quarantines the export instead of stopping on a full disk every night.

The budget is made small here (`--output-allowance 0 --output-budget 1`) so that an export of a
few KB passes it: the default pipeline writes every table's header, far more than 1 x the XML.
Before the budget, such a run exited 0 (and a 74 KB zip could write 1.5 GB).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import binary  # noqa: E402
from test_content_names import export, record  # noqa: E402

TIMEOUT = 600
SMALL = export([record("HKQuantityTypeIdentifierStepCount", value, minute) for value, minute in ((5, 1), (7, 2))])
TIGHT = ["--output-allowance", "0", "--output-budget", "1"]


class OutputBudgetTests(unittest.TestCase):
    def setUp(self):
        self.binary = binary()
        self.work = Path(tempfile.mkdtemp(prefix="healthetl-budget-"))
        self.addCleanup(shutil.rmtree, self.work, True)
        self.export = self.work / "inbox" / "small.xml"
        self.export.parent.mkdir()
        self.export.write_text(SMALL, encoding="utf-8")

    def healthetl(self, *arguments) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, *map(str, arguments)], capture_output=True, text=True, timeout=TIMEOUT)

    def test_a_run_past_its_budget_stops_with_65_and_writes_nothing(self):
        out = self.work / "out"
        result = self.healthetl("run", "--quiet", "--tz", "UTC", "--out", out, *TIGHT, self.export)
        self.assertEqual(result.returncode, 65, result.stderr)
        size = self.export.stat().st_size
        self.assertRegex(
            result.stderr,
            rf"^healthetl: error: the outputs grew past {size} bytes \(\d+ staged, the last to \S+\) for an export of "
            rf"{size} bytes: more than its content can plausibly need, so nothing was written\. If the export is right, "
            r"raise --output-budget")
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
        self.assertFalse(out.exists())  # the run created it, and leaves no trace
        self.assertEqual([p.name for p in self.work.iterdir()], ["inbox"])  # no staging folder either

        # The default budget (64 MB + 50 x) lets the same export through.
        result = self.healthetl("run", "--quiet", "--tz", "UTC", "--out", out, self.export)
        self.assertEqual(result.returncode, 0, result.stderr)
        report = json.loads((out / "run.json").read_text(encoding="utf-8"))
        written = sum(o["bytes"] for o in report["outputs"] if o["path"] not in ("health.sqlite", "health.xlsx"))
        self.assertGreater(written, size)  # so the tight budget above had to stop it

        # Off with 0.
        shutil.rmtree(out)
        result = self.healthetl("run", "--quiet", "--tz", "UTC", "--out", out, *TIGHT[:2], "--output-budget", "0",
                                self.export)
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_bad_values_are_usage_errors(self):
        for option, value in (("--output-budget", "-1"), ("--output-budget", "nan"), ("--output-allowance", "1.5")):
            result = self.healthetl("run", "--out", self.work / "out", option, value, self.export)
            self.assertEqual(result.returncode, 64, (option, value, result.stderr))
            self.assertIn(option, result.stderr)

    def test_a_night_quarantines_an_export_past_its_budget(self):
        # The export's fault, like a malformed one: quarantined at once, the night exits 65 (before:
        # a full disk, the machine's fault, stopped every night at this export).
        out = self.work / "out"
        result = self.healthetl("nightly", "--inbox", self.work / "inbox", "--out", out, "--tz", "UTC", *TIGHT)
        self.assertEqual(result.returncode, 65, result.stderr)
        state = json.loads((out / ".healthetl-state.json").read_text(encoding="utf-8"))
        [quarantined] = state["quarantined"]
        self.assertEqual((quarantined["name"], quarantined["exitCode"]), ("small.xml", 65))
        self.assertIn("the outputs grew past", quarantined["reason"])
        self.assertNotIn("attempt", state)
        self.assertEqual(state["processed"], [])
        report = json.loads((out / "run.json").read_text(encoding="utf-8"))
        self.assertEqual([q["name"] for q in report["nightly"]["quarantined"]], ["small.xml"])

if __name__ == "__main__":
    unittest.main()
