"""The report.html that `healthetl run` writes, checked against an independent implementation and
in a real browser.

The binary (`e2e.binary()`: `HEALTHETL_BIN`, else the release build, else the debug build) runs on
the bundled sample and on a generated 1,500-day export. The data the
page embeds must equal what `report_reference.py` (Python, from the same run's CSV files, run.json,
the samples and ActivitySummary tables) makes of that run, within half a unit in the last kept
place (Pipelines/report/DATA.md, "Conventions"). The default pipeline alone must write the same
page as the default pipeline plus the extra tables the reference reads, and a rerun the same
bytes. The page is then opened in headless Chromium: no console error, every chart drawn, no
request, a screenshot that is not blank, and chosen days showing the values of the run's own CSVs.

Routes are compared point by point: the reference reads the GPX files from the export zip and
simplifies them itself.

    HEALTHETL_BIN=.build/release/healthetl python3 -m unittest Tests/EndToEnd/test_report_product.py -v
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report_reference  # noqa: E402
from chromium import Browser, png_summary  # noqa: E402
from e2e import REPO, binary, csv_rows, real_fixtures, report_data  # noqa: E402
from test_report_page import OPEN_ALL_TABLES, RENDERED, cell, charts_painted, js_text, require_tools  # noqa: E402

BWASSIM = real_fixtures() / "bwassim__Health-Data-Analysis" / "data" / "export.zip"
# Decimal places per column (DATA.md); a number may differ by half a unit in the last place.
PLACES = {
    "steps": 0, "active_kcal": 1, "move_kcal": 1, "move_goal_kcal": 1, "exercise_ring_min": 0, "exercise_goal_min": 0,
    "stand_h": 0, "stand_goal_h": 0, "resting_hr": 1, "hrv_sdnn_ms": 1, "walking_hr": 1, "bpm_max": 1,
    "duration_s": 0, "distance_m": 1, "energy_kcal": 1, "hr_avg": 1, "hr_max": 1, "strokes": 0, "swolf": 1,
    "counted_share": 3, "route": 5,
}


def differences(got, want, path: str = "", places: int | None = None) -> list[str]:
    """Where `got` differs from `want` beyond half a unit in the last kept place."""
    if isinstance(want, dict) and isinstance(got, dict):
        out = [f"{path}.{k}: missing" for k in want if k not in got] + [f"{path}.{k}: extra" for k in got if k not in want]
        for key in want.keys() & got.keys():
            out += differences(got[key], want[key], f"{path}.{key}", PLACES.get(key, places))
        return out
    if isinstance(want, list) and isinstance(got, list):
        if len(want) != len(got):
            return [f"{path}: {len(got)} items, want {len(want)}"]
        return [d for i, (g, w) in enumerate(zip(got, want)) for d in differences(g, w, f"{path}[{i}]", places)]
    numbers = (int, float)
    if isinstance(want, numbers) and isinstance(got, numbers) and not isinstance(want, bool) and not isinstance(got, bool):
        tolerance = 0.5 * 10 ** -places + 1e-9 if places is not None else 1e-9
        return [] if abs(got - want) <= tolerance else [f"{path}: {got} != {want}"]
    return [] if got == want else [f"{path}: {got!r:.80} != {want!r:.80}"]


def run(healthetl: str, export: Path, out: Path, extra: bool) -> None:
    pipelines = ["--pipeline", str(REPO / "Pipelines/default.json")]
    if extra:
        pipelines += ["--pipeline", str(REPO / "Tests/EndToEnd/report-extra.json")]
    subprocess.run([healthetl, "run", "--quiet", *pipelines, "--out", str(out), str(export)], check=True, timeout=600)


def rows_by_date(path: Path) -> dict[str, dict]:
    return {row.get("date") or row["bucket_start"][:10]: row for row in csv_rows(path)}


class ProductReport:
    """One export: the product's report (default pipeline) and a run with the reference's tables."""

    export: Path
    days_checked: list[str]

    @classmethod
    def prepare(cls, export: Path) -> None:
        cls.binary = binary()
        cls.export = export
        cls.product = cls.dir / "product"
        cls.full = cls.dir / "full"
        run(cls.binary, export, cls.product, extra=False)
        run(cls.binary, export, cls.full, extra=True)
        cls.data = report_data(cls.product / "report.html")

    def test_data_equals_the_reference_made_from_the_runs_own_files(self):
        want = report_reference.from_outputs(self.full, self.export)
        got = report_data(self.full / "report.html")
        self.assertEqual(differences(got, want)[:20], [])
        # The exports have routes, so outlines are compared, not only nulls.
        routes = [r for r in want["workouts"]["route"] if r is not None]
        self.assertTrue(routes)
        self.assertTrue(all(2 <= len(r) <= 300 for r in routes))
        # The check can fail: a step count one off is seen, and so is a route point 2e-5° off.
        got["days"]["steps"][-1] += 1
        self.assertTrue(differences(got, want))
        got["days"]["steps"][-1] -= 1
        moved = next(i for i, r in enumerate(got["workouts"]["route"]) if r)
        got["workouts"]["route"][moved][-1][0] += 2e-5
        self.assertTrue(differences(got, want))

    def test_the_default_pipeline_alone_writes_the_same_page_and_a_rerun_the_same_bytes(self):
        page = (self.product / "report.html").read_bytes()
        self.assertEqual(page, (self.full / "report.html").read_bytes())
        rerun = self.dir / "rerun"
        run(self.binary, self.export, rerun, extra=False)
        self.assertEqual((rerun / "report.html").read_bytes(), page)
        run_json = json.loads((self.product / "run.json").read_text(encoding="utf-8"))
        self.assertIn({"path": "report.html", "rows": 1, "bytes": len(page)}, run_json["outputs"])

    def test_every_chart_with_data_paints_it_at_both_widths(self):
        check_painted(self, self.product / "report.html")

    def test_in_a_browser_every_chart_is_drawn_without_errors_or_requests(self):
        require_tools()
        browser = Browser()
        try:
            page = browser.open(self.product / "report.html")
            page.wait_for(RENDERED)
            self.assertIsNone(page.evaluate("document.documentElement.dataset.reportError || null"))
            canvases = page.evaluate("document.querySelectorAll('canvas[data-chart]').length")
            self.assertGreaterEqual(canvases, 10)
            self.assertEqual(int(page.evaluate("document.documentElement.dataset.chartsDrawn")), canvases)
            self.assertEqual(page.evaluate("document.querySelectorAll('canvas[data-chart][data-drawn=\"1\"]').length"),
                             canvases)
            summary = png_summary(page.screenshot())
            self.assertGreater(summary["colours"], 200)
            self.assertGreater(summary["foreground_share"], 0.15)
            # The chosen days show the run's own CSV values (daily statistics, sleep per night).
            self.assertGreater(page.evaluate(OPEN_ALL_TABLES), 10)
            steps = rows_by_date(self.product / "stats/steps-per-day.csv")
            nights = rows_by_date(self.product / "sleep_daily.csv")
            checked = 0
            for date in self.days_checked:
                if date in steps:
                    want = str(round(float(steps[date]["sum"])))
                    self.assertEqual(cell(page, "steps", f'[data-date="{date}"]', "steps"), [want, want], date)
                    checked += 1
                if date in nights:
                    for column in ("asleep", "core", "deep", "rem", "awake"):
                        want = js_text(report_reference.hours(nights[date][f"{column}_s"]))
                        self.assertEqual(cell(page, "sleep-stages", f'[data-date="{date}"]', f"{column}_h"),
                                         [want, want], f"{date} {column}")
                        checked += 1
                    bedtime = report_reference.minute_text(nights[date]["sleep_start"])
                    if bedtime:
                        # The main session's start: for a night of one session, the night's own.
                        if nights[date]["sessions"] == "1":
                            self.assertEqual(cell(page, "sleep-window", f'[data-date="{date}"]', "bedtime"),
                                             [bedtime, bedtime], date)
            self.assertGreaterEqual(checked, 12)
            page.settle(0.2)
            self.assertEqual(page.console_errors(), [])
            self.assertEqual(page.foreign_requests(), [])
            self.assertEqual(page.network_requests, [page.url])
        finally:
            browser.close()


def check_painted(test: unittest.TestCase, html: Path) -> dict[str, int]:
    """Desktop and phone width, 90 days and all: every value of every drawn chart is painted.
    Returns the values per chart at desktop width and 90 days."""
    require_tools()
    first: dict[str, int] = {}
    with Browser() as browser:
        for width in (1280, 390):
            page = browser.open(html, width=width, height=900)
            page.wait_for(RENDERED)
            for range_name in ("90", "all"):
                page.evaluate(f"document.querySelector('[data-range=\"{range_name}\"]').click()")
                for chart in charts_painted(page):
                    with test.subTest(width=width, range=range_name, chart=chart["id"]):
                        test.assertGreater(chart["values"], 0)
                        test.assertEqual(chart["missed"], [])
                    if (width, range_name) == (1280, "90"):
                        first[chart["id"]] = chart["values"]
            test.assertEqual(page.console_errors(), [])
            page.close()
    return first


class RealExportReportTests(unittest.TestCase):
    """bwassim's Garmin + iPhone export (three years, heart rate every 2 minutes, sleep without
    stages, no resting heart rate): before, the minute chart drew nothing over "496 minutes with
    data" and the Heart section had one "No data" card."""

    @classmethod
    def setUpClass(cls):
        if not BWASSIM.is_file():
            raise unittest.SkipTest(f"the real fixture {BWASSIM} is absent (set HEALTHETL_REAL_FIXTURES to its folder)")
        healthetl = binary()
        cls.dir = Path(tempfile.mkdtemp(prefix="report-product-bwassim-"))
        run(healthetl, BWASSIM, cls.dir / "out", extra=False)
        cls.html = cls.dir / "out" / "report.html"
        cls.data = report_data(cls.html)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_data_holds_what_the_export_has(self):
        last = self.data["heart_rate"]["days"][-1]
        self.assertEqual((last["date"], len(last["minute"])), ("2021-01-24", 496))
        self.assertEqual(sorted({b - a for a, b in zip(last["minute"], last["minute"][1:])})[0], 2)  # every 2 minutes
        nights = self.data["nights"]
        self.assertEqual(sum(1 for v in nights["unspecified_h"] if v), 72)
        self.assertEqual(sum(1 for v in nights["core_h"] if v), 0)
        days = self.data["days"]
        self.assertEqual(sum(1 for v in days["hr_avg"] if v is not None), 92)
        self.assertEqual(sum(1 for v in days["body_mass_kg"] if v is not None), 1)

    def test_every_chart_with_data_paints_it_at_both_widths(self):
        values = check_painted(self, self.html)
        self.assertEqual(values["heart-minute"], 496)
        for chart in ("sleep-stages", "heart-daily", "body", "steps"):
            self.assertIn(chart, values)


