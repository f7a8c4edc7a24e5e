"""A run's commit syncs the disk a fixed number of times, however many files it writes.

Before, every output file was fsynced as it closed: 3,000 sample types made 3,002 fsyncs, most of
the run's time on a real disk. Now the commit syncs the file system once (`syncfs`) before the
swap and the folder it changed once after (Pipelines/docs/nightly.md, "Runs and the nightly batch").
Counted with strace at 300 and 3,000 types, so the test says nothing about the disk's speed:
the number of sync calls must not grow with the number of files, and the outputs are whole.
Outputs of 1 MB or more are also handed to the kernel's writeback as they grow
(`sync_file_range`, which waits for nothing): those calls follow the big files' bytes, never the
number of files.

Needs strace (make deps installs it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows  # noqa: E402
from test_content_names import export, record  # noqa: E402

SAMPLES = str(REPO / "Pipelines" / "samples.json")
SYNCS = ("fsync", "fdatasync", "syncfs", "sync", "sync_file_range")
WAITING = ("fsync", "fdatasync", "syncfs", "sync")
MB = 1 << 20


class CommitSyncTests(unittest.TestCase):
    def test_the_syncs_of_a_run_do_not_grow_with_its_files(self):
        if shutil.which("strace") is None:
            self.skipTest("needs strace (make deps installs it)")
        counts = {}
        writebacks = {}
        with tempfile.TemporaryDirectory() as tmp:
            for types in (300, 3000):
                xml = Path(tmp) / f"types-{types}.xml"
                xml.write_text(export([record(f"Type{index:04d}", index) for index in range(types)]))
                out = Path(tmp) / f"out-{types}"
                trace = Path(tmp) / f"trace-{types}"
                done = subprocess.run(
                    ["strace", "-f", "-qq", "-o", str(trace), "-e", "trace=" + ",".join(SYNCS), binary(), "run",
                     "--pipeline", SAMPLES, "--quiet", "--no-database", "--tz", "UTC", "--out", str(out), str(xml)],
                    capture_output=True, text=True, timeout=600)
                self.assertEqual(done.returncode, 0, done.stderr)
                calls = re.findall(r"^\d+\s+(\w+)\(", trace.read_text(), re.M)
                counts[types] = {name: calls.count(name) for name in set(calls) if name in WAITING}
                # At most one start per 8 MB of each output of 1 MB or more, one more at its close.
                sizes = [path.stat().st_size for path in out.rglob("*") if path.is_file()]
                bound = sum(size // (8 * MB) + 1 for size in sizes if size >= MB)
                writebacks[types] = (calls.count("sync_file_range"), bound)
                self.assertEqual(len(list((out / "samples").iterdir())), types)
                self.assertEqual(csv_rows(out / f"samples/Type{types - 1:04d}.csv")[0]["value"], str(types - 1))
        # One syncfs of the staged files, one fsync of the folder the swap changed: ten times the
        # files, the same calls (before: 302 and 3,002 fsyncs).
        self.assertEqual(counts[300], counts[3000])
        self.assertLessEqual(sum(counts[3000].values()), 4, counts)
        self.assertEqual(counts[3000].get("syncfs"), 1, counts)
        for types, (started, bound) in writebacks.items():
            self.assertLessEqual(started, bound, (types, writebacks))


if __name__ == "__main__":
    unittest.main()
