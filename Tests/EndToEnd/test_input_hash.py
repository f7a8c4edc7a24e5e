"""run.json's `input.sha256`: the SHA-256 of the file as given, whoever computes it.

An export XML on disk (named, or found in a folder) is hashed by the parse's reader as it reads it,
so the file is read once; `export.zip` is hashed as it is on its own thread. Either way the value
is Python's hashlib of the same file, and a pipe (standard input, `<(…)`) has none.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tempfile
import unittest
import zipfile
from pathlib import Path

from Tests.EndToEnd.e2e import REPO, binary


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class InputHashTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary = binary()
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = Path(cls.tmp.name)
        # The bundled sample's XML (several 256 KiB reads), unzipped as a file and as a folder.
        with zipfile.ZipFile(REPO / "SampleData/export.zip") as z:
            member = next(n for n in z.namelist() if n.endswith("/export.xml"))
            cls.xml = cls.dir / "export.xml"
            cls.xml.write_bytes(z.read(member))
        cls.folder = cls.dir / "apple_health_export"
        cls.folder.mkdir()
        shutil.copy(cls.xml, cls.folder / "export.xml")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_json(self, argument: str, name: str, **kwargs) -> dict:
        out = self.dir / name
        result = subprocess.run(
            [self.binary, "run", "--quiet", "--no-workbook", "--no-database", "--out", str(out), argument],
            capture_output=True, timeout=600, **kwargs)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        return json.loads((out / "run.json").read_text())["input"]

    def test_an_export_xml_is_hashed_as_it_is_read(self):
        self.assertGreater(self.xml.stat().st_size, 4 * 256 * 1024)
        self.assertEqual(self.run_json(str(self.xml), "xml")["sha256"], sha256(self.xml))

    def test_a_folder_is_hashed_by_its_export_xml(self):
        self.assertEqual(self.run_json(str(self.folder), "folder")["sha256"], sha256(self.folder / "export.xml"))

    def test_a_folder_whose_export_xml_is_a_zip_is_hashed_as_that_file(self):
        # Read inflated, so not hashed as read: the file is hashed again after the parse.
        folder = self.dir / "disguised" / "apple_health_export"
        folder.mkdir(parents=True)
        with zipfile.ZipFile(folder / "export.xml", "w", zipfile.ZIP_STORED) as z:
            z.write(self.xml, "export.xml")
        self.assertEqual(self.run_json(str(folder), "disguised-out")["sha256"], sha256(folder / "export.xml"))

    def test_a_zip_is_hashed_as_given(self):
        zip_path = REPO / "SampleData/export.zip"
        self.assertEqual(self.run_json(str(zip_path), "zip")["sha256"], sha256(zip_path))

    def test_a_file_with_forbidden_control_characters_is_hashed_as_it_is_on_disk(self):
        # The parse replaces the vertical tab by a space; the hash is of the file, tab included.
        text = self.xml.read_bytes()
        at = text.index(b'sourceName="', len(text) // 2) + len(b'sourceName="')
        dirty = self.dir / "dirty.xml"
        dirty.write_bytes(text[:at] + b"\x0b" + text[at + 1:])
        found = self.run_json(str(dirty), "dirty")
        self.assertEqual(found["sha256"], sha256(dirty))
        self.assertNotEqual(found["sha256"], sha256(self.xml))

    def test_a_pipe_named_as_the_input_is_read_once_and_has_no_hash(self):
        # `<(unzip -p …)`: the run used to open the pipe a second time to hash it, so the two
        # readers split its data and the parse failed on XML cut to pieces (exit 65).
        out = self.dir / "pipe"
        result = subprocess.run(
            ["bash", "-c", 'exec "$0" run --quiet --no-workbook --no-database --out "$1" <(cat "$2")',
             self.binary, str(out), str(self.xml)], capture_output=True, timeout=600)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        found = json.loads((out / "run.json").read_text())
        self.assertIsNone(found["input"]["sha256"])
        self.assertEqual(found["input"]["xmlBytes"], self.xml.stat().st_size)
        self.run_json(str(self.xml), "whole")
        whole = json.loads((self.dir / "whole" / "run.json").read_text())
        self.assertEqual((found["elements"], found["types"]), (whole["elements"], whole["types"]))

    def test_a_night_reports_the_hash_it_keys_the_export_by(self):
        # The nightly batch hashes each inbox file to know whether it was processed; its runs
        # report that hash rather than compute it again.
        inbox = self.dir / "inbox"
        inbox.mkdir()
        shutil.copy(self.xml, inbox / "a.xml")
        shutil.copy(REPO / "SampleData/export.zip", inbox / "b.zip")
        out = self.dir / "night"
        result = subprocess.run(
            [self.binary, "nightly", "--inbox", str(inbox), "--out", str(out)], capture_output=True, timeout=900)
        self.assertEqual(result.returncode, 0, result.stderr.decode())
        state = json.loads((out / ".healthetl-state.json").read_text())
        processed = {entry["name"]: entry["sha256"] for entry in state["processed"]}
        self.assertEqual(processed, {"a.xml": sha256(inbox / "a.xml"), "b.zip": sha256(inbox / "b.zip")})
        # run.json is the last export's.
        last = json.loads((out / "run.json").read_text())["input"]
        self.assertEqual(last["sha256"], processed[Path(last["path"]).name])

    def test_standard_input_has_no_hash(self):
        with open(self.xml, "rb") as handle:
            self.assertIsNone(self.run_json("-", "stdin", stdin=handle)["sha256"])


if __name__ == "__main__":
    unittest.main()
