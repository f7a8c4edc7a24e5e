"""report.html in a real browser (headless Chromium through chromium.py).

The page is filled exactly as the report stage fills it (report_fixture.render), once with
Pipelines/report/example-data.json (made from the bundled sample's outputs) and once with ten
years of synthetic data. `make test-report-page` installs chromium and libjs-chart.js first.

    python3 -m unittest discover -s Tests/EndToEnd -p 'test_report_page.py' -v
"""

from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import sys
import tempfile
import time
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report_fixture  # noqa: E402
from chromium import Browser, BrowserError, png_summary  # noqa: E402
from e2e import binary, csv_rows  # noqa: E402

RENDERED = "document.documentElement.dataset.chartsDrawn || document.documentElement.dataset.reportError"
OPEN_ALL_TABLES = """(() => {
  document.querySelector('[data-range="all"]').click();
  for (const d of document.querySelectorAll('details[data-table-for]')) d.open = true;
  return new Promise(r => setTimeout(() => r(document.querySelectorAll('details[open] table').length), 0));
})()"""
# Per chart: drawn, its size, its figure's title, and the titles of its axes (empty when an
# axis has none; doughnuts have no axes).
CHART_FACTS = """[...document.querySelectorAll('canvas[data-chart]')].map(c => {
  const chart = Chart.getChart(c);
  const axes = chart ? Object.values(chart.options.scales || {}).filter(s => s.display !== false)
    .map(s => s.title && s.title.display ? s.title.text : '') : null;
  return { id: c.dataset.chart, drawn: c.dataset.drawn === '1', width: c.width, height: c.height,
    title: c.closest('figure').querySelector('h3').textContent, type: chart && chart.config.type, axes,
    tooltip: !!(chart && chart.options.plugins.tooltip.enabled !== false),
    table: !!c.closest('figure').querySelector('details[data-table-for] summary') };
})"""


def require_tools() -> None:
    missing = [what for what, ok in (
        ("chromium", shutil.which(os.environ.get("CHROMIUM", "chromium"))),
        ("libjs-chart.js", report_fixture.CHART_JS.exists()),
    ) if not ok]
    if missing:
        raise unittest.SkipTest(
            f"needs the Debian package(s) {' '.join(missing)}: `make test-report-page` installs them")


def cell(page, table: str, row: str, field: str):
    """(text, data-value) of one cell of a chart's data table, or None when absent."""
    return page.evaluate(
        f"""(() => {{ const td = document.querySelector('details[data-table-for="{table}"] tr{row} td[data-field="{field}"]');
        return td ? [td.textContent, td.dataset.value] : null; }})()""")


def js_text(value) -> str:
    """How the page writes a JSON value in a data table: JavaScript's String(), '' for null."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# The names Chart.js draws beside the bars of a horizontal bar chart, where it draws them: each
# label's text, its left and right edge measured in its own font, and its line; with the chart's
# names, its width and its plot area.
NAMES_DRAWN = """(id => {
  const chart = Chart.getChart(document.querySelector('canvas[data-chart="' + id + '"]'));
  const scale = chart.scales.y, ctx = chart.ctx;
  const drawn = scale._computeLabelItems(chart.chartArea).map(item => {
    ctx.save(); ctx.font = item.font.string; const w = ctx.measureText(item.label).width; ctx.restore();
    const x = item.translation[0], align = item.textAlign;
    const left = align === 'right' ? x - w : align === 'center' ? x - w / 2 : x;
    return { text: item.label, left, right: left + w, y: item.translation[1], line: item.font.lineHeight };
  });
  return { names: chart.data.labels, width: chart.width, area: [chart.chartArea.left, chart.chartArea.right], drawn };
})"""


def hover_tooltip(page, chart_id: str, index: int, dataset: int = 0) -> dict | None:
    """The tooltip (title and body lines) shown while the mouse rests on bar `index` of `dataset`."""
    x, y = page.evaluate(f"""(() => {{ const canvas = document.querySelector('canvas[data-chart="{chart_id}"]');
        canvas.scrollIntoView({{ block: 'center' }});
        const chart = Chart.getChart(canvas), box = canvas.getBoundingClientRect();
        const bar = chart.getDatasetMeta({dataset}).data[{index}].getCenterPoint();
        return [box.left + bar.x, box.top + bar.y]; }})()""")
    page.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    page.settle(0.1)
    return page.evaluate(f"""(() => {{ const t = Chart.getChart(document.querySelector('canvas[data-chart="{chart_id}"]')).tooltip;
        return t.opacity > 0 ? {{ title: t.title, body: t.body.flatMap(b => b.lines) }} : null; }})()""")


def check_names_beside_bars(test: unittest.TestCase, page, chart_id: str) -> list[tuple[str, str]]:
    """At phone width every name of the chart is labelled inside the chart's left area, whole or cut
    to a prefix ending in "…", on lines that do not overlap, and the bars keep half the chart;
    the tooltip of a cut name shows it whole. Returns the (name, drawn text) pairs."""
    facts = page.evaluate(NAMES_DRAWN + f"('{chart_id}')")
    names, drawn = facts["names"], facts["drawn"]
    test.assertEqual(len(drawn), len(names), f"{chart_id}: every name is labelled, none skipped")
    left, right = facts["area"]
    test.assertGreaterEqual(right - left, facts["width"] / 2, f"{chart_id}: the bars keep half the chart")
    pairs = list(zip(names, [d["text"] for d in drawn]))
    for (name, text), label in zip(pairs, drawn):
        with test.subTest(chart=chart_id, name=name):
            test.assertGreaterEqual(label["left"], 0, f"{text!r} starts inside the canvas")
            test.assertLessEqual(label["right"], left, f"{text!r} ends before the bars")
            if text != name:
                test.assertTrue(text.endswith("…") and name.startswith(text[:-1]) and len(text) > 1, text)
    for a, b in zip(drawn, drawn[1:]):
        test.assertGreaterEqual(abs(b["y"] - a["y"]), a["line"], f"{a['text']!r} and {b['text']!r} overlap")
    cut = [k for k, (name, text) in enumerate(pairs) if text != name]
    if cut:
        test.assertEqual(hover_tooltip(page, chart_id, cut[0])["title"], [names[cut[0]]])
    return pairs


class RendererTests(unittest.TestCase):
    """The substitution the Swift report stage must copy, checked without a browser."""

    def test_placeholders_occur_once_in_order_inside_script_elements(self):
        template = report_fixture.TEMPLATE.read_text(encoding="utf-8")
        for token in (report_fixture.LIBRARY_TOKEN, report_fixture.DATA_TOKEN):
            self.assertEqual(template.count(token), 1, token)
        self.assertIn("<script>" + report_fixture.LIBRARY_TOKEN, template)
        self.assertIn('<script type="application/json" id="report-data">' + report_fixture.DATA_TOKEN + "</script>", template)
        self.assertLess(template.index(report_fixture.LIBRARY_TOKEN), template.index(report_fixture.DATA_TOKEN))
        csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', template).group(1)
        self.assertIn("default-src 'none'", csp)
        self.assertNotIn("http", csp)

    def test_data_cannot_end_its_script_element(self):
        html = report_fixture.render(
            "<script><!--HEALTHETL:CHART_JS--></script><script type=\"application/json\"><!--HEALTHETL:REPORT_DATA--></script>",
            "var lib = 1;",
            report_fixture.dumps({"detail": "</script><!--<script>", "n": 1}),
        )
        self.assertEqual(
            html,
            '<script>var lib = 1;</script><script type="application/json">'
            '{"detail":"\\u003c/script>\\u003c!--\\u003cscript>","n":1}</script>',
        )
        data = html.split('"application/json">')[1].rsplit("</script>", 1)[0]
        self.assertEqual(json.loads(data)["detail"], "</script><!--<script>")

    def test_inserted_text_is_not_searched_for_placeholders(self):
        html = report_fixture.render(
            "A<!--HEALTHETL:CHART_JS-->B<!--HEALTHETL:REPORT_DATA-->C", "x", '"<!--HEALTHETL:CHART_JS-->"')
        self.assertEqual(html, 'AxB"\\u003c!--HEALTHETL:CHART_JS-->"C')

    def test_a_library_that_could_end_the_element_is_refused(self):
        for library in ("a='</SCRIPT>'", "a='<!--'"):
            with self.assertRaises(report_fixture.RenderError):
                report_fixture.render("<!--HEALTHETL:CHART_JS--><!--HEALTHETL:REPORT_DATA-->", library, "{}")

    def test_debian_chart_js_can_be_inlined_verbatim(self):
        require_tools()
        library = report_fixture.CHART_JS.read_text(encoding="utf-8")
        self.assertIn("Chart.js v3.9.1", library[:200])
        self.assertNotIn("</script", library.lower())
        self.assertNotIn("<!--", library)
        self.assertNotIn("sourceMappingURL", library)  # would make devtools fetch a map


def open_rendered(cls, **size):
    """Opens `cls.html` in a browser of the class's own and waits until the page has drawn; a page
    that never draws closes the browser before the error goes on."""
    cls.browser = Browser()
    try:
        cls.page = cls.browser.open(cls.html, **size)
        cls.page.wait_for(RENDERED)
    except BaseException:
        cls.browser.close()
        raise


class RenderedReport(unittest.TestCase):
    """The page rendered from the class's `report_data()` into a folder of its own, open in a
    browser of its own for the class's tests (`self.page`, `self.data`)."""

    prefix = "report-"

    @classmethod
    def report_data(cls) -> dict:
        raise NotImplementedError

    @classmethod
    def setUpClass(cls):
        require_tools()
        cls.dir = Path(tempfile.mkdtemp(prefix=cls.prefix))
        cls.data = cls.report_data()
        cls.html = report_fixture.render_file(cls.data, cls.dir / "report.html")
        open_rendered(cls)

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        shutil.rmtree(cls.dir, ignore_errors=True)


