"""Type and element names from an export become file names (`Pipelines/samples.json`:
`samples/{type}.csv`, `elements/{name}.csv`); no name an export holds may fail a run or block a night.

Before, `Foo.Bar` and `Foo_Bar` both went to `Foo_Bar.csv` (exit 74, "staged rows vanished"), a
300-character name was exit 73 (file name too long), and 3,000 types under `ulimit -n 1024` were
exit 73 (too many open files); `nightly` stopped at such an export every night, so the exports after
it were never processed. Here each name gets a file of its own (Pipelines/README.md, "Where files
go"), the per-type files hold no descriptor each, and an export that keeps failing in a way that may
be its own doing is quarantined on its third night (Pipelines/docs/nightly.md, "Runs and the nightly batch").

The binary is `e2e.binary()`: `HEALTHETL_BIN` (set by `make test-e2e`), else the release build, else
the debug build.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows  # noqa: E402

SAMPLES = str(REPO / "Pipelines" / "samples.json")
LONG_TYPE = "T" * 300
LONG_ELEMENT = "E" * 300
# Generous: a run hangs only if something is wrong.
TIMEOUT = 600


def record(kind: str, value: int, minute: int = 0) -> str:
    return (
        f'<Record type="{kind}" sourceName="Phone" unit="count" creationDate="2024-03-18 08:00:00 +0100" '
        f'startDate="2024-03-18 07:{minute:02d}:00 +0100" endDate="2024-03-18 07:{minute:02d}:30 +0100" '
        f'value="{value}"/>'
    )


def export(body: list[str]) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<HealthData locale="en_DE">\n'
        ' <ExportDate value="2024-03-19 10:00:00 +0100"/>\n' + "\n".join(body) + "\n</HealthData>\n"
    )


HOSTILE = export(
    [
        record("Foo.Bar", 1),
        record("Foo_Bar", 2),
        record("StepCount", 3),
        record("stepcount", 4),
        record("HKQuantityTypeIdentifierStepCount", 5),
        record(LONG_TYPE, 6),
        f'<{LONG_ELEMENT} a="1"/>',
        '<CON b="2"/>',
    ]
)
MANY_TYPES = export([record(f"Type{index:04d}", index) for index in range(3000)])
GOOD = export([record("HKQuantityTypeIdentifierStepCount", 12)])
# One type, 3,000 distinct records: a samples file of about 1 MB.
BIG = export([record("HKQuantityTypeIdentifierStepCount", value) for value in range(3000)])


def descriptors(limit: int):
    """A child's limit of open files, soft and hard (HealthETL raises the soft one to the hard)."""
    return lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))


def file_size(limit: int):
    """A child that may write files of at most `limit` bytes: a bigger write fails with EFBIG."""

    def apply():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