class SampleProductReportTests(ProductReport, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = Path(tempfile.mkdtemp(prefix="report-product-sample-"))
        # Documented elsewhere: merged steps 10,336 on 2024-03-20 (Pipelines/README.md).
        cls.days_checked = ["2024-03-19", "2024-03-20", "2024-03-31", "2024-04-14"]
        cls.prepare(REPO / "SampleData/export.zip")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_hand_checked_values(self):
        days = self.data["days"]
        self.assertEqual(days["steps"][days["date"].index("2024-03-20")], 10336)
        nights = self.data["nights"]
        # sleep_daily.csv: asleep_s 28083 on 2024-03-20 → (28083 + 18) // 36 = 780 hundredths.
        self.assertEqual(nights["asleep_h"][nights["date"].index("2024-03-20")], 7.8)
        steps = next(t for t in self.data["quality"]["types"] if t["type"] == "StepCount")
        self.assertEqual(steps["overlapping"], 1303)


class MultiYearProductReportTests(ProductReport, unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        healthetl = binary()
        cls.dir = Path(tempfile.mkdtemp(prefix="report-product-1500-"))
        export = cls.dir / "export.zip"
        subprocess.run([healthetl, "sample", "--days", "1500", "--seed", "3", "--zip", "--out", str(export)],
                       check=True, timeout=600)
        cls.prepare(export)
        dates = cls.data["days"]["date"]
        cls.days_checked = [dates[k] for k in (0, 300, 750, 1200, -1)]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_size_is_a_few_hundred_bytes_a_day(self):
        size = (self.product / "report.html").stat().st_size
        days = len(self.data["days"]["date"])
        self.assertGreater(days, 1400)
        # Chart.js is ~200 KB; 1,500 days of aggregates and 14 days of minutes stay under 1.5 MB.
        self.assertLess(size, 1_500_000, size)
        print(f"\n1500-day report: {size / 1e6:.2f} MB, {days} days, "
              f"{len(self.data['workouts']['id'])} workouts", file=sys.stderr)


if __name__ == "__main__":
    unittest.main()