class DriverTests(unittest.TestCase):
    """The checks the page tests rely on can fail: the driver sees requests, errors, blank PNGs."""

    @classmethod
    def setUpClass(cls):
        require_tools()
        cls.dir = Path(tempfile.mkdtemp(prefix="report-driver-"))
        cls.browser = Browser()

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def page(self, name: str, body: str):
        path = self.dir / name
        path.write_text(f"<!DOCTYPE html><html><head><meta charset=utf-8></head><body>{body}</body></html>")
        return self.browser.open(path)

    def test_requests_console_errors_and_exceptions_are_recorded(self):
        # 192.0.2.0/24 is reserved for documentation: nothing answers there.
        page = self.page("noisy.html", '<img src="http://192.0.2.1/x.png"><script>console.error("bad thing");'
                                       'setTimeout(() => { throw new Error("boom"); });</script>')
        page.settle(0.5)
        self.assertEqual(page.foreign_requests(), ["http://192.0.2.1/x.png"])
        errors = page.console_errors()
        self.assertIn("bad thing", errors)
        self.assertTrue(any("boom" in e for e in errors), errors)

    def test_the_report_policy_turns_a_request_into_a_console_error(self):
        csp = re.search(r'<meta http-equiv="Content-Security-Policy"[^>]+>', report_fixture.TEMPLATE.read_text()).group(0)
        path = self.dir / "csp.html"
        path.write_text(f'<!DOCTYPE html><html><head>{csp}</head><body><img src="http://192.0.2.1/y.png"></body></html>')
        page = self.browser.open(path)
        page.settle(0.5)
        self.assertTrue(any("Content Security Policy" in e for e in page.console_errors()), page.console)

    def test_a_blank_page_is_told_from_a_drawn_one(self):
        blank = png_summary(self.page("blank.html", "").screenshot())
        self.assertEqual((blank["colours"], blank["foreground_share"]), (1, 0.0))
        self.assertEqual((blank["width"], blank["height"]), (1280, 900))
        drawn = png_summary(self.page("drawn.html", '<div style="width:640px;height:450px;background:#123456"></div>'
                                      '<p style="font-size:40px">text</p>').screenshot())
        self.assertGreater(drawn["foreground_share"], 0.24)  # the box alone is a quarter of the viewport
        self.assertGreater(drawn["colours"], 3)

    def test_waiting_is_bounded(self):
        page = self.page("never.html", "")
        started = time.monotonic()
        with self.assertRaises(BrowserError):
            page.wait_for("window.neverSet", timeout=0.5)
        self.assertLess(time.monotonic() - started, 5)

    def test_close_kills_the_browser_and_removes_its_profile(self):
        browser = Browser()
        pid, profile = browser.pid, browser.profile
        os.kill(pid, 0)  # alive
        browser.close()
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)
        self.assertFalse(Path(profile).exists())


