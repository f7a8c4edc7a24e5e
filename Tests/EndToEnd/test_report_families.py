"""Every family an export holds is charted in report.html, in headless Chromium; a family it does
not hold has no figure at all (issue 29, "The families, shown"). The export is written by
families_export.py; the bundled sample holds blood pressure only of them.

    python3 -m unittest Tests/EndToEnd/test_report_families.py -v
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import families_export  # noqa: E402
import report_fixture  # noqa: E402
from chromium import Browser  # noqa: E402
from e2e import REPO, binary, csv_rows, report_data  # noqa: E402
from test_report_page import CHART_FACTS, RENDERED, charts_painted, require_tools  # noqa: E402

# Per section of the page: its figures, each drawn from these daily.csv columns.
FAMILIES = {
    "activity": {"distance": ["distance_km", "cycling_distance_km"], "flights": ["flights"],
                 "minutes": ["exercise_min", "mindful_min"]},
    "blood": {"blood-pressure": ["bp_systolic_mmhg", "bp_diastolic_mmhg"], "glucose": ["glucose_mg_dl"]},
    "nutrition": {"nutrition-energy": ["dietary_energy_kcal"], "nutrition-macros": ["carbohydrates_g", "protein_g", "fat_g"]},
    "body-composition": {"body-mass": ["lean_body_mass_kg"], "body-fat": ["body_fat_fraction", "bmi"]},
    "mobility": {"walking-speed": ["walking_speed_kmh", "step_length_cm"],
                 "walking-balance": ["walking_asymmetry_fraction", "double_support_fraction"]},
    "sound": {"audio": ["headphone_audio_dba", "environmental_audio_dba"]},
}
FIGURES = """[...document.querySelectorAll('figure[data-family]')].map(f => f.dataset.figure)"""
SECTIONS = """[...document.querySelectorAll('section')].map(s => s.id)"""


def run(export: Path, out: Path) -> None:
    subprocess.run([binary(), "run", "--quiet", "--out", str(out), str(export)], check=True, timeout=120)


class FamiliesReportTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        require_tools()
        cls.dir = Path(tempfile.mkdtemp(prefix="report-families-"))
        (cls.dir / "export").mkdir()
        export = families_export.write(cls.dir / "export" / "export.xml", days=60)
        cls.out = cls.dir / "out"
        run(export, cls.out)
        cls.browser = Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_every_family_in_the_export_paints_its_chart_at_both_widths(self):
        daily = csv_rows(self.out / "daily.csv")
        for width in (1280, 390):
            page = self.browser.open(self.out / "report.html", width=width, height=900)
            try:
                page.wait_for(RENDERED)
                page.evaluate("document.querySelector('[data-range=\"all\"]').click()")
                sections = page.evaluate(SECTIONS)
                facts = {c["id"]: c for c in page.evaluate(CHART_FACTS)}
                painted = {c["id"]: c for c in charts_painted(page)}
                for section, figures in FAMILIES.items():
                    self.assertIn(section, sections)
                    for figure, columns in figures.items():
                        with self.subTest(width=width, figure=figure):
                            self.assertTrue(any(row[c] for row in daily for c in columns), "the export holds the family")
                            self.assertTrue(facts[figure]["drawn"])
                            self.assertTrue(facts[figure]["table"] and facts[figure]["tooltip"])
                            self.assertTrue(all(facts[figure]["axes"]), facts[figure])
                            self.assertGreater(painted[figure]["values"], 0)
                            self.assertEqual(painted[figure]["missed"], [])
                self.assertEqual(page.console_errors(), [])
                self.assertEqual(page.foreign_requests(), [])
            finally:
                page.close()

    def test_the_days_cells_are_daily_csv_cells(self):
        days = report_data(self.out / "report.html")["days"]
        daily = {row["date"]: row for row in csv_rows(self.out / "daily.csv")}
        for name, column in (("bp_systolic", "bp_systolic_mmhg"), ("bp_readings", "bp_readings"),
                             ("glucose_mg_dl", "glucose_mg_dl"), ("carbs_g", "carbohydrates_g"),
                             ("body_fat", "body_fat_fraction"), ("headphone_db", "headphone_audio_dba")):
            with self.subTest(column=name):
                for date, value in zip(days["date"], days[name]):
                    cell = daily[date][column]
                    self.assertEqual(value, None if cell == "" else float(cell))
        # 2024-01-01: Omron's pair (118/76, its correlation and top-level copies one reading) and
        # BP Log's lone 142 systolic: (118 + 142) / 2 = 130, diastolic 76, two readings.
        first = days["date"].index("2024-01-01")
        self.assertEqual((days["bp_systolic"][first], days["bp_diastolic"][first], days["bp_readings"][first]), (130, 76, 2))
        # Food correlation members count once: 640 + 820 kcal.
        self.assertEqual(days["dietary_kcal"][first], 1460)

    def test_types_no_chart_draws_are_listed_with_their_file(self):
        also = report_data(self.out / "report.html")["also_in_export"]
        self.assertEqual([a["type"] for a in also], ["DietaryCaffeine", "DietaryWater"])
        self.assertEqual(also[0]["file"], "samples/DietaryCaffeine.csv")
        page = self.browser.open(self.out / "report.html")
        try:
            page.wait_for(RENDERED)
            rows = page.evaluate("[...document.querySelectorAll('#also-list tr[data-type]')].map(r => r.innerText)")
            self.assertEqual(len(rows), 2)
            self.assertIn("--pipeline samples → samples/DietaryCaffeine.csv", rows[0])
        finally:
            page.close()


class SampleFamiliesTests(unittest.TestCase):
    """The bundled sample holds blood pressure but no nutrition, body composition, mobility or
    sound: those sections are not on the page at all, rather than empty axes."""

    @classmethod
    def setUpClass(cls):
        require_tools()
        cls.dir = Path(tempfile.mkdtemp(prefix="report-sample-families-"))
        run(REPO / "SampleData/export.zip", cls.dir / "out")
        cls.browser = Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_only_the_families_it_holds_are_on_the_page(self):
        page = self.browser.open(self.dir / "out" / "report.html")
        try:
            page.wait_for(RENDERED)
            sections = page.evaluate(SECTIONS)
            for absent in ("nutrition", "body-composition", "mobility", "sound"):
                self.assertNotIn(absent, sections)
                self.assertEqual(page.evaluate(f"document.querySelectorAll('a[href=\"#{absent}\"]').length"), 0)
            self.assertIn("blood", sections)
            self.assertEqual(page.evaluate(FIGURES), ["distance", "flights", "minutes", "blood-pressure"])
            self.assertEqual(page.evaluate("document.querySelectorAll('#blood .empty, #activity figure[data-family] .empty').length"), 0)
        finally:
            page.close()


if __name__ == "__main__":
    unittest.main()
