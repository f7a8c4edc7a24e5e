"""Clinical records end to end (Pipelines/docs/clinical-records.md, "Clinical records"): the real export with six
ClinicalRecords (whose resource files were not published), and hand-written exports with FHIR
resources, hostile paths and `copyResources`, in a folder and in a zip.
"""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import tempfile
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows, real_fixtures, write_export_folder, write_export_zip  # noqa: E402

PIPELINE = REPO / "Pipelines" / "clinical-records.json"
REAL = real_fixtures()


def record(kind: str, identifier: str, path: str) -> str:
    return (f'<ClinicalRecord type="{kind}" identifier="{identifier}" sourceName="Example Clinic" '
            f'sourceURL="https://fhir.example.org/{kind}/{identifier}" fhirVersion="4.0.1" '
            f'receivedDate="2024-03-20 08:15:32 +0100" resourceFilePath="{path}"/>')


EXPORT_XML = f"""<?xml version="1.0" encoding="UTF-8"?>
<HealthData locale="en_US">
 <ExportDate value="2024-03-22 09:00:00 +0100"/>
 {record("Observation", "o1", "/clinical-records/Observation-1.json")}
 {record("Immunization", "i1", "/clinical-records/Immunization-1.json")}
 {record("Procedure", "p1", "../../x")}
 {record("Procedure", "p2", "/clinical-records/Missing-1.json")}
 {record("Condition", "c1", "/clinical-records/Broken-1.json")}
 {record("Patient", "pt", "/clinical-records/sub/Patient-1.json")}
</HealthData>
"""

OBSERVATION = {"resourceType": "Observation", "status": "final",
               "code": {"coding": [{"system": "http://loinc.org", "code": "4548-4", "display": "Hemoglobin A1c"}], "text": "HbA1c"},
               "effectiveDateTime": "2024-02-01T09:30:00+01:00", "valueQuantity": {"value": 5.4, "unit": "%"}}
IMMUNIZATION = {"resourceType": "Immunization", "vaccineCode": {"text": "Influenza, seasonal"}, "occurrenceDateTime": "2023-10-12"}
FILES = {
    "clinical-records/Observation-1.json": json.dumps(OBSERVATION),
    "clinical-records/Immunization-1.json": json.dumps(IMMUNIZATION),
    "clinical-records/Broken-1.json": '{"resourceType": "Condition", ',
    "clinical-records/sub/Patient-1.json": '{"resourceType": "Patient"}',
}


class ClinicalRecordsEndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="healthetl-clinical-"))
        # What a hostile path would reach, were it followed: a file two folders above the export.
        (self.tmp / "x").write_text('{"resourceType": "Secret"}')

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_healthetl(self, export: Path, out: Path, pipeline: Path = PIPELINE) -> dict:
        result = subprocess.run([binary(), "run", "--quiet", "--no-workbook", "--pipeline", str(pipeline), "--out", str(out), str(export)],
                                capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        return json.loads((out / "run.json").read_text())

    def folder_export(self) -> Path:
        return write_export_folder(self.tmp / "a" / "apple_health_export", EXPORT_XML, FILES)

    def zip_export(self) -> Path:
        return write_export_zip(self.tmp / "export.zip", EXPORT_XML, FILES, {"x": '{"resourceType": "Secret"}'})

    def check_rows(self, out: Path, copied: bool):
        got = csv_rows(out / "clinical_records.csv")
        self.assertEqual([r["identifier"] for r in got], ["o1", "i1", "p1", "p2", "c1", "pt"])
        observation, immunization, hostile, missing, broken, deeper = got
        self.assertEqual(observation, {
            "type": "Observation", "identifier": "o1", "source": "Example Clinic",
            "source_url": "https://fhir.example.org/Observation/o1", "fhir_version": "4.0.1",
            "received": "2024-03-20T08:15:32+01:00", "resource_type": "Observation", "code_system": "http://loinc.org",
            "code": "4548-4", "display": "Hemoglobin A1c", "effective": "2024-02-01T09:30:00+01:00",
            "file": "/clinical-records/Observation-1.json",
            "copy": "clinical-records/Observation-1.json" if copied else "", "problem": ""})
        self.assertEqual((immunization["resource_type"], immunization["code"], immunization["display"], immunization["effective"]),
                         ("Immunization", "", "Influenza, seasonal", "2023-10-12"))
        self.assertEqual(hostile["problem"], "resourceFilePath '../../x' is not a file in clinical-records/; not read")
        self.assertEqual((hostile["resource_type"], hostile["copy"]), ("", ""))
        self.assertEqual(missing["problem"], "missing: the export holds no such file")
        self.assertTrue(broken["problem"].startswith("not JSON"), broken["problem"])
        self.assertEqual(broken["resource_type"], "")
        self.assertEqual(deeper["problem"], "resourceFilePath '/clinical-records/sub/Patient-1.json' is not a file in clinical-records/; not read")
        report = json.loads((out / "run.json").read_text())["clinicalRecords"]
        self.assertEqual(report, {"records": 6, "resourcesRead": 2, "resourcesCopied": 3 if copied else 0, "resourceProblems": 4,
                                  "controlCharactersReplaced": 0})

    def copying_pipeline(self) -> Path:
        pipeline = self.tmp / "copy.json"
        definition = json.loads(PIPELINE.read_text())
        definition["jobs"][0]["copyResources"] = True
        pipeline.write_text(json.dumps(definition))
        return pipeline

    def test_folder_without_copies(self):
        out = self.tmp / "out"
        self.run_healthetl(self.folder_export(), out)
        self.check_rows(out, copied=False)
        self.assertFalse((out / "clinical-records").exists())

    def test_zip_with_copies_stay_inside_the_output_folder(self):
        out = self.tmp / "out"
        self.run_healthetl(self.zip_export(), out, self.copying_pipeline())
        self.check_rows(out, copied=True)
        copies = sorted(p.relative_to(out).as_posix() for p in (out / "clinical-records").rglob("*"))
        # The broken file is copied as it is (it is the record); nothing else, nothing outside.
        self.assertEqual(copies, ["clinical-records/Broken-1.json", "clinical-records/Immunization-1.json", "clinical-records/Observation-1.json"])
        self.assertEqual(json.loads((out / "clinical-records/Observation-1.json").read_text()), OBSERVATION)
        for copy in (out / "clinical-records").iterdir():
            self.assertEqual(stat.S_IMODE(copy.stat().st_mode) & 0o077, 0, f"{copy.name} is readable by others")
        every = [p.name for p in self.tmp.rglob("*") if p.is_file()]
        self.assertEqual(every.count("x"), 1)  # the hostile target was neither read nor written

    def test_copies_from_a_folder(self):
        out = self.tmp / "out"
        self.run_healthetl(self.folder_export(), out, self.copying_pipeline())
        self.check_rows(out, copied=True)

    def test_real_export_with_six_clinical_records(self):
        export = REAL / "opendroid__hk" / "public" / "sampleexport.xml"
        if not export.is_file():
            self.skipTest(f"real fixtures not found at {REAL} (set HEALTHETL_REAL_FIXTURES)")
        out = self.tmp / "out"
        report = self.run_healthetl(export, out)
        got = csv_rows(out / "clinical_records.csv")
        self.assertEqual([r["type"] for r in got], ["Procedure", "Procedure", "Procedure", "Immunization", "DiagnosticReport", "Patient"])
        self.assertEqual(got[3]["identifier"], "Tdot1l.AKI5tXy3lOznArzgB")
        self.assertEqual(got[3]["received"], "2020-12-06T20:24:29-08:00")
        self.assertEqual(got[4]["file"], "/clinical-records/DiagnosticReport-F011639A-7CDB-4E7F-B195-E4DFF6D2FB76.json")
        self.assertEqual({r["fhir_version"] for r in got}, {"1.0.2"})
        self.assertEqual({r["source"] for r in got}, {"Sutter Health"})
        # The published fixture has no clinical-records/ folder.
        self.assertEqual({r["problem"] for r in got}, {"missing: the export holds no such file"})
        self.assertEqual(report["clinicalRecords"], {"records": 6, "resourcesRead": 0, "resourcesCopied": 0, "resourceProblems": 6,
                                                          "controlCharactersReplaced": 0})


if __name__ == "__main__":
    unittest.main()