class ReportPageChecks:
    """Shared by the example and the ten-year report."""

    data: dict
    page = None
    expected_charts: int

    def test_no_console_errors_and_no_request_but_its_own_file(self):
        self.page.settle(0.2)
        self.assertEqual(self.page.console_errors(), [])
        self.assertEqual(self.page.foreign_requests(), [])
        self.assertEqual(self.page.network_requests, [self.page.url])

    def test_every_chart_is_drawn_with_title_axis_titles_tooltips_and_a_table(self):
        self.assertIsNone(self.page.evaluate("document.documentElement.dataset.reportError || null"))
        canvases = self.page.evaluate("document.querySelectorAll('canvas[data-chart]').length")
        self.assertEqual(int(self.page.evaluate("document.documentElement.dataset.chartsDrawn")), canvases)
        self.assertEqual(canvases, self.expected_charts)
        for chart in self.page.evaluate(CHART_FACTS):
            with self.subTest(chart=chart["id"]):
                self.assertTrue(chart["drawn"])
                self.assertGreater(chart["width"], 200)
                self.assertGreater(chart["height"], 150)
                self.assertTrue(chart["title"].strip())
                self.assertTrue(chart["tooltip"])
                self.assertTrue(chart["table"])
                if chart["type"] != "doughnut":
                    self.assertGreaterEqual(len(chart["axes"]), 2)
                    self.assertTrue(all(chart["axes"]), chart["axes"])

    def test_screenshot_is_not_blank(self):
        summary = png_summary(self.page.screenshot())
        self.assertEqual((summary["width"], summary["height"]), (1280, 900))
        self.assertGreater(summary["colours"], 200)  # charts are anti-aliased in many colours
        self.assertGreater(summary["foreground_share"], 0.15)
        self.assertGreater(sum(summary["background"]), 3 * 200, summary)  # light scheme

    def test_dark_scheme_redraws_in_dark_colours(self):
        try:
            self.page.emulate(color_scheme="dark")
            self.page.wait_for("document.documentElement.dataset.scheme === 'dark'")
            summary = png_summary(self.page.screenshot(scale=0.5))
            self.assertLess(sum(summary["background"]), 3 * 60, summary)
            self.assertGreater(summary["colours"], 100)
            self.assertEqual(self.page.evaluate("document.querySelectorAll('canvas[data-chart][data-drawn=\"1\"]').length"),
                             self.expected_charts)
            self.assertEqual(self.page.console_errors(), [])
        finally:
            self.page.emulate()
            self.page.wait_for("document.documentElement.dataset.scheme === 'light'")

    def test_print_hides_controls_keeps_charts_and_makes_a_pdf(self):
        try:
            self.page.emulate(color_scheme="dark", media="print")
            self.page.settle(0.2)
            hidden = self.page.evaluate("['.controls', '.top nav', 'details', '.pick'].map(s => "
                                        "[...document.querySelectorAll(s)].every(e => getComputedStyle(e).display === 'none'))")
            self.assertEqual(hidden, [True, True, True, True])
            # Print is always light, whatever the screen's scheme.
            self.assertEqual(self.page.evaluate("document.documentElement.dataset.scheme"), "light")
            sizes = self.page.evaluate("[...document.querySelectorAll('canvas[data-chart]')].map(c => "
                                       "[c.getBoundingClientRect().width, c.getBoundingClientRect().height, c.dataset.drawn])")
            self.assertEqual(len(sizes), self.expected_charts)
            for width, height, drawn in sizes:
                self.assertGreater(width, 100)
                self.assertGreater(height, 100)
                self.assertEqual(drawn, "1")
            summary = png_summary(self.page.screenshot(scale=0.5))
            self.assertEqual(summary["background"], (255, 255, 255))
            self.assertGreater(summary["colours"], 100)
            pdf = self.page.pdf()
            self.assertTrue(pdf.startswith(b"%PDF-"))
            pages = len(re.findall(rb"/Type\s*/Page[^s]", pdf))
            self.assertGreaterEqual(pages, 3, "all charts on one page would be too small to read")
            self.assertEqual(self.page.console_errors(), [])
        finally:
            self.page.emulate()
            self.page.wait_for("document.documentElement.dataset.scheme === 'light'")

    def test_every_value_given_to_a_chart_is_painted(self):
        try:
            for range_name in ("90", "all"):
                self.page.evaluate(f"document.querySelector('[data-range=\"{range_name}\"]').click()")
                for chart in charts_painted(self.page):
                    with self.subTest(range=range_name, chart=chart["id"]):
                        self.assertGreater(chart["values"], 0)
                        self.assertEqual(chart["missed"], [])
        finally:
            self.page.evaluate("document.querySelector('[data-range=\"90\"]').click()")

    def check_days_and_nights(self, dates: list[str]):
        """For each chosen date, the tables show the data JSON's values exactly."""
        days, nights = self.data["days"], self.data["nights"]
        tables = {
            "steps": ("days", ["steps"]),
            "energy": ("days", ["active_kcal", "move_goal_kcal"]),
            "rings": ("days", ["move_kcal", "move_goal_kcal", "exercise_ring_min", "exercise_goal_min", "stand_h", "stand_goal_h"]),
            "heart-trends": ("days", ["resting_hr", "walking_hr", "hrv_sdnn_ms"]),
            "sleep-stages": ("nights", ["core_h", "deep_h", "rem_h", "awake_h", "unspecified_h", "asleep_h", "in_bed_h"]),
            "sleep-window": ("nights", ["bedtime", "wake"]),
        }
        checked = 0
        for date in dates:
            for table, (kind, fields) in tables.items():
                source = days if kind == "days" else nights
                if date not in source["date"]:
                    continue
                i = source["date"].index(date)
                for name in fields:
                    with self.subTest(date=date, table=table, field=name):
                        expected = js_text(source[name][i])
                        self.assertEqual(cell(self.page, table, f'[data-date="{date}"]', name), [expected, expected])
                        checked += 1
        return checked


class ExampleReportTests(ReportPageChecks, unittest.TestCase):
    # No rejected records nor VO2 max in the sample: the rejected chart says so instead. Of the
    # families beyond activity, sleep and heart it holds blood pressure (and distance, flights,
    # exercise and mindful minutes); the others have no figure at all.
    expected_charts = 18

    @classmethod
    def setUpClass(cls):
        require_tools()
        cls.dir = Path(tempfile.mkdtemp(prefix="report-example-"))
        text = report_fixture.EXAMPLE_DATA.read_text(encoding="utf-8")
        cls.data = json.loads(text)
        cls.html = report_fixture.render_file(text, cls.dir / "report.html")
        open_rendered(cls)

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_chosen_days_show_the_data_and_the_run_outputs(self):
        self.assertGreater(self.page.evaluate(OPEN_ALL_TABLES), 10)
        self.assertGreater(self.check_days_and_nights(["2024-03-19", "2024-03-20", "2024-03-31", "2024-04-14"]), 60)
        # Independent of the JSON: Pipelines/README.md documents the sample's merged steps on
        # 2024-03-20 (10,336), and sleep_daily.csv has asleep_s 28083 for that night:
        # 28083 s = 7 h 48 min 3 s = 7.8008 h → 7.8.
        self.assertEqual(cell(self.page, "steps", '[data-date="2024-03-20"]', "steps"), ["10336", "10336"])
        self.assertEqual(cell(self.page, "sleep-stages", '[data-date="2024-03-20"]', "asleep_h"), ["7.8", "7.8"])
        self.assertEqual(cell(self.page, "sleep-window", '[data-date="2024-03-19"]', "bedtime"),
                         ["2024-03-18 22:44", "2024-03-18 22:44"])

    def test_workout_table_rows_carry_the_data(self):
        w = self.data["workouts"]
        for i in (0, len(w["id"]) - 1):
            row = self.page.evaluate(f"""[...document.querySelectorAll('#workout-table tr[data-id="{w['id'][i]}"] td[data-field]')]
                .map(td => [td.dataset.field, td.dataset.value])""")
            values = dict(row)
            for name in ("start", "type", "duration_s", "distance_m", "energy_kcal", "hr_avg", "hr_max"):
                self.assertEqual(values[name], js_text(w[name][i]), name)

    def test_heart_rate_per_minute_leaves_absent_minutes_as_gaps(self):
        day = self.data["heart_rate"]["days"][-1]
        points = self.page.evaluate("Chart.getChart(document.querySelector('canvas[data-chart=\"heart-minute\"]'))"
                                    ".data.datasets[0].data.map(p => [p.x, p.y])")
        gaps = sum(1 for a, b in zip(day["minute"], day["minute"][1:]) if b - a > 5)  # DATA.md: bridged up to 5
        self.assertGreater(gaps, 0)
        self.assertEqual(sum(1 for _, y in points if y is None), gaps)
        self.assertEqual([(x, y) for x, y in points if y is not None], list(zip(day["minute"], day["bpm_max"])))
        self.assertNotIn(0, [y for _, y in points])

    def test_phone_width_has_no_sideways_scrolling(self):
        page = self.browser.open(self.html, width=390, height=844)
        try:
            page.wait_for(RENDERED)
            self.assertEqual(page.evaluate("document.documentElement.scrollWidth"), 390)
            self.assertEqual(page.evaluate("+document.documentElement.dataset.chartsDrawn"), self.expected_charts)
            self.assertGreater(png_summary(page.screenshot())["foreground_share"], 0.15)
            self.assertEqual(page.console_errors(), [])
        finally:
            page.close()

    def test_phone_width_legends_and_tables_fit_their_cards(self):
        # At 390 px the rings legend was cut ("Move: 687 of 520 kcal (1"), the source table's
        # numbers were cut and the workout table showed 2 of its 9 columns.
        page = self.browser.open(self.html, width=390, height=844)
        try:
            page.wait_for(RENDERED)
            legend = page.evaluate("""(() => { const c = Chart.getChart(document.querySelector('canvas[data-chart="rings-day"]'));
                return { position: c.options.plugins.legend.position, width: c.width,
                         boxes: c.legend.legendHitBoxes.map(b => [b.left, b.left + b.width]) }; })()""")
            self.assertEqual(legend["position"], "bottom")
            self.assertEqual(len(legend["boxes"]), 3)
            for left, right in legend["boxes"]:
                self.assertGreaterEqual(left, 0)
                self.assertLessEqual(right, legend["width"])
            sources = page.evaluate("""(() => { const w = document.getElementById('quality-sources');
                return [w.scrollWidth, w.clientWidth]; })()""")
            self.assertLessEqual(sources[0], sources[1], "the source table fits its card")
            # The workout table scrolls inside its card; the first five columns are in view.
            visible = page.evaluate("""(() => { const w = document.getElementById('workout-table-wrap').getBoundingClientRect();
                return [...document.querySelectorAll('#workout-table th')].filter(th => th.getBoundingClientRect().right <= w.right + 0.5).length; })()""")
            self.assertGreaterEqual(visible, 5)
            self.assertEqual(page.evaluate("getComputedStyle(document.getElementById('workout-table-wrap')).overflowX"), "auto")
        finally:
            page.close()

    def test_phone_width_type_names_are_readable_beside_their_bars(self):
        # At 390 px the overlap chart labelled every other type and cut the long ones at the
        # canvas edge ("kingAsymmetryPercentage").
        page = self.browser.open(self.html, width=390, height=844)
        try:
            page.wait_for(RENDERED)
            pairs = check_names_beside_bars(self, page, "quality-overlap")
            shown = sorted(self.data["quality"]["types"], key=lambda t: -(t["samples"] or 0))[:12]
            self.assertEqual([name for name, _ in pairs], [t["type"] for t in shown])
            self.assertEqual(page.console_errors(), [])
        finally:
            page.close()

    def test_the_template_without_data_says_so(self):
        page = self.browser.open(report_fixture.TEMPLATE)
        try:
            message = page.wait_for(RENDERED)
            self.assertIn("template without its data", message)
            self.assertTrue(page.evaluate("!document.getElementById('problem').hidden"))
            self.assertEqual(page.foreign_requests(), [])
            self.assertEqual(page.console_errors(), [])
        finally:
            page.close()


