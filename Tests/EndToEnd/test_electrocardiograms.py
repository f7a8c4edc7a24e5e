"""ECG recordings end to end (Pipelines/docs/electrocardiograms.md, "Electrocardiograms"): the real binary over
hand-written ECG files beside a small export, in a folder and in a zip, and over `healthetl sample
--ecgs`. No real ECG file could be found (SOURCES.md), so the files follow the known shape.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows, report_data, write_export_folder, write_export_zip  # noqa: E402

from chromium import Browser  # noqa: E402

PIPELINE = REPO / "Pipelines" / "electrocardiograms.json"

EXPORT_XML = """<?xml version="1.0" encoding="UTF-8"?>
<HealthData locale="en_US">
 <ExportDate value="2024-03-22 09:00:00 +0100"/>
 <Record type="HKQuantityTypeIdentifierHeartRate" sourceName="Watch" unit="count/min" creationDate="2024-03-20 08:16:00 +0100" startDate="2024-03-20 08:16:00 +0100" endDate="2024-03-20 08:16:00 +0100" value="70"/>
</HealthData>
"""

ENGLISH = (
    'Name,Alex Example\nDate of Birth,"Mar 4, 1985"\nRecorded Date,2024-03-20 08:15:32 +0100\n'
    "Classification,Sinus Rhythm\nSymptoms,\nSoftware Version,1.90\nDevice,\"Watch6,2\"\nSample Rate,512 hertz\n\n"
    "Lead,Lead I\nUnit,µV\n\n-19.512\n-22.107\n5\n1000.25\n"
)
# A decimal-comma locale, keys in Portuguese, CRLF line ends, in a folder named in Portuguese.
PORTUGUESE = (
    'Nome,Alex Example\r\nData de nascimento,"4 de mar. de 1985"\r\nData de registro,2024-03-21 09:00:00 +0100\r\n'
    'Classificação,Ritmo sinusal\r\nSintomas,"Tontura, falta de ar"\r\nVersão do software,"1,90"\r\n'
    'Dispositivo,"Watch6,2"\r\nTaxa de amostragem,250 hertz\r\nFrequência cardíaca média,"72,5 BPM"\r\n\r\n'
    "Derivação,Derivação I\r\nUnidade,µV\r\n\r\n-265,868\r\n\"12,5\"\r\n"
)
BROKEN_SAMPLES = (
    "Name,x\nRecorded Date,2024-03-22 08:00:00 +0100\nSample Rate,512 hertz\nLead,Lead I\nUnit,µV\n1.5\n2.5\nabc\n3\n"
)
NO_RATE = "Name,x\nRecorded Date,2024-03-19 08:00:00 +0100\nClassification,Sinus Rhythm\n1\n2\n"

FILES = {
    "electrocardiograms/ecg_2024-03-20.csv": ENGLISH,
    "electrocardiograms/ecg_2024-03-22.csv": BROKEN_SAMPLES,
    "electrocardiograms/ecg_2024-03-19.csv": NO_RATE,
    "eletrocardiogramas/ecg_2024-03-21.csv": PORTUGUESE,
    # Not read: deeper than one folder, not a CSV, a resource fork.
    "electrocardiograms/old/ecg_2020-01-01.csv": ENGLISH,
    "electrocardiograms/notes.txt": "hello",
    # A CSV that is no ECG (no date, no rate): passed over, listed, not an error.
    "electrocardiograms/weights.csv": "name,kg\nbob,71\n",
    "electrocardiograms/._ecg_2024-03-20.csv": "\x00\x05",
}


class ElectrocardiogramsEndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="healthetl-ecg-"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def folder_export(self) -> Path:
        return write_export_folder(self.tmp / "apple_health_export", EXPORT_XML, FILES)

    def zip_export(self) -> Path:
        return write_export_zip(self.tmp / "export.zip", EXPORT_XML, FILES,
                                {"__MACOSX/apple_health_export/electrocardiograms/._x.csv": ENGLISH})

    def run_healthetl(self, export: Path, out: Path, *pipelines: Path) -> subprocess.CompletedProcess:
        arguments = [binary(), "run", "--no-workbook", "--tz", "Europe/Berlin", "--out", str(out)]
        for pipeline in pipelines or (PIPELINE,):
            arguments += ["--pipeline", str(pipeline)]
        result = subprocess.run(arguments + [str(export)], capture_output=True, text=True, timeout=300)
        self.assertEqual(result.returncode, 0, result.stderr)
        return result

    def check_outputs(self, out: Path, stderr: str):
        recordings = csv_rows(out / "ecg_recordings.csv")
        # Folders and files in byte order (a zip in archive order, written here in the same order
        # except the folder listing: compare by recording).
        by_file = {r["recording"]: r for r in recordings}
        self.assertEqual(
            sorted(by_file),
            ["electrocardiograms/ecg_2024-03-20.csv", "electrocardiograms/ecg_2024-03-22.csv", "eletrocardiogramas/ecg_2024-03-21.csv"])
        english = by_file["electrocardiograms/ecg_2024-03-20.csv"]
        self.assertEqual(english, {
            "local_time": "2024-03-20 08:15:32", "recorded": "2024-03-20T08:15:32+01:00",
            "recording": "electrocardiograms/ecg_2024-03-20.csv", "classification": "Sinus Rhythm", "symptoms": "",
            "sample_rate_hz": "512", "samples": "4", "duration_s": "0.008", "average_heart_rate": "", "device": "Watch6,2",
            "software_version": "1.90", "lead": "Lead I", "unit": "µV", "problem": ""})
        portuguese = by_file["eletrocardiogramas/ecg_2024-03-21.csv"]
        self.assertEqual(portuguese["classification"], "Ritmo sinusal")
        self.assertEqual(portuguese["symptoms"], "Tontura, falta de ar")
        self.assertEqual(portuguese["software_version"], "1,90")
        self.assertEqual(portuguese["sample_rate_hz"], "250")
        self.assertEqual(portuguese["samples"], "2")
        self.assertEqual(portuguese["duration_s"], "0.008")  # 2 ÷ 250
        self.assertEqual(portuguese["average_heart_rate"], "72.5")
        broken = by_file["electrocardiograms/ecg_2024-03-22.csv"]
        self.assertEqual(broken["samples"], "2")
        self.assertEqual(broken["problem"], "line 8: 'abc' is not a number (one sample in µV per line)")

        samples = csv_rows(out / "ecg_samples.csv")
        got = [(s["recording"], s["offset_s"], s["microvolts"]) for s in samples]
        english_samples = [s[1:] for s in got if s[0] == "electrocardiograms/ecg_2024-03-20.csv"]
        # offset = index ÷ 512: 1/512 = 0.001953125 exactly.
        self.assertEqual(english_samples, [("0", "-19.512"), ("0.001953125", "-22.107"), ("0.00390625", "5"), ("0.005859375", "1000.25")])
        self.assertEqual([s[1:] for s in got if s[0].startswith("eletro")], [("0", "-265.868"), ("0.004", "12.5")])
        self.assertEqual([s[1:] for s in got if s[0].endswith("03-22.csv")], [("0", "1.5"), ("0.001953125", "2.5")])
        self.assertEqual(len(samples), 8)
        # Samples of one recording are contiguous, in the order of the recordings table.
        order = [r["recording"] for r in recordings]
        self.assertEqual([k for i, k in enumerate(s[0] for s in got) if i == 0 or got[i - 1][0] != k], order)

        report = json.loads((out / "run.json").read_text())["electrocardiograms"]
        self.assertEqual(report["files"], 5)
        self.assertEqual((report["notECGFiles"], report["notECG"]), (1, ["electrocardiograms/weights.csv"]))
        self.assertEqual(report["recordings"], 3)
        self.assertEqual(report["samples"], 8)
        self.assertEqual(report["malformedFiles"], 2)
        self.assertEqual(sorted((p["file"], p["problem"]) for p in report["problems"]), [
            ("electrocardiograms/ecg_2024-03-19.csv", "no Sample Rate line before the first sample; not an ECG file"),
            ("electrocardiograms/ecg_2024-03-22.csv", "line 8: 'abc' is not a number (one sample in µV per line)"),
        ])
        lines = [line for line in stderr.splitlines() if "ECG" in line]
        self.assertEqual(len(lines), 1, stderr)
        self.assertRegex(lines[0], r"^healthetl: 2 ECG files not read whole \(first: electrocardiograms/ecg_2024-03-(19|22)\.csv: .+\); see run\.json$")
        # Name and date of birth are in no output.
        for path in out.rglob("*"):
            if path.is_file():
                text = path.read_bytes()
                for secret in (b"Alex", b"1985"):
                    self.assertNotIn(secret, text, f"{path.name} holds {secret!r}")

    def test_folder(self):
        out = self.tmp / "out"
        result = self.run_healthetl(self.folder_export(), out)
        self.check_outputs(out, result.stderr)
        # A folder is read in byte order of names: electrocardiograms/ before eletrocardiogramas/.
        self.assertEqual([r["recording"] for r in csv_rows(out / "ecg_recordings.csv")], [
            "electrocardiograms/ecg_2024-03-20.csv", "electrocardiograms/ecg_2024-03-22.csv", "eletrocardiogramas/ecg_2024-03-21.csv"])

    def test_zip(self):
        out = self.tmp / "out"
        result = self.run_healthetl(self.zip_export(), out)
        self.check_outputs(out, result.stderr)

    def test_a_name_with_a_line_feed_stays_one_line(self):
        path = self.tmp / "export.zip"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("apple_health_export/export.xml", EXPORT_XML)
            z.writestr("apple_health_export/electrocardiograms/ecg\nhealthetl: fake.csv", BROKEN_SAMPLES)
        out = self.tmp / "out"
        result = self.run_healthetl(path, out)
        lines = [line for line in result.stderr.splitlines() if "ECG" in line or "fake" in line]
        self.assertEqual(lines, ["healthetl: 1 ECG file not read whole (first: electrocardiograms/ecg?healthetl: fake.csv: "
                                 "line 8: 'abc' is not a number (one sample in µV per line)); see run.json"])
        # The table keeps the name as written: it is data.
        self.assertEqual(csv_rows(out / "ecg_recordings.csv")[0]["recording"], "electrocardiograms/ecg\nhealthetl: fake.csv")

    def test_a_recording_longer_than_any_device_records_is_cut_and_reported(self):
        # Issue 31.2: 3 million lines of `1` compress to a few KB and wrote 1.5 GB of samples. A
        # recording is kept up to 120 s (Pipelines/docs/electrocardiograms.md, "Electrocardiograms"): at 512 Hz
        # that is 120 x 512 = 61,440 samples, offsets 0 to 61,439 / 512 = 119.998046875 s.
        header = "Name,x\nRecorded Date,2024-03-22 08:00:00 +0100\nSample Rate,512 hertz\nLead,Lead I\nUnit,µV\n"
        path = self.tmp / "export.zip"
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("apple_health_export/export.xml", EXPORT_XML)
            z.writestr("apple_health_export/electrocardiograms/ecg_long.csv", header + "1\n" * 3_000_000)
            z.writestr("apple_health_export/electrocardiograms/ecg_short.csv", header + "2\n" * 15_360)  # 30 s
        self.assertLess(path.stat().st_size, 100_000)
        out = self.tmp / "out"
        result = self.run_healthetl(path, out)
        recordings = {r["recording"].split("/")[-1]: r for r in csv_rows(out / "ecg_recordings.csv")}
        cut = "cut at 120 s (61440 samples at 512 Hz): longer than any ECG a device records; 2938560 samples after it not written"
        self.assertEqual((recordings["ecg_long.csv"]["samples"], recordings["ecg_long.csv"]["duration_s"],
                          recordings["ecg_long.csv"]["problem"]), ("61440", "120", cut))
        self.assertEqual((recordings["ecg_short.csv"]["samples"], recordings["ecg_short.csv"]["problem"]), ("15360", ""))
        samples = csv_rows(out / "ecg_samples.csv")
        self.assertEqual(len(samples), 61_440 + 15_360)
        self.assertEqual(samples[61_439]["offset_s"], "119.998046875")
        self.assertLess((out / "ecg_samples.csv").stat().st_size, 5_000_000)
        section = json.loads((out / "run.json").read_text())["electrocardiograms"]
        self.assertEqual((section["samples"], section["malformedFiles"]), (61_440 + 15_360, 1))
        self.assertEqual(section["problems"], [{"file": "electrocardiograms/ecg_long.csv", "problem": cut}])
        self.assertIn("1 ECG file not read whole (first: electrocardiograms/ecg_long.csv: cut at 120 s", result.stderr)

    def test_the_runs_own_files_beside_a_bare_export_are_not_the_exports(self):
        """`--out out export.xml` with out/ beside export.xml: the run's output folder (here holding
        the last run's ecg_*.csv), its staging folder and lock, and hidden entries (a `.cache/`
        folder of CSVs) are none of the export's files: one ECG read, nothing else, no line. Then
        the same folder as a folder export: "What was not read" lists `notes/*.txt` only."""
        root = write_export_folder(self.tmp / "export", EXPORT_XML, {
            "electrocardiograms/ecg_2024-03-20.csv": ENGLISH,
            ".cache/ecg_copy.csv": ENGLISH,
            "notes/todo.txt": "x",
        })
        (root / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
        out = root / "out"
        all_kinds = [PIPELINE, REPO / "Pipelines" / "clinical-records.json", REPO / "Pipelines" / "workouts.json"]
        for _ in range(2):
            result = self.run_healthetl(root / "export.xml", out, *all_kinds)
            self.assertNotIn("ECG", result.stderr)
            report = json.loads((out / "run.json").read_text())["electrocardiograms"]
            self.assertEqual((report["files"], report["recordings"], report["notECGFiles"]), (1, 1, 0))
        shutil.rmtree(out)
        # Relative paths, from inside the folder, as a user types them.
        arguments = [binary(), "run", "--no-workbook", "--tz", "Europe/Berlin", "--pipeline", str(PIPELINE)]
        for _ in range(2):
            result = subprocess.run(arguments + ["--out", "out2", "."], cwd=root, capture_output=True, text=True,
                                    timeout=300)
            self.assertEqual(result.returncode, 0, result.stderr)
            run = json.loads((root / "out2" / "run.json").read_text())
            self.assertEqual(run["electrocardiograms"]["files"], 1)
            self.assertEqual(run["notRead"]["files"]["names"], {"notes/*.txt": 1})

    def test_an_export_without_ecgs_writes_empty_tables_and_no_line(self):
        root = self.tmp / "plain"
        root.mkdir()
        (root / "export.xml").write_text(EXPORT_XML, encoding="utf-8")
        out = self.tmp / "out"
        result = self.run_healthetl(root / "export.xml", out)
        self.assertEqual((out / "ecg_recordings.csv").read_text(encoding="utf-8").count("\n"), 1)
        self.assertEqual((out / "ecg_samples.csv").read_text(encoding="utf-8"), "recording,offset_s,microvolts\n")
        self.assertNotIn("ECG", result.stderr)
        self.assertEqual(json.loads((out / "run.json").read_text())["electrocardiograms"]["files"], 0)

    def test_sample_recordings_and_report_preview(self):
        """`healthetl sample --ecgs 4`: 4 recordings of 30 s at 512 Hz, one a week, each 15,360 samples
        whose offsets step by 1/512 s; the report holds the first 3 s (1,536 samples) of the 3 latest."""
        export = self.tmp / "s" / "export.zip"
        subprocess.run([binary(), "sample", "--days", "28", "--ecgs", "4", "--zip", "--out", str(export)],
                       check=True, capture_output=True, timeout=300)
        out = self.tmp / "out"
        report_pipeline = self.tmp / "report.json"
        report_pipeline.write_text(json.dumps({"version": 1, "name": "r", "jobs": [
            {"name": "report", "kind": "report", "template": str(REPO / "Pipelines/report/report.html"), "outputs": [{"table": "report", "file": "report.html"}]}]}))
        self.run_healthetl(export, out, PIPELINE, report_pipeline)
        recordings = csv_rows(out / "ecg_recordings.csv")
        self.assertEqual([r["local_time"][:10] for r in recordings], ["2024-03-18", "2024-03-25", "2024-04-01", "2024-04-08"])
        for r in recordings:
            self.assertEqual((r["sample_rate_hz"], r["samples"], r["duration_s"], r["problem"]), ("512", "15360", "30", ""))
            self.assertIn(r["classification"], ("Sinus Rhythm", "Inconclusive"))
        count = 0
        previous = None
        peak = 0.0
        for row in csv_rows(out / "ecg_samples.csv"):
            if row["recording"] != previous:
                index, previous = 0, row["recording"]
            self.assertEqual(float(row["offset_s"]), index / 512)
            peak = max(peak, float(row["microvolts"]))
            index += 1
            count += 1
        self.assertEqual(count, 4 * 15360)
        self.assertTrue(800 < peak < 1600, peak)  # R waves of about 1,100 µV
        data = report_data(out / "report.html")
        ecg = data["electrocardiograms"]
        self.assertEqual(ecg["seconds"], 3)
        self.assertEqual([r["recorded"][:10] for r in ecg["recordings"]], ["2024-04-08", "2024-04-01", "2024-03-25"])
        self.assertEqual([len(r["microvolts"]) for r in ecg["recordings"]], [1536] * 3)
        self.check_page(out / "report.html", ecg["recordings"])

    def check_page(self, html: Path, recordings: list[dict]):
        """The ECG chart is drawn at desktop and phone width, its picker switches recordings, and its
        table lists the drawn samples; a page without ECG data has no ECG section nor link."""
        if not shutil.which(os.environ.get("CHROMIUM", "chromium")):
            self.skipTest("needs chromium for the page checks")
        chart = "Chart.getChart(document.querySelector('canvas[data-chart=\"ecg\"]'))"
        with Browser() as browser:
            for width in (1280, 390):
                page = browser.open(html, width=width, height=900)
                page.wait_for("document.documentElement.dataset.chartsDrawn || document.documentElement.dataset.reportError")
                self.assertIsNone(page.evaluate("document.documentElement.dataset.reportError || null"))
                self.assertEqual(page.console_errors(), [])
                size = page.evaluate("(() => { const c = document.querySelector('canvas[data-chart=\"ecg\"]'); "
                                     "return [c.dataset.drawn, c.getBoundingClientRect().width, c.getBoundingClientRect().height]; })()")
                self.assertEqual(size[0], "1")
                self.assertGreater(size[1], 250 if width == 390 else 1000)
                self.assertGreater(size[2], 150)
                self.assertEqual(page.evaluate("document.querySelector('[data-ecg-link]').hidden"), False)
                self.assertEqual(page.evaluate(chart + ".data.datasets[0].data.length"), 1536)
                self.assertEqual(page.evaluate(chart + ".data.datasets[0].data[512].x"), 1)
                self.assertEqual(page.evaluate(chart + ".data.datasets[0].data[0].y"), recordings[0]["microvolts"][0])
                options = page.evaluate("[...document.querySelectorAll('select[data-pick=\"ecg\"] option')].map(o => o.textContent)")
                self.assertEqual(len(options), 3)
                self.assertTrue(options[1].startswith(recordings[1]["recorded"]), options)
                page.evaluate("(() => { const s = document.querySelector('select[data-pick=\"ecg\"]'); s.value = '1'; "
                              "s.dispatchEvent(new Event('change', { bubbles: true })); })()")
                self.assertEqual(page.evaluate(chart + ".data.datasets[0].data[0].y"), recordings[1]["microvolts"][0])
                page.evaluate("document.querySelector('details[data-table-for=\"ecg\"]').open = true")
                page.settle(0.3)
                cells = page.evaluate("[...document.querySelectorAll('details[data-table-for=\"ecg\"] tbody tr')].length")
                self.assertEqual(cells, 1536)
                page.close()
            # The same page without the data: no section, no link, no canvas.
            text = html.read_text(encoding="utf-8")
            data = report_data(html)
            del data["electrocardiograms"]
            bare = html.with_name("bare.html")
            start = text.rindex('<script type="application/json" id="report-data">') + len('<script type="application/json" id="report-data">')
            bare.write_text(text[:start] + json.dumps(data) + text[text.index("</script>", start):], encoding="utf-8")
            page = browser.open(bare)
            page.wait_for("document.documentElement.dataset.chartsDrawn || document.documentElement.dataset.reportError")
            self.assertEqual(page.evaluate("[!!document.getElementById('ecg'), !!document.querySelector('[data-ecg-link]'), "
                                           "!!document.querySelector('canvas[data-chart=\"ecg\"]')]"), [False, False, False])
            page.close()


if __name__ == "__main__":
    unittest.main()
