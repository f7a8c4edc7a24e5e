"""An export that names a new source in every record, through the default pipeline.

100,000 records (steps, heart rate, sleep), each from its own source name. What grows with the
number of sources is bounded (Pipelines/docs/nightly.md, "`run.json` and `inspect --json`";
Pipelines/report/DATA.md, "export" and "quality"): `run.json`, `inspect` and the report list
the first 1,000 source names in UTF-8 byte order and count the rest, and the report's quality
section lists at most 20 sources per type and sums the others into one row, so the rows still
add up to the type's samples. Before, the page was 8 MB here and grew with the sources, and its
overlap measure cost samples × sources: 8 s here, and a million sources did not finish in five
minutes. The time limit below only catches a hang; it never measures speed.

The binary is `e2e.binary()`: `HEALTHETL_BIN` (set by `make test-e2e`), else the release build, else
the debug build.

    HEALTHETL_BIN=.build/release/healthetl python3 -m unittest -v Tests/EndToEnd/test_many_sources.py
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import unittest
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, report_data  # noqa: E402

RECORDS = 100_000
NAMES_LISTED = 1_000
SOURCES_PER_TYPE = 20
HANG_LIMIT_SECONDS = 600


def source_name(index: int) -> str:
    # A few names outside ASCII, so the byte order of the listed names is tested too.
    return f"Äpp {index:06d}" if index % 10_000 == 7 else f"Source {index:06d}"


def write_export(path: Path) -> dict[str, list[str]]:
    """Writes the export; returns the source names per type short name."""
    base = datetime(2024, 1, 1)
    stamp = lambda t: t.strftime("%Y-%m-%d %H:%M:%S") + " +0000"  # noqa: E731
    per_type: dict[str, list[str]] = {"StepCount": [], "HeartRate": [], "SleepAnalysis": []}
    with open(path, "w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<HealthData locale="en_US">\n')
        f.write(' <ExportDate value="2024-03-01 09:00:00 +0000"/>\n')
        for index in range(RECORDS):
            source = source_name(index)
            start = base + timedelta(seconds=37 * index)
            kind = index % 10
            if kind < 5:
                # Five minutes every 37 s: each overlaps the next eight sources' steps.
                end = start + timedelta(minutes=5)
                per_type["StepCount"].append(source)
                f.write(f' <Record type="HKQuantityTypeIdentifierStepCount" sourceName="{source}" unit="count" '
                        f'startDate="{stamp(start)}" endDate="{stamp(end)}" value="{10 + index % 90}"/>\n')
            elif kind < 9:
                per_type["HeartRate"].append(source)
                f.write(f' <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="{source}" unit="count/min" '
                        f'startDate="{stamp(start)}" endDate="{stamp(start)}" value="{50 + index % 60}"/>\n')
            else:
                end = start + timedelta(minutes=30)
                per_type["SleepAnalysis"].append(source)
                f.write(f' <Record type="HKCategoryTypeIdentifierSleepAnalysis" sourceName="{source}" '
                        f'startDate="{stamp(start)}" endDate="{stamp(end)}" '
                        'value="HKCategoryValueSleepAnalysisAsleepCore"/>\n')
        f.write("</HealthData>\n")
    return per_type


class ManySourcesTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        binary()  # skips the class, saying how to get one, before anything is written
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        cls.export = root / "export.xml"
        cls.per_type = write_export(cls.export)
        cls.out = root / "out"
        try:
            subprocess.run([binary(), "run", "--quiet", "--pipeline", str(REPO / "Pipelines/default.json"), "--out",
                            str(cls.out), str(cls.export)], check=True, capture_output=True,
                           timeout=HANG_LIMIT_SECONDS)
        except subprocess.TimeoutExpired:
            cls.tmp.cleanup()
            raise AssertionError(f"healthetl run did not finish in {HANG_LIMIT_SECONDS} s with {RECORDS} sources")
        cls.run_json = json.loads((cls.out / "run.json").read_text(encoding="utf-8"))
        cls.report = report_data(cls.out / "report.html")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def first_names(self) -> list[str]:
        return sorted((source_name(i) for i in range(RECORDS)), key=lambda name: name.encode())[:NAMES_LISTED]

    def test_run_json_lists_the_first_names_and_counts_the_rest(self):
        self.assertEqual(self.run_json["sources"], self.first_names())
        self.assertEqual(self.run_json["sourcesOmitted"], RECORDS - NAMES_LISTED)
        # No record names a device: nothing to cut there.
        self.assertEqual(self.run_json["deviceModels"], [])
        self.assertNotIn("deviceModelsOmitted", self.run_json)

    def test_inspect_says_the_same(self):
        described = json.loads(subprocess.run([binary(), "inspect", "--json", str(self.export)], check=True,
                                              capture_output=True, timeout=HANG_LIMIT_SECONDS).stdout)
        self.assertEqual(described["sources"], self.first_names())
        self.assertEqual(described["sourcesOmitted"], RECORDS - NAMES_LISTED)
        text = subprocess.run([binary(), "inspect", str(self.export)], check=True, capture_output=True, text=True,
                              timeout=HANG_LIMIT_SECONDS).stdout
        line = next(line for line in text.splitlines() if line.startswith("Sources "))
        # "Source 000007" is "Äpp 000007", which sorts after every "S".
        self.assertTrue(line.endswith(f", Source 001000 … and {RECORDS - NAMES_LISTED} more"), line[-80:])

    def test_the_report_lists_the_top_sources_and_one_row_for_the_others(self):
        export = self.report["export"]
        self.assertEqual(export["sources"], self.first_names())
        self.assertEqual(export["sources_omitted"], RECORDS - NAMES_LISTED)
        self.assertNotIn("devices_omitted", export)
        types = {entry["type"]: entry for entry in self.report["quality"]["types"]}
        self.assertEqual(set(types), set(self.per_type))
        for name, sources in self.per_type.items():
            entry = types[name]
            rows = entry["sources"]
            self.assertEqual(entry["samples"], len(sources))
            # One sample each: the first 20 by name, then the rest in one row.
            self.assertEqual([row["name"] for row in rows[:SOURCES_PER_TYPE]],
                             sorted(sources, key=lambda n: n.encode())[:SOURCES_PER_TYPE])
            self.assertEqual(len(rows), SOURCES_PER_TYPE + 1)
            others = rows[-1]
            self.assertEqual(others["others"], len(sources) - SOURCES_PER_TYPE)
            self.assertEqual(others["name"], f"{len(sources) - SOURCES_PER_TYPE} other sources")
            self.assertEqual(sum(row["samples"] for row in rows), len(sources))
            self.assertTrue(all("others" not in row for row in rows[:-1]))
        # Steps: five samples of 300 s at 0, 37, … 148 s of every 370 s, so each overlaps another
        # source's; sleep: 30 minutes every 370 s, likewise; heart rate: instants, which never do.
        self.assertEqual(types["StepCount"]["overlapping"], len(self.per_type["StepCount"]))
        self.assertEqual(types["SleepAnalysis"]["overlapping"], len(self.per_type["SleepAnalysis"]))
        self.assertEqual(types["HeartRate"]["overlapping"], 0)
        self.assertTrue(all(row["counted_share"] is None for row in types["HeartRate"]["sources"]))
        # The priority merge worked out here: every source is of class "other", so they rank by name.
        counted, total = self.merged_steps()
        rows = types["StepCount"]["sources"]
        listed = [row["name"] for row in rows[:-1]]
        for row in rows[:-1]:
            self.assertAlmostEqual(row["counted_share"], counted[row["name"]] / total[row["name"]], delta=0.0005)
        rest = [name for name in total if name not in listed]
        share = sum(counted[name] for name in rest) / sum(total[name] for name in rest)
        self.assertAlmostEqual(rows[-1]["counted_share"], share, delta=0.0005)
        self.assertGreater(share, 0.1)
        self.assertLess(share, 0.9)

    def merged_steps(self) -> tuple[dict[str, float], dict[str, float]]:
        """Per step source: its value counted by the merge, and its value."""
        base = datetime(2024, 1, 1)
        samples = []
        for index in range(RECORDS):
            if index % 10 < 5:
                start = (base + timedelta(seconds=37 * index) - base).total_seconds()
                samples.append((start, start + 300, float(10 + index % 90), source_name(index)))
        events = sorted([(s, 1, n) for n, (s, _, _, _) in enumerate(samples)]
                        + [(e, 0, n) for n, (_, e, _, _) in enumerate(samples)])
        counted = {name: 0.0 for _, _, _, name in samples}
        total = {name: value for _, _, value, name in samples}
        active: set[int] = set()
        last = None
        for time, starts, n in events:
            if last is not None and time > last and active:
                winner = min(active, key=lambda i: samples[i][3].encode())
                s, e, value, name = samples[winner]
                counted[name] += value * (time - last) / (e - s)
            (active.add if starts else active.discard)(n)
            last = time
        return counted, total

    def test_the_page_shows_the_cut_lists_and_the_others_rows(self):
        from chromium import Browser
        from test_report_page import RENDERED, require_tools

        require_tools()
        browser = Browser()
        try:
            page = browser.open(self.out / "report.html")
            self.assertEqual(page.wait_for(RENDERED), page.evaluate("document.documentElement.dataset.chartsDrawn"))
            facts = page.evaluate("document.querySelector('[data-fact=\"sources\"] dd').textContent")
            self.assertRegex(facts, r"^Source 000000, Source 000001, .*, Source 001000 … and 99.?000 more$")
            rows = page.evaluate("[...document.querySelectorAll('#quality-sources tbody tr')].map(tr => tr.dataset.source)")
            self.assertEqual(len(rows), 3 * (SOURCES_PER_TYPE + 1))
            self.assertIn("49980 other sources", rows)
            self.assertEqual(page.console_errors(), [])
            page.close()
        finally:
            browser.close()

    def test_the_page_does_not_grow_with_the_sources(self):
        # Before: 8.0 MB for these 100,000 sources. Now: the listed names, 21 rows per type, 14 days
        # of heart rate per minute and the daily tables, whatever the number of sources.
        self.assertLess((self.out / "report.html").stat().st_size, 1_000_000)
        self.assertLess((self.out / "run.json").stat().st_size, 100_000)


if __name__ == "__main__":
    unittest.main()