class ExtremeValuesReportTests(ReportPageChecks, RenderedReport):
    """Any finite value is drawn: ±1e308, the largest double and the smallest subnormal in every
    day, night, workout and per-minute series of the example. Chart.js's own tick formatter threw
    "minimumFractionDigits value is out of range" on such an axis and the page drew nothing."""

    # Every `days` column gets extreme values, so every family's chart is drawn.
    expected_charts = 26
    EXTREMES = [1e308, -1e308, 1.7976931348623157e308, 5e-324, -5e-324]

    @classmethod
    def extreme(cls) -> dict:
        data = json.loads(report_fixture.EXAMPLE_DATA.read_text(encoding="utf-8"))
        columns = [data["days"][k] for k in data["days"] if k != "date"]
        columns += [data["nights"][k] for k in data["nights"] if k.endswith("_h")]
        columns += [data["workouts"][k] for k in ("duration_s", "distance_m", "energy_kcal", "hr_avg", "hr_max")]
        columns += [day["bpm_max"] for day in data["heart_rate"]["days"]]
        for column in columns:
            for index, value in enumerate(cls.EXTREMES[: len(column)]):
                column[-1 - index] = value
        return data

    prefix = "report-extreme-"

    @classmethod
    def report_data(cls):
        return cls.extreme()

    def test_every_value_given_to_a_chart_is_painted(self):
        # A chart holding ±1e308 puts its ordinary values on one pixel row and the extremes off the
        # canvas, so it cannot be checked point by point (the tables above show its values); every
        # chart without an extreme value is checked as on the other pages.
        extreme = set(self.page.evaluate("""[...document.querySelectorAll('canvas[data-chart][data-drawn="1"]')]
            .filter(c => Chart.getChart(c).data.datasets.some(d => d.data.some(raw => {
              const v = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? raw.y : raw;
              return typeof v === 'number' && (Math.abs(v) > 1e300 || (v !== 0 && Math.abs(v) < 1e-300));
            }))).map(c => c.dataset.chart)"""))
        checked = [chart for chart in charts_painted(self.page) if chart["id"] not in extreme]
        self.assertGreater(sum(chart["values"] for chart in checked), 0)
        for chart in checked:
            self.assertEqual(chart["missed"], [], chart["id"])

    def test_every_range_draws_with_the_extremes_in_its_tables(self):
        for range_name in ("30", "90", "365", "all"):
            self.page.evaluate(f"document.querySelector('[data-range=\"{range_name}\"]').click()")
            self.assertIsNone(self.page.evaluate("document.documentElement.dataset.reportError || null"))
        self.assertGreater(self.page.evaluate(OPEN_ALL_TABLES), 10)
        tables = self.page.evaluate("document.body.innerText")
        self.assertIn("1e+308", tables)
        self.assertIn("-1e+308", tables)
        self.assertEqual(self.page.console_errors(), [])


