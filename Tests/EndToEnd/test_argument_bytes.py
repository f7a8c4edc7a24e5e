"""An export named by bytes that are not UTF-8 (a cohort participant's file named on another
system) is opened as named: `healthetl run <path>` with the path's bytes as they are. Before, the
argument reached the program repaired (U+FFFD for the bad byte) and the run ended in 66, "no such
file or folder"."""

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
from e2e import REPO, binary  # noqa: E402

PIPELINE = os.fsencode(REPO / "Pipelines" / "electrocardiograms.json")


class ArgumentBytesTests(unittest.TestCase):
    def setUp(self):
        self.tmp = os.fsencode(tempfile.mkdtemp(prefix="healthetl-bytes-"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_healthetl(self, export: bytes, out: bytes) -> dict:
        done = subprocess.run([os.fsencode(binary()), b"run", b"--quiet", b"--no-workbook", b"--tz", b"Europe/Berlin",
                               b"--pipeline", PIPELINE, b"--out", out, export], capture_output=True, timeout=300)
        self.assertEqual(done.returncode, 0, done.stderr.decode(errors="replace"))
        with open(out + b"/run.json", "rb") as report:
            return json.load(report)

    def test_a_path_of_any_bytes_is_opened_with_its_side_files(self):
        # Written under UTF-8 names, then renamed to names of other bytes ("café" in Latin-1: 0xE9
        # alone is no UTF-8), so that no repaired name exists for a repaired argument to find.
        made = self.tmp + b"/made"
        subprocess.run([os.fsencode(binary()), b"sample", b"--days", b"7", b"--ecgs", b"2", b"--out",
                        made + b"/export.xml"], check=True, capture_output=True, timeout=300)
        subprocess.run([os.fsencode(binary()), b"sample", b"--days", b"7", b"--ecgs", b"2", b"--zip", b"--out",
                        made + b".zip"], check=True, capture_output=True, timeout=300)
        folder = self.tmp + b"/caf\xe9-participant"
        zipped = self.tmp + b"/\xff\xfe.zip"
        os.rename(made, folder)
        os.rename(made + b".zip", zipped)
        # A bare export.xml (the ECG files beside it are found), its folder, a zip.
        for number, export in enumerate((folder + b"/export.xml", folder, zipped)):
            with self.subTest(export=export):
                report = self.run_healthetl(export, self.tmp + b"/out%d" % number)
                self.assertEqual(report["electrocardiograms"]["recordings"], 2)