class ContentNameTests(unittest.TestCase):
    def setUp(self):
        self.binary = binary()
        self.work = Path(tempfile.mkdtemp(prefix="healthetl-names-"))
        self.out = self.work / "out"

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def write(self, name: str, text: str, order: int = 0) -> Path:
        path = self.work / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        os.utime(path, (1_700_000_000 + order * 86_400, 1_700_000_000 + order * 86_400))
        return path

    def healthetl(self, *arguments: str, limit=None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [self.binary, *arguments], capture_output=True, text=True, timeout=TIMEOUT, preexec_fn=limit
        )

    def run_samples(self, source: Path, limit=None) -> subprocess.CompletedProcess:
        return self.healthetl("run", "--quiet", "--pipeline", SAMPLES, "--out", str(self.out), str(source),
                              limit=limit)

    def nightly(self, limit=None) -> subprocess.CompletedProcess:
        return self.healthetl("nightly", "--inbox", str(self.work / "inbox"), "--out", str(self.out),
                              "--pipeline", SAMPLES, limit=limit)

    def state(self) -> dict:
        return json.loads((self.out / ".healthetl-state.json").read_text(encoding="utf-8"))

    def test_names_that_collide_or_are_too_long_each_get_a_file(self):
        result = self.run_samples(self.write("hostile.xml", HOSTILE))
        self.assertEqual(result.returncode, 0, result.stderr)
        # The eight hex digits start the SHA-256 of the name (`printf %s Foo.Bar | sha256sum`).
        expected = {
            "samples/Foo_Bar.845addd9.csv": "Foo.Bar",
            "samples/Foo_Bar.csv": "Foo_Bar",
            "samples/StepCount.61a0dfef.csv": "StepCount",
            "samples/stepcount.0452774c.csv": "stepcount",
            "samples/" + "T" * 64 + ".001f6eb6.csv": LONG_TYPE,
            "elements/CON_.a3dbc4b6.csv": "CON",
            "elements/" + "E" * 64 + ".76251503.csv": LONG_ELEMENT,
        }
        written = {str(p.relative_to(self.out)) for p in self.out.rglob("*.csv")}
        self.assertEqual(written, set(expected))
        report = json.loads((self.out / "run.json").read_text(encoding="utf-8"))
        # The samples' tables of health.sqlite are named by these files (Pipelines/docs/outputs.md, "health.sqlite").
        self.assertEqual({o["path"]: o.get("name") for o in report["outputs"]},
                         expected | {"health.sqlite": None, "metadata.json": None})
        # The name as the export wrote it is in the file; StepCount's two identifiers share one.
        for path, name in expected.items():
            column = "type" if path.startswith("samples/") else "element"
            self.assertEqual({row[column] for row in csv_rows(self.out / path)}, {name}, path)
        self.assertEqual([row["value"] for row in csv_rows(self.out / "samples/StepCount.61a0dfef.csv")], ["3", "5"])

    def test_three_thousand_types_under_a_limit_of_64_open_files(self):
        result = self.run_samples(self.write("many.xml", MANY_TYPES), limit=descriptors(64))
        self.assertEqual(result.returncode, 0, result.stderr)
        files = sorted(p.name for p in (self.out / "samples").iterdir())
        self.assertEqual(files, [f"Type{index:04d}.csv" for index in range(3000)])
        self.assertEqual(csv_rows(self.out / "samples/Type2999.csv")[0]["value"], "2999")
        self.assertEqual(csv_rows(self.out / "samples/Type0000.csv")[0]["value"], "0")

    def test_a_night_goes_past_hostile_exports_to_the_good_one(self):
        self.write("inbox/a-hostile.xml", HOSTILE, order=0)
        self.write("inbox/b-many-types.xml", MANY_TYPES, order=1)
        self.write("inbox/c-good.xml", GOOD, order=2)
        result = self.nightly(limit=descriptors(64))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("processed 3 export(s) (a-hostile.xml, b-many-types.xml, c-good.xml)", result.stderr)
        self.assertEqual([e["name"] for e in self.state()["processed"]],
                         ["a-hostile.xml", "b-many-types.xml", "c-good.xml"])

    def test_an_export_failing_on_three_nights_in_a_row_is_quarantined(self):
        # Files over 200 kB fail (EFBIG): the big export's samples file does, the good one's do not,
        # as an output only some export's content makes would.
        self.write("inbox/a-big.xml", BIG, order=0)
        self.write("inbox/b-good.xml", GOOD, order=1)
        for night in (1, 2):
            result = self.nightly(limit=file_size(200_000))
            self.assertEqual(result.returncode, 74, result.stderr)
            self.assertIn("File too large", result.stderr)
            self.assertIn(f"a-big.xml has failed so on {night} night(s) in a row", result.stderr)
            state = self.state()
            self.assertEqual(state["processed"], [])
            self.assertEqual([(e["name"], e["exitCode"], e["nights"]) for e in state["failing"]],
                             [("a-big.xml", 74, night)])
        result = self.nightly(limit=file_size(200_000))
        self.assertEqual(result.returncode, 65, result.stderr)
        self.assertIn("quarantined a-big.xml (exit 74): failed on 3 nights in a row: I/O error writing", result.stderr)
        self.assertIn("processed 1 export(s) (b-good.xml)", result.stderr)
        state = self.state()
        self.assertNotIn("failing", state)
        self.assertEqual([e["name"] for e in state["quarantined"]], ["a-big.xml"])
        # The next night skips it without a word of error.
        result = self.nightly(limit=file_size(200_000))
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("still quarantined, unchanged: a-big.xml", result.stderr)


if __name__ == "__main__":
    unittest.main()