class TenYearReportTests(ReportPageChecks, unittest.TestCase):
    expected_charts = 15

    @classmethod
    def setUpClass(cls):
        require_tools()
        cls.dir = Path(tempfile.mkdtemp(prefix="report-10y-"))
        cls.data = report_fixture.synthetic(years=10, workouts=1000, seed=1)
        cls.html = report_fixture.render_file(cls.data, cls.dir / "report.html")
        cls.browser = Browser()
        try:
            started = time.monotonic()
            cls.page = cls.browser.open(cls.html)
            cls.page.wait_for(RENDERED)
            cls.load_seconds = time.monotonic() - started
        except BaseException:
            cls.browser.close()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_size_and_render_time(self):
        size = self.html.stat().st_size
        render_ms = int(self.page.evaluate("document.documentElement.dataset.renderMs"))
        since_navigation = int(self.page.evaluate("document.documentElement.dataset.sinceNavigationMs"))
        all_ms = self.page.evaluate("""(() => { const t = performance.now();
            document.querySelector('[data-range="all"]').click(); return performance.now() - t; })()""")
        self.page.evaluate("document.querySelector('[data-range=\"90\"]').click()")
        print(f"\n10-year report: {size / 1e6:.2f} MB, {len(self.data['days']['date'])} days, "
              f"{len(self.data['workouts']['id'])} workouts; first render {render_ms} ms of script "
              f"({since_navigation} ms from navigation, {self.load_seconds:.2f} s until the test saw it); "
              f"switching to all 10 years {all_ms:.0f} ms", file=sys.stderr)
        self.assertLess(size, 5_000_000)
        # Measured about 1-2 s on two shared cores; the bound catches a slow path, not jitter.
        self.assertLess(since_navigation, 4000)
        self.assertLess(all_ms, 3000)

    def test_all_years_are_drawn_as_monthly_means(self):
        # 522 weekly bars in a 558-pixel chart were a moiré: beyond three years a bar is a month.
        try:
            self.page.evaluate("document.querySelector('[data-range=\"all\"]').click()")
            labels = self.page.evaluate("Chart.getChart(document.querySelector('canvas[data-chart=\"steps\"]')).data.labels")
            self.assertEqual(len(labels), 121)  # 2014-03-31 … 2024-03-27: March 2014 to March 2024
            self.assertEqual((labels[0], labels[1], labels[-1]), ("2014-03", "2014-04", "2024-03"))
            width = self.page.evaluate("Chart.getChart(document.querySelector('canvas[data-chart=\"steps\"]')).chartArea.width")
            self.assertGreater(width / len(labels), 3)
            self.assertEqual(int(self.page.evaluate("document.documentElement.dataset.chartsDrawn")), self.expected_charts)
            self.assertEqual(self.page.console_errors(), [])
        finally:
            self.page.evaluate("document.querySelector('[data-range=\"90\"]').click()")

    def test_chosen_days_across_the_years_show_the_data(self):
        try:
            self.page.evaluate(OPEN_ALL_TABLES)
            dates = [self.data["days"]["date"][k] for k in (0, 400, 1800, 3000, -1)]
            self.assertGreater(self.check_days_and_nights(dates), 60)
        finally:
            self.page.evaluate("""(() => { for (const d of document.querySelectorAll('details[open]')) d.open = false;
                document.querySelector('[data-range="90"]').click(); })()""")

    def test_rejected_examples_survive_escaping(self):
        try:
            self.page.evaluate("document.querySelector('details[data-table-for=\"quality-rejected\"]').open = true")
            self.page.settle(0.1)
            details = self.page.evaluate("""[...document.querySelectorAll('details[data-table-for="quality-rejected"] td[data-field="detail"]')]
                .map(td => td.textContent)""")
            self.assertIn('value="</script><!--x"', details)
            self.assertIn('value="n/a & <b>"', details)
            self.assertEqual(self.page.console_errors(), [])
        finally:
            self.page.evaluate("document.querySelector('details[data-table-for=\"quality-rejected\"]').open = false")


# Per element of a chart's visible datasets that holds a value, whether the canvas shows it: a
# colour of the chart's series (its own, or one drawn over it) within 2 device pixels of a line's
# or point's position (4 for a dashed line); the bar's own colour anywhere on a bar's span (a line
# crossing a bar that is not drawn must not pass for it; a sliver of a few pixels may show a colour
# drawn over it). Canvas pixels are the canvas's own,
# un-premultiplied: a translucent bar reads as its colour. A bar shorter than a pixel cannot show
# and is not counted. Counts what Chart.js was given against what was painted.
PAINTED = """(id => {
  const chart = Chart.getChart(document.querySelector('canvas[data-chart="' + id + '"]'));
  if (!chart) return null;
  const colours = chart.data.datasets.flatMap(d => [d.borderColor, d.backgroundColor].flat()).map(c => rgb(c)).filter(Boolean);
  const W = chart.canvas.width, H = chart.canvas.height, ratio = chart.currentDevicePixelRatio;
  const img = chart.canvas.getContext('2d').getImageData(0, 0, W, H).data;
  function rgb(c) { const m = /^#([0-9a-f]{6})/i.exec(String(c)); return m ? [0, 2, 4].map(k => parseInt(m[1].slice(k, k + 2), 16)) : null; }
  const near = (px, py, r, wanted = colours) => {
    const cx = Math.round(px * ratio), cy = Math.round(py * ratio);
    for (let y = Math.max(0, cy - r); y <= Math.min(H - 1, cy + r); y++)
      for (let x = Math.max(0, cx - r); x <= Math.min(W - 1, cx + r); x++) {
        const o = (y * W + x) * 4;
        if (img[o + 3] > 40 && wanted.some(col => Math.abs(img[o] - col[0]) + Math.abs(img[o + 1] - col[1]) + Math.abs(img[o + 2] - col[2]) < 60)) return true;
      }
    return false;
  };
  let values = 0;
  const missed = [];
  chart.data.datasets.forEach((d, k) => {
    if (!chart.isDatasetVisible(k)) return;
    const meta = chart.getDatasetMeta(k), bar = meta.type === 'bar';
    meta.data.forEach((e, i) => {
      const raw = d.data[i], v = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? raw.y : raw;
      if (v === null || v === undefined || (bar && Math.abs((chart.options.indexAxis === 'y' ? e.x : e.y) - e.base) < 1)) return;
      values += 1;
      let ok = false;
      const own = [d.borderColor, d.backgroundColor].flat().map(c => rgb(c)).filter(Boolean);
      // A bar runs from its base to its value along the value axis: y, or x for a horizontal bar.
      const across = chart.options.indexAxis === 'y';
      const [from, to] = across ? [e.x, e.base] : [e.y, e.base];
      // A sliver of a few device pixels (0.1 h awake atop a stack, on a phone) may lie wholly under
      // a marker drawn over it, which then counts; a taller bar must show its own colour.
      const wanted = Math.abs(to - from) * ratio <= 6 ? colours : own;
      if (bar) for (let t = Math.min(from, to); t <= Math.max(from, to) && !ok; t += 1 / ratio) ok = across ? near(t, e.y, 1, wanted) : near(e.x, t, 1, wanted);
      else ok = near(e.x, e.y, d.borderDash ? 4 : 2);  // a dashed line's gap is 3 pixels
      if (!ok) missed.push(d.label + ' #' + i);
    });
  });
  return { values, missed };
})"""


def charts_painted(page) -> list[dict]:
    """PAINTED for every drawn chart but the rings doughnut (its arcs are not points)."""
    ids = page.evaluate("""[...document.querySelectorAll('canvas[data-chart][data-drawn="1"]')]
        .filter(c => Chart.getChart(c).config.type !== 'doughnut').map(c => c.dataset.chart)""")
    return [dict(page.evaluate(PAINTED + f"('{i}')"), id=i) for i in ids]


def real_shapes() -> dict:
    """The example data reshaped the way real exports are (bwassim's Garmin + iPhone export and
    older iPhones): heart rate every 2 minutes, nights without stages and nights with only time
    in bed, a pace on a rounding edge, a source name with a no-break space, a single type."""
    data = json.loads(report_fixture.EXAMPLE_DATA.read_text(encoding="utf-8"))
    day = data["heart_rate"]["days"][-1]
    # Garmin: every second minute from 06:00 to 21:58, and one minute alone at 23:30.
    day["minute"] = list(range(360, 1320, 2)) + [1410]
    day["bpm_max"] = [60 + (m % 50) for m in range(360, 1320, 2)] + [71]
    day["utc_offsets"] = [[0, 120]]
    nights = data["nights"]
    for k, date in enumerate(nights["date"]):
        for stage in ("core_h", "deep_h", "rem_h", "awake_h"):
            nights[stage][k] = None
        # Alternate 7.99 h and 8 h asleep: the mean, 7.995 h = 479.7 min, shows as 8 h 00 min.
        asleep = 7.99 if k % 2 else 8
        nights["unspecified_h"][k] = nights["asleep_h"][k] = asleep
        nights["in_bed_h"][k] = 8.5
    # Two nights with time in bed only (an app that logs in bed, nothing asleep): one without an
    # asleep value, one with 0 as sleep_daily.csv writes it for bwassim's 47 such nights.
    for k, asleep in ((3, None), (10, 0)):
        nights["unspecified_h"][k] = nights["asleep_h"][k] = asleep
        nights["bedtime"][k] = nights["wake"][k] = None
        nights["in_bed_h"][k] = 6.25
    if len(nights["date"]) % 2:
        raise AssertionError("the sleep mean below needs an even number of nights")
    w = data["workouts"]
    w["type"][-1], w["duration_s"][-1], w["distance_m"][-1] = "Running", 2159, 6000  # 35:59 over 6.00 km
    data["export"]["sources"] = ["Apple Watch", "Apple\u00a0Watch", " iPhone "]
    data["export"]["devices"] = []  # iOS 8 and many apps write no device
    data["quality"]["types"] = data["quality"]["types"][:1]
    return data


class RealShapesReportTests(RenderedReport):
    """What bwassim's export and older iPhones showed wrong: an empty minute chart, an empty sleep
    chart, no range summary, "5:60 /km", "7 h 60 min", a duplicated source, "1 largest types"."""

    prefix = "report-real-shapes-"

    @classmethod
    def report_data(cls):
        return real_shapes()

    def test_every_measured_minute_every_2_minutes_is_painted(self):
        painted = self.page.evaluate(PAINTED + "('heart-minute')")
        self.assertEqual(painted["values"], 481)  # 480 minutes every 2 from 06:00, and 23:30
        self.assertEqual(painted["missed"], [])
        points = self.page.evaluate("Chart.getChart(document.querySelector('canvas[data-chart=\"heart-minute\"]'))"
                                    ".data.datasets[0].data.map(p => [p.x, p.y])")
        # One break: 21:58 → 23:30 is longer than the 5-minute bridge.
        self.assertEqual([x for x, y in points if y is None], [1319])
        sub = self.page.evaluate("document.querySelector('[data-figure=\"heart-minute\"] [data-sub]').textContent")
        self.assertIn("481 minutes with data", sub)
        day = self.data["heart_rate"]["days"][-1]["date"]
        k = self.data["days"]["date"].index(day)
        low, high = self.data["days"]["hr_min"][k], self.data["days"]["hr_max"][k]
        self.assertIn(f"the day {low:g}–{high:g} bpm", sub)

    def test_nights_without_stages_and_in_bed_only_are_painted(self):
        self.page.evaluate("document.querySelector('[data-range=\"all\"]').click()")
        try:
            painted = self.page.evaluate(PAINTED + "('sleep-stages')")
            labels = self.page.evaluate("Chart.getChart(document.querySelector('canvas[data-chart=\"sleep-stages\"]'))"
                                        ".data.datasets.map(d => d.label)")
            self.assertEqual(labels, ["Asleep (no stages)", "In bed, no asleep time", "In bed"])
            legend = self.page.evaluate("Chart.getChart(document.querySelector('canvas[data-chart=\"sleep-stages\"]'))"
                                        ".legend.legendItems.map(i => i.text)")
            self.assertEqual(legend, labels)  # the markers are drawn last, yet listed in their place
            # 26 nights asleep, 2 in bed only, and the 28 in-bed markers.
            self.assertEqual(painted["values"], 26 + 2 + 28)
            self.assertEqual(painted["missed"], [])
        finally:
            self.page.evaluate("document.querySelector('[data-range=\"90\"]').click()")

    def test_heart_per_day_and_body_mass_are_painted(self):
        for chart, values in (("heart-daily", 2 * 28), ("body", 10)):
            with self.subTest(chart=chart):
                painted = self.page.evaluate(PAINTED + f"('{chart}')")
                self.assertEqual(painted["values"], values)
                self.assertEqual(painted["missed"], [])

    def test_summary_of_the_range(self):
        figures = dict(self.page.evaluate("""[...document.querySelectorAll('#summary-figures [data-summary]')]
            .map(d => [d.dataset.summary, [d.dataset.value, d.querySelector('.big').textContent, d.querySelector('.over').textContent]])"""))
        # 13 nights of 8 h and 13 of 7.99 h (two are in bed only): mean 7.995 h = 479.7 min → 8 h 00 min.
        self.assertAlmostEqual(float(figures["asleep_h"][0]), 7.995, places=9)
        self.assertEqual(figures["asleep_h"][1:], ["8 h 00 min", "over 26 nights with sleep"])
        steps = [v for v in self.data["days"]["steps"] if v is not None]
        self.assertAlmostEqual(float(figures["steps"][0]), sum(steps) / len(steps), places=6)
        self.assertEqual(figures["steps"][2], f"over {len(steps)} days")
        # The example's 17 workouts, the last one made 35:59: their durations summed, in minutes.
        minutes = round(sum(self.data["workouts"]["duration_s"]) / 60)
        self.assertEqual(figures["workouts"], ["17", "17", f"{minutes // 60} h {minutes % 60:02d} min in all"])
        self.assertEqual(figures["resting_hr"][2], "over 28 days")

    def test_pace_is_rounded_once(self):
        # 2159 s / 6 km = 359.83 s/km → 360 s → 6:00 (was "5:60"); the duration 2159 s is 35:59.
        last = self.data["workouts"]["id"][-1]
        cells = dict(self.page.evaluate(f"""[...document.querySelectorAll('#workout-table tr[data-id="{last}"] td')]
            .map((td, k) => [document.querySelectorAll('#workout-table th')[k].textContent, td.textContent])"""))
        self.assertEqual((cells["duration"], cells["distance"], cells["pace / speed"]), ("35:59", "6.00 km", "6:00 /km"))

    def test_sources_differing_in_white_space_are_listed_once(self):
        text = self.page.evaluate("document.querySelector('[data-fact=\"sources\"] dd').textContent")
        self.assertEqual(text, "Apple Watch, iPhone")

    def test_no_device_written_is_not_called_unknown(self):
        text = self.page.evaluate("document.querySelector('[data-fact=\"devices\"] dd').textContent")
        self.assertEqual(text, "none named in the export")

    def test_one_type_is_not_called_largest_types(self):
        sub = self.page.evaluate("document.querySelector('[data-figure=\"quality-overlap\"] [data-sub]').textContent")
        self.assertEqual(sub, "share of each type's records, the only type")

    def test_no_console_errors(self):
        self.assertEqual(self.page.console_errors(), [])


class LongNamesReportTests(unittest.TestCase):
    """Names from an export wider than a phone's chart: HealthKit's long type names, an app's own
    type holding markup, a long workout type. At 390 px each is drawn whole or cut with "…", the
    tooltip and the data table keep it whole, and none becomes markup."""

    MARKUP = '<img src=x onerror="document.title=1">AppSpecificMeasurementOfSomething'
    WORKOUT = "AnAppsOwnActivityWithAnExtremelyLongNameIndeed"

    @classmethod
    def setUpClass(cls):
        require_tools()
        cls.dir = Path(tempfile.mkdtemp(prefix="report-long-names-"))
        data = json.loads(report_fixture.EXAMPLE_DATA.read_text(encoding="utf-8"))
        types = sorted(data["quality"]["types"], key=lambda t: -(t["samples"] or 0))
        for t, name in zip(types, ["WalkingDoubleSupportPercentage", "AppleWalkingSteadiness", cls.MARKUP]):
            t["type"] = name
        w = data["workouts"]
        w["type"] = [cls.WORKOUT if t == "Running" else t for t in w["type"]]
        cls.data = data
        cls.html = report_fixture.render_file(data, cls.dir / "report.html")
        open_rendered(cls, width=390, height=844)

    @classmethod
    def tearDownClass(cls):
        cls.browser.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_type_names_are_whole_or_cut_with_an_ellipsis(self):
        pairs = dict(check_names_beside_bars(self, self.page, "quality-overlap"))
        # 40 % of a 348-pixel chart holds about 20 characters of 12-pixel type.
        self.assertEqual(pairs["StepCount"], "StepCount")
        for name in ("WalkingDoubleSupportPercentage", "AppleWalkingSteadiness", self.MARKUP):
            self.assertTrue(pairs[name].endswith("…"), pairs[name])
        markup = list(pairs).index(self.MARKUP)
        self.assertEqual(hover_tooltip(self.page, "quality-overlap", markup)["title"], [self.MARKUP])

    def test_the_data_table_keeps_the_whole_names_as_text(self):
        self.page.evaluate("document.querySelector('details[data-table-for=\"quality-overlap\"]').open = true")
        self.page.settle(0.1)
        names = self.page.evaluate("""[...document.querySelectorAll('details[data-table-for="quality-overlap"] td[data-field="type"]')]
            .map(td => [td.textContent, td.children.length])""")
        self.assertIn([self.MARKUP, 0], names)
        self.assertIn(["WalkingDoubleSupportPercentage", 0], names)
        self.assertEqual(self.page.evaluate("document.querySelectorAll('main img').length"), 0)
        self.assertNotEqual(self.page.evaluate("document.title"), "1")

    def test_type_names_in_the_sources_table_wrap_between_words_only(self):
        # At 390 px "Which source counted" broke type names inside words ("WalkingSpe|ed"): each
        # word of a CamelCase name now lies on one line, and the cell's text is still the name.
        cells = self.page.evaluate("""[...document.querySelectorAll('#quality-sources td[data-field="type"]')].map(td => {
            const words = [...td.childNodes].filter(n => n.nodeType === Node.TEXT_NODE).map(n => {
                const range = document.createRange(); range.selectNodeContents(n);
                return [n.textContent, new Set([...range.getClientRects()].map(r => Math.round(r.top))).size]; });
            const range = document.createRange(); range.selectNodeContents(td);
            return [td.textContent, words, new Set([...range.getClientRects()].map(r => Math.round(r.top))).size]; })""")
        cell = next(c for c in cells if c[0] == "WalkingDoubleSupportPercentage")
        self.assertEqual([word for word, _ in cell[1]], ["Walking", "Double", "Support", "Percentage"])
        self.assertEqual([lines for _, lines in cell[1]], [1, 1, 1, 1])
        # It did wrap: the name is wider than its cell at this width.
        self.assertGreater(cell[2], 1)
        markup = next(c for c in cells if c[0] == self.MARKUP)
        self.assertEqual("".join(word for word, _ in markup[1]), self.MARKUP)

    def test_a_long_workout_type_fits_the_legend_and_shows_whole_in_the_tooltip(self):
        legend = self.page.evaluate("""(() => { const c = Chart.getChart(document.querySelector('canvas[data-chart="workout-time"]'));
            return { width: c.width, texts: c.legend.legendItems.map(i => i.text), labels: c.data.datasets.map(d => d.label),
                     boxes: c.legend.legendHitBoxes.map(b => [b.left, b.left + b.width]) }; })()""")
        whole = "An Apps Own Activity With An Extremely Long Name Indeed"
        self.assertIn(whole, legend["labels"])
        text = legend["texts"][legend["labels"].index(whole)]
        self.assertTrue(text.endswith("…") and whole.startswith(text[:-1]), text)
        for left, right in legend["boxes"]:
            self.assertGreaterEqual(left, 0)
            self.assertLessEqual(right, legend["width"])
        dataset = legend["labels"].index(whole)
        week = self.page.evaluate(f"""Chart.getChart(document.querySelector('canvas[data-chart="workout-time"]'))
            .data.datasets[{dataset}].data.findIndex(v => v)""")
        self.assertGreaterEqual(week, 0, "the long type has a bar in the range")
        body = hover_tooltip(self.page, "workout-time", week, dataset)["body"]
        self.assertTrue(any(line.startswith(whole + ": ") for line in body), body)

    def test_no_console_errors(self):
        self.assertEqual(self.page.console_errors(), [])


class EmptyRangeReportTests(RenderedReport):
    """A range with nothing of a kind says so instead of drawing an empty 0–1 axis: the example
    with one more workout 200 days after its last day, so the last 90 days hold only that."""

    prefix = "report-empty-range-"

    @classmethod
    def report_data(cls):
        data = json.loads(report_fixture.EXAMPLE_DATA.read_text(encoding="utf-8"))
        w = data["workouts"]
        for key in w:
            w[key].append(w[key][0])
        w["id"][-1], w["start"][-1], w["route"][-1], w["laps"][-1] = "LATE", "2024-11-01 08:00", None, None
        return data

    def test_charts_without_data_in_the_range_say_so(self):
        empty = self.page.evaluate("[...document.querySelectorAll('p[data-empty-range]')].map(p => [p.dataset.emptyRange, p.textContent])")
        ids = sorted(i for i, _ in empty)
        self.assertEqual(ids, sorted(["sleep-stages", "sleep-window", "steps", "energy", "rings", "rings-day",
                                      "heart-trends", "heart-daily", "body", "distance", "flights", "minutes",
                                      "blood-pressure"]))
        self.assertEqual(dict(empty)["steps"], "No data of this kind from 2024-08-04 to 2024-11-01. Choose a longer range to see it.")
        hidden = self.page.evaluate("[...document.querySelectorAll('canvas[data-empty-range=\"1\"]')].every(c => c.parentElement.hidden)")
        self.assertTrue(hidden)
        drawn, empty_count, canvases = self.page.evaluate("""[+document.documentElement.dataset.chartsDrawn,
            +document.documentElement.dataset.chartsEmptyInRange, document.querySelectorAll('canvas[data-chart]').length]""")
        self.assertEqual((empty_count, drawn + empty_count), (13, canvases))
        summary = self.page.evaluate("document.querySelector('[data-summary=\"steps\"] .over').textContent")
        self.assertEqual(summary, "nothing recorded in this range")
        # All: every chart is drawn again and the notes are gone.
        self.page.evaluate("document.querySelector('[data-range=\"all\"]').click()")
        self.assertEqual(self.page.evaluate("document.querySelectorAll('p[data-empty-range]').length"), 0)
        self.assertEqual(self.page.evaluate("document.querySelectorAll('canvas[data-chart][data-drawn=\"1\"]').length"),
                         self.page.evaluate("document.querySelectorAll('canvas[data-chart]').length"))
        self.assertEqual(self.page.console_errors(), [])


    def test_the_workout_legend_names_only_the_types_in_the_range(self):
        # bwassim's report listed "Mixed Cardio" under a range whose bars held none (its one Mixed
        # Cardio workout is older than the 90 days shown first). Here the range holds only the late
        # copy of the first workout.
        def label(kind):
            return re.sub(r"([a-z])([A-Z])", r"\1 \2", kind)
        labels = "Chart.getChart(document.querySelector('canvas[data-chart=\"workout-time\"]')).data.datasets.map(d => d.label)"
        self.page.evaluate("document.querySelector('[data-range=\"90\"]').click()")
        self.assertEqual(self.page.evaluate(labels), [label(self.data["workouts"]["type"][0])])
        self.page.evaluate("document.querySelector('[data-range=\"all\"]').click()")
        types = self.data["workouts"]["type"]
        ranked = sorted(set(types), key=lambda t: -types.count(t))
        self.assertEqual(sorted(self.page.evaluate(labels)),
                         sorted([label(t) for t in ranked[:5]] + (["Other"] if len(ranked) > 5 else [])))


class LegendInRangeReportTests(RenderedReport):
    """A legend names what its chart draws in the range shown (k0rventen's report listed a
    "7-day average" over three days of steps that have none). The example with 100 more days:
    steps on the last three of them only, walking and running on the last five, cycling only in
    the example's first 28 days. The 90 days shown first hold none of the cycling and no 7-day
    average; all of it holds both."""

    prefix = "report-legend-range-"

    @classmethod
    def report_data(cls):
        data = json.loads(report_fixture.EXAMPLE_DATA.read_text(encoding="utf-8"))
        days = data["days"]
        first = len(days["date"])
        last = datetime.date.fromisoformat(days["date"][-1])
        for key, column in days.items():
            column.extend(str(last + datetime.timedelta(days=k)) if key == "date" else None for k in range(1, 101))
        days["steps"][-3:] = [5000, 6000, 7000]
        days["distance_km"][-5:] = [3.0, 3.5, 4.0, 4.5, 5.0]
        days["cycling_km"][:first] = [12.5] * first
        return data

    def labels(self, chart):
        return self.page.evaluate(
            f"Chart.getChart(document.querySelector('canvas[data-chart=\"{chart}\"]')).data.datasets.map(d => d.label)")

    def test_a_legend_names_only_what_the_range_draws(self):
        self.page.evaluate("document.querySelector('[data-range=\"90\"]').click()")
        self.assertEqual(self.labels("steps"), ["Steps"])
        self.assertEqual(self.labels("distance"), ["Walking + running"])
        self.page.evaluate("document.querySelector('[data-range=\"all\"]').click()")
        self.assertEqual(self.labels("steps"), ["Steps", "7-day average"])
        self.assertEqual(self.labels("distance"), ["Walking + running", "Cycling"])
        self.assertEqual(self.page.console_errors(), [])


class AllStepDaysFlaggedReportTests(RenderedReport):
    """k0rventen's export: every day's steps add up one app's overlapping samples, so every day is
    in `worth_a_look.left_out.steps` and the summary showed no step average at all. It now shows
    the mean of all of them, as Health adds them up, and says so."""

    prefix = "report-step-days-"

    @classmethod
    def report_data(cls):
        data = json.loads(report_fixture.EXAMPLE_DATA.read_text(encoding="utf-8"))
        days = data["days"]
        data["worth_a_look"]["left_out"]["steps"] = [d for d, v in zip(days["date"], days["steps"]) if v is not None]
        return data

    def summary(self):
        return self.page.evaluate("""(() => { const d = document.querySelector('[data-summary="steps"]');
            return [d.dataset.value, d.querySelector('.over').textContent]; })()""")

    def test_every_day_flagged_averages_them_all_and_says_so(self):
        self.page.evaluate("document.querySelector('[data-range=\"all\"]').click()")
        steps = [v for v in self.data["days"]["steps"] if v is not None]
        value, over = self.summary()
        self.assertAlmostEqual(float(value), sum(steps) / len(steps), places=6)
        self.assertEqual(over, f"over {len(steps)} days, each adding up one app's overlapping samples, "
                               "as Health does (Worth a look)")
        self.assertEqual(self.page.console_errors(), [])


class LongNightReportTests(RenderedReport):
    """A 25 h "night" of overlapping manual entries (the sleep-apps-oddities profile) stretched the
    sleep axis to 25 h, squashing every real night to a third: the axis stops at 16 h, the bar is
    cut there, the subtitle says so and the chart keeps the whole value."""

    prefix = "report-long-night-"
    # The long night: the third from last, within the 90 days shown first.
    index = -3

    @classmethod
    def report_data(cls):
        data = json.loads(report_fixture.EXAMPLE_DATA.read_text(encoding="utf-8"))
        nights = data["nights"]
        for key in ("core_h", "deep_h", "rem_h", "awake_h"):
            nights[key][cls.index] = None
        nights["unspecified_h"][cls.index] = nights["asleep_h"][cls.index] = 25.0
        nights["in_bed_h"][cls.index] = 25.5
        return data

    def test_the_axis_stops_at_16_hours_and_says_so(self):
        chart = "Chart.getChart(document.querySelector('canvas[data-chart=\"sleep-stages\"]'))"
        self.assertEqual(self.page.evaluate(chart + ".scales.y.max"), 16)
        sub = self.page.evaluate("document.querySelector('[data-figure=\"sleep-stages\"] [data-sub]').textContent")
        self.assertIn("1 bar reaches beyond 16 h and is cut at the axis (see its tooltip)", sub)
        values = self.page.evaluate(chart + ".data.datasets.find(d => d.label === 'Asleep (no stages)').data")
        self.assertIn(25.0, values)
        self.assertEqual(self.page.console_errors(), [])


class ExampleDataTests(unittest.TestCase):
    """example-data.json is what report_reference.py makes of the bundled sample's outputs, and
    that second implementation's priority merge agrees with the Swift statistics."""

    @classmethod
    def setUpClass(cls):
        healthetl = binary()
        import subprocess

        cls.dir = Path(tempfile.mkdtemp(prefix="report-sample-"))
        repo = report_fixture.REPO
        subprocess.run([healthetl, "run", "--quiet", "--pipeline", str(repo / "Pipelines/default.json"),
                        "--pipeline", str(repo / "Tests/EndToEnd/report-extra.json"), "--out", str(cls.dir / "out"),
                        str(repo / "SampleData/export.zip")], check=True, timeout=120)
        cls.out = cls.dir / "out"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_example_data_is_made_from_the_sample(self):
        import report_reference

        made = report_reference.pretty(report_reference.from_outputs(self.out, report_fixture.REPO / "SampleData/export.zip"))
        self.assertEqual(made, report_fixture.EXAMPLE_DATA.read_text(encoding="utf-8"))

    def test_counted_shares_add_up_to_the_merged_sums(self):
        import report_reference

        for kind, stat in (("StepCount", "steps-per-day"), ("DistanceWalkingRunning", "walking-running-distance-per-day")):
            with self.subTest(kind=kind):
                rows = csv_rows(self.out / "samples" / f"{kind}.csv", missing_ok=True)
                totals: dict[str, float] = {}
                for row in rows:
                    totals[row["source"]] = totals.get(row["source"], 0.0) + float(row["value"])
                exact = report_reference.rnd
                try:
                    report_reference.rnd = lambda v, places: float(v)  # unrounded shares
                    _, sources = report_reference.quality_type(rows, True)
                finally:
                    report_reference.rnd = exact
                counted = sum(totals[s["name"]] * s["counted_share"] for s in sources)
                merged = sum(float(r["sum"]) for r in csv_rows(self.out / "stats" / f"{stat}.csv", missing_ok=True))
                self.assertAlmostEqual(counted, merged, delta=merged * 1e-9)
                # Both sources overlap, so neither counts whole and the naive sum is far larger.
                self.assertGreater(sum(totals.values()), merged * 1.5)


if __name__ == "__main__":
    unittest.main()
