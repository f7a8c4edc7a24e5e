"""The gallery: what people see, on every shape of export we know.

The default pipeline runs on each `healthetl sample --profile` (gallery.PROFILES:
SampleData/README.md, "Other shapes of export") and on every real export in
../shared/fixtures/real (skipped with a message when that folder is absent), and its outputs are
checked for properties a person would notice, not for values:

- every Chart.js chart of report.html that holds data paints it: each dataset with a value
  other than 0 has pixels of its own colour inside the chart area (headless Chromium), at the
  range the page opens with and at "All"; a chart with nothing in the range says so instead
  of drawing empty axes;
- no chart of health.xlsx whose series are all empty: the cells each series refers to hold
  at least one number;
- the default pipeline exits 0 on every profile and every real export (none of the real
  fixtures is documented to fail; exit 65 of any is a failure, not a result);
- no 0 where nothing was measured, in daily.csv and sleep_daily.csv: time asleep or in bed is
  never 0 (a night with either has some; in bed without sleep leaves asleep empty), and on a
  night without core, deep or REM sleep the stage and awake columns are empty;
- empty where nothing was recorded: a daily.csv column made of a sample type (`TYPE_COLUMNS`) has
  no value on a local date that no record of its types touches, in daily.csv and in the Daily
  sheet of health.xlsx;
- splits lie inside their workout, add up to its distance, and none is faster than the activity
  allows (Pipelines/docs/workouts.md, "Splits": on foot no km under 2:00, cycling none under 0:36);
- every record accounted for (Pipelines/docs/nightly.md, "Every record accounted for"): per type of
  run.json `accounting`, read = duplicates + rejected + used + set aside + not shown, nothing
  unaccounted, `read` equal to `typesRead`, and the totals the sum of the types;
- no flagged value in a headline average: at "All", the summary's sleep and step averages are the
  means of the report's nights and days less the dates of `worth_a_look.left_out`, and say how
  many they leave out;
- every family with data is charted (`FAMILY_CHARTS`: a daily.csv column with a value has its
  chart on the page);
- parts add up to their whole: a night's stages and unstaged sleep add up to its time asleep.

The binary is `e2e.binary()`: `HEALTHETL_BIN` (set by `make test-e2e`), else the release build, else
the debug build.

    HEALTHETL_BIN=$PWD/.build/debug/healthetl python3 -m unittest -v Tests/EndToEnd/test_gallery.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
import unittest
import zipfile
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gallery  # noqa: E402
from chromium import Browser  # noqa: E402
from e2e import binary, csv_rows, report_data  # noqa: E402

# Per chart and visible dataset: how many values other than 0 it holds (a bar of 0 is rightly
# invisible) and how many pixels of the chart area have one of its own colours, as Chart.js
# resolved them per element.
PAINTED = """(() => {
  const probe = document.createElement('canvas').getContext('2d');
  const rgb = colour => {
    if (typeof colour !== 'string') return null;
    probe.fillStyle = '#000'; probe.fillStyle = colour;
    const s = probe.fillStyle, m = s.match(/^#(..)(..)(..)$/);
    if (m) return [parseInt(m[1], 16), parseInt(m[2], 16), parseInt(m[3], 16), 1];
    const a = s.match(/rgba?\\(([^)]+)\\)/);
    if (!a) return null;
    const p = a[1].split(',').map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const holds = v => v !== null && v !== undefined && (typeof v === 'number' ? Number.isFinite(v) && v !== 0
    : Array.isArray(v) ? v.some(holds) : typeof v === 'object' ? holds(v.y ?? v.r ?? null) : false);
  const present = v => v !== null && v !== undefined && (typeof v === 'number' ? Number.isFinite(v)
    : Array.isArray(v) ? v.some(present) : typeof v === 'object' ? present(v.y ?? v.r ?? null) : false);
  return [...document.querySelectorAll('canvas[data-chart]')].map(canvas => {
    const chart = Chart.getChart(canvas);
    if (!chart) return { id: canvas.dataset.chart, hidden: canvas.offsetParent === null, datasets: null };
    const area = chart.chartArea || { left: 0, top: 0, right: chart.width, bottom: chart.height };
    const scale = canvas.width / (chart.width || canvas.width);
    const x = Math.max(0, Math.floor(area.left * scale)), y = Math.max(0, Math.floor(area.top * scale));
    const w = Math.min(canvas.width - x, Math.ceil((area.right - area.left) * scale));
    const h = Math.min(canvas.height - y, Math.ceil((area.bottom - area.top) * scale));
    const pixels = w > 0 && h > 0 ? canvas.getContext('2d').getImageData(x, y, w, h).data : [];
    const datasets = [];
    chart.data.datasets.forEach((dataset, i) => {
      if (!chart.isDatasetVisible(i)) return;
      const meta = chart.getDatasetMeta(i);
      const colours = [];
      for (const element of (meta.data || []).concat(meta.dataset ? [meta.dataset] : [])) {
        for (const key of ['backgroundColor', 'borderColor']) {
          const c = rgb(element.options && element.options[key]);
          if (c && c[3] > 0 && !colours.some(d => d.join() === c.join())) colours.push(c);
        }
      }
      let painted = 0;
      for (let p = 0; p < pixels.length; p += 4) {
        if (pixels[p + 3] === 0) continue;
        if (colours.some(c => Math.abs(pixels[p] - c[0]) <= 24 && Math.abs(pixels[p + 1] - c[1]) <= 24
            && Math.abs(pixels[p + 2] - c[2]) <= 24)) painted++;
      }
      datasets.push({ label: dataset.label || String(i), values: (dataset.data || []).filter(holds).length,
        present: (dataset.data || []).filter(present).length, painted, colours: colours.length });
    });
    return { id: canvas.dataset.chart, type: chart.config.type, hidden: canvas.offsetParent === null, datasets };
  });
})()"""
SHOW_ALL = """(() => { const b = document.querySelector('[data-range="all"]'); if (b) b.click();
  return new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(!!b)))); })()"""

# (totals, stages, awake) of daily.csv and of sleep_daily.csv
SLEEP_DAILY_CSV = (("asleep_h", "in_bed_h"), ("core_h", "deep_h", "rem_h"), "awake_h")
SLEEP_SLEEP_DAILY = (("asleep_s", "in_bed_s"), ("core_s", "deep_s", "rem_s"), "awake_s")
UNIT_METERS = {"km": 1000.0, "mi": 1609.344}
# The fastest a split may be (Pipelines/docs/workouts.md, "Splits"), m/s, judged on splits of at least a
# quarter of their unit: on foot a km in 2:00, cycling a km in 0:36.
FASTEST_M_S = {"Running": 1000 / 120, "Walking": 1000 / 120, "Hiking": 1000 / 120, "Cycling": 1000 / 36}
# Per daily.csv column, the report chart that shows it: a column with a value in the export has its
# chart drawn. The hook for the families of issue 29 item 4 (blood pressure, glucose, nutrition,
# body composition, mobility, audio, cycling): add each family's column and chart id here when its
# report section lands.
# daily.csv column → the report chart that draws it (Pipelines/docs/daily.md, report.html
# `data-chart`); the report's own field names differ (`active_kcal`, `carbs_g`), the columns' do not.
FAMILY_CHARTS = {
    "steps": "steps", "active_energy_kcal": "energy", "resting_hr_bpm": "heart-trends",
    "walking_hr_avg_bpm": "heart-trends", "hrv_sdnn_ms": "heart-trends", "hr_avg_bpm": "heart-daily",
    "body_mass_kg": "body", "vo2max_ml_kg_min": "body",
    "distance_km": "distance", "cycling_distance_km": "distance", "flights": "flights",
    "exercise_min": "minutes", "mindful_min": "minutes",
    "bp_systolic_mmhg": "blood-pressure", "bp_diastolic_mmhg": "blood-pressure", "glucose_mg_dl": "glucose",
    "dietary_energy_kcal": "nutrition-energy",
    "carbohydrates_g": "nutrition-macros", "protein_g": "nutrition-macros", "fat_g": "nutrition-macros",
    "lean_body_mass_kg": "body-mass", "body_fat_fraction": "body-fat", "bmi": "body-fat",
    "walking_speed_kmh": "walking-speed", "step_length_cm": "walking-speed",
    "walking_asymmetry_fraction": "walking-balance", "double_support_fraction": "walking-balance",
    "headphone_audio_dba": "audio", "environmental_audio_dba": "audio",
}
# daily.csv column → the sample types it is made of (Pipelines/docs/daily.md, "Daily": each column's
# meaning names its statistics job, whose type is in Pipelines/default.json). A date with no record
# of any of them, in any source, has nothing to show: the cell is empty, never 0. The sleep
# columns are dated by night and checked by `zeros_where_nothing_was_measured`; the rings come
# from ActivitySummary and the workout columns from workouts, not from samples.
TYPE_COLUMNS = {
    "steps": ("StepCount",), "distance_km": ("DistanceWalkingRunning",),
    "active_energy_kcal": ("ActiveEnergyBurned",), "basal_energy_kcal": ("BasalEnergyBurned",),
    "flights": ("FlightsClimbed",), "exercise_min": ("AppleExerciseTime",),
    "resting_hr_bpm": ("RestingHeartRate",), "walking_hr_avg_bpm": ("WalkingHeartRateAverage",),
    "hrv_sdnn_ms": ("HeartRateVariabilitySDNN",), "hr_min_bpm": ("HeartRate",), "hr_avg_bpm": ("HeartRate",),
    "hr_max_bpm": ("HeartRate",), "respiratory_rate_per_min": ("RespiratoryRate",), "vo2max_ml_kg_min": ("VO2Max",),
    "body_mass_kg": ("BodyMass",), "swim_distance_m": ("DistanceSwimming",),
    "swim_strokes": ("SwimmingStrokeCount",), "cycling_distance_km": ("DistanceCycling",),
    "bp_systolic_mmhg": ("BloodPressureSystolic",), "bp_diastolic_mmhg": ("BloodPressureDiastolic",),
    "bp_readings": ("BloodPressureSystolic", "BloodPressureDiastolic"), "glucose_mg_dl": ("BloodGlucose",),
    "dietary_energy_kcal": ("DietaryEnergyConsumed",), "carbohydrates_g": ("DietaryCarbohydrates",),
    "protein_g": ("DietaryProtein",), "fat_g": ("DietaryFatTotal",), "body_fat_fraction": ("BodyFatPercentage",),
    "bmi": ("BodyMassIndex",), "lean_body_mass_kg": ("LeanBodyMass",), "walking_speed_kmh": ("WalkingSpeed",),
    "step_length_cm": ("WalkingStepLength",), "walking_asymmetry_fraction": ("WalkingAsymmetryPercentage",),
    "double_support_fraction": ("WalkingDoubleSupportPercentage",),
    "headphone_audio_dba": ("HeadphoneAudioExposure",), "environmental_audio_dba": ("EnvironmentalAudioExposure",),
    "mindful_min": ("MindfulSession",),
}
RECORD_TAG = re.compile(rb"<Record\b[^>]*>")
ATTRIBUTE = re.compile(rb'\b(type|startDate|endDate)="([^"]*)"')
TYPE_PREFIX = re.compile(r"^HK(?:Quantity|Category|Correlation)TypeIdentifier|^HKDataType")
DATE = re.compile(r"^(\d{4})-?(\d\d)-?(\d\d)[ T]?(\d\d):?(\d\d):?(\d\d) ?([+-])(\d\d):?(\d\d)$")
SUMMARY = """(() => Object.fromEntries([...document.querySelectorAll('[data-summary]')].map(d =>
  [d.dataset.summary, { value: d.dataset.value, over: d.querySelector('.over').textContent }])))()"""
CHARTED = """(() => [...document.querySelectorAll('canvas[data-chart]')].filter(c => Chart.getChart(c))
  .map(c => c.dataset.chart))()"""
SHEET_NS = {"s": "http://schemas.openxmlformats.org/spreadsheetml/2006/main"}
CHART_NS = {"c": "http://schemas.openxmlformats.org/drawingml/2006/chart"}
REL_NS = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


def number(text: str | None) -> float | None:
    return float(text) if text not in (None, "") else None


def instant(text: str) -> datetime:
    return datetime.fromisoformat(text)


def zeros_where_nothing_was_measured(table: list[dict], totals, stages, awake) -> list[str]:
    """Cells that show 0 for a sleep duration that was not measured: time asleep or in bed of
    0 (a night with either has some), and stages or awake time on a night without core, deep or
    REM sleep (a night with stages may well have 0 of one of them)."""
    problems = []
    for row in table:
        key = row.get("date", "?")
        for column in totals:
            if row.get(column, "") != "" and float(row[column]) == 0:
                problems.append(f"{key}: {column} = {row[column]}")
        if all(number(row.get(column)) in (None, 0.0) for column in stages):
            for column in stages + (awake,):
                if row.get(column, "") != "":
                    problems.append(f"{key}: {column} = {row[column]} on a night without stages")
    return problems


def run_zone(name: str):
    """The run's zone as `run.json` `timeZone` names it: an IANA name, `UTC`, or `UTC+01:00`."""
    from datetime import timedelta, timezone
    from zoneinfo import ZoneInfo
    fixed = re.fullmatch(r"UTC([+-])(\d\d):(\d\d)", name)
    if fixed:
        sign = -1 if fixed.group(1) == "-" else 1
        return timezone(sign * timedelta(hours=int(fixed.group(2)), minutes=int(fixed.group(3))))
    return timezone.utc if name == "UTC" else ZoneInfo(name)


def parse_written(text: str) -> datetime | None:
    """A date as exports write it, `2024-01-01 10:00:00 +0100` or iOS 8's `20240101100000+0100`."""
    from datetime import timedelta, timezone
    m = DATE.match(text.strip())
    if not m:
        return None
    y, mo, d, h, mi, se, sign, oh, om = m.groups()
    offset = (1 if sign == "+" else -1) * timedelta(hours=int(oh), minutes=int(om))
    return datetime(int(y), int(mo), int(d), int(h), int(mi), int(se), tzinfo=timezone(offset))


def export_xml(export: gallery.Export, run: dict) -> bytes:
    """The export document the run read: the zip member `run.json` names, or the file itself."""
    member = (run.get("input") or {}).get("member")
    if export.path.suffix.lower() == ".zip":
        with zipfile.ZipFile(export.path) as archive:
            return archive.read(member)
    return export.path.read_bytes()


def dates_with_records(xml: bytes, zone) -> dict[str, set[str]]:
    """Per sample type (short name), the local dates of the run's zone that any of its records
    touches, from its start's date to its end's, valid or not, whatever the source."""
    from datetime import timedelta
    wanted = {t for types in TYPE_COLUMNS.values() for t in types}
    found: dict[str, set[str]] = {}
    for tag in RECORD_TAG.finditer(xml):
        fields = {k.decode(): v.decode("utf-8", "replace") for k, v in ATTRIBUTE.findall(tag.group(0))}
        name = TYPE_PREFIX.sub("", fields.get("type", ""))
        if name not in wanted:
            continue
        start, end = parse_written(fields.get("startDate", "")), parse_written(fields.get("endDate", ""))
        if start is None:
            continue
        first = start.astimezone(zone).date()
        last = max(first, end.astimezone(zone).date()) if end is not None else first
        dates = found.setdefault(name, set())
        day = first
        while day <= last and len(dates) < 200_000:
            dates.add(day.isoformat())
            day += timedelta(days=1)
    return found


def unmeasured_cells(rows: list[dict], measured: dict[str, set[str]]) -> list[str]:
    """Cells of type columns with a value on a date no record of their types touches."""
    problems = []
    for row in rows:
        date = row.get("date", "")
        for column, types in TYPE_COLUMNS.items():
            value = row.get(column)
            if value not in (None, "") and not any(date in measured.get(t, ()) for t in types):
                problems.append(f"{date}: {column} = {value} with no {'/'.join(types)} record")
    return problems


def workbook_daily_rows(path: Path) -> list[dict]:
    """The Daily sheet of health.xlsx as daily.csv-like rows: header → cell text (numbers as
    written, dates as `YYYY-MM-DD` from their serial), blank cells left out."""
    from datetime import date, timedelta
    ns = f"{{{SHEET_NS['s']}}}"
    with zipfile.ZipFile(path) as book:
        workbook = ET.fromstring(book.read("xl/workbook.xml"))
        rels = ET.fromstring(book.read("xl/_rels/workbook.xml.rels"))
        targets = {rel.get("Id"): rel.get("Target") for rel in rels}
        sheet = next((s for s in workbook.find("s:sheets", SHEET_NS) if s.get("name") == "Daily"), None)
        if sheet is None:
            return []
        target = targets[sheet.get(REL_NS)]
        file = str(PurePosixPath("xl") / target) if not target.startswith("/") else target.lstrip("/")
        shared = []
        if "xl/sharedStrings.xml" in book.namelist():
            shared = ["".join(t.text or "" for t in si.iter(f"{ns}t"))
                      for si in ET.fromstring(book.read("xl/sharedStrings.xml")).iter(f"{ns}si")]
        rows = []
        header: dict[str, str] = {}
        for row in ET.fromstring(book.read(file)).iter(f"{ns}row"):
            cells = {}
            for c in row.iter(f"{ns}c"):
                letters = re.match(r"[A-Z]+", c.get("r")).group(0)
                kind, v = c.get("t"), c.find("s:v", SHEET_NS)
                if kind == "inlineStr":
                    text = "".join(t.text or "" for t in c.iter(f"{ns}t"))
                elif kind == "s" and v is not None:
                    text = shared[int(v.text)]
                else:
                    text = v.text if v is not None and v.text else ""
                if text != "":
                    cells[letters] = text
            if not header:
                header = cells
                continue
            named = {header.get(k, k): v for k, v in cells.items()}
            if "date" in named:
                named["date"] = (date(1899, 12, 30) + timedelta(days=int(float(named["date"])))).isoformat()
            rows.append(named)
        return rows


def cell_reference(reference: str) -> tuple[str, list[str]]:
    """('Daily', ['B2', 'B3', …]) for `'Daily'!$B$2:$B$30` (a range in one column or one row)."""
    sheet, cells = reference.rsplit("!", 1)
    sheet = sheet.strip("'").replace("''", "'")
    cells = cells.replace("$", "")
    first, _, last = cells.partition(":")
    last = last or first
    (c1, r1), (c2, r2) = (re.match(r"([A-Z]+)(\d+)", first).groups(), re.match(r"([A-Z]+)(\d+)", last).groups())

    def column_number(letters: str) -> int:
        n = 0
        for letter in letters:
            n = n * 26 + ord(letter) - 64
        return n

    def letters(n: int) -> str:
        text = ""
        while n:
            n, rest = divmod(n - 1, 26)
            text = chr(65 + rest) + text
        return text

    return sheet, [f"{letters(c)}{r}" for c in range(column_number(c1), column_number(c2) + 1)
                   for r in range(int(r1), int(r2) + 1)]


def empty_workbook_charts(path: Path) -> list[str]:
    """Charts of the workbook whose every series refers to cells without a number."""
    with zipfile.ZipFile(path) as book:
        names = set(book.namelist())
        workbook = ET.fromstring(book.read("xl/workbook.xml"))
        rels = ET.fromstring(book.read("xl/_rels/workbook.xml.rels"))
        targets = {rel.get("Id"): rel.get("Target") for rel in rels}
        sheet_files = {}
        for sheet in workbook.find("s:sheets", SHEET_NS):
            target = targets[sheet.get(REL_NS)]
            sheet_files[sheet.get("name")] = str(PurePosixPath("xl") / target) if not target.startswith("/") \
                else target.lstrip("/")
        numbers: dict[str, set[str]] = {}

        def numeric_cells(sheet: str) -> set[str]:
            if sheet not in numbers:
                found = set()
                for c in ET.fromstring(book.read(sheet_files[sheet])).iter(f"{{{SHEET_NS['s']}}}c"):
                    value = c.find("s:v", SHEET_NS)
                    if value is not None and c.get("t") in (None, "n") and value.text not in (None, ""):
                        found.add(c.get("r"))
                numbers[sheet] = found
            return numbers[sheet]

        empty = []
        for name in sorted(n for n in names if re.match(r"xl/charts/chart\d+\.xml$", n)):
            chart = ET.fromstring(book.read(name))
            title = "".join(t.text or "" for t in chart.iter("{http://schemas.openxmlformats.org/drawingml/2006/main}t"))
            references = [f.text for f in chart.iterfind(".//c:ser/c:val/c:numRef/c:f", CHART_NS)]
            holds = False
            for reference in references:
                sheet, cells = cell_reference(reference)
                if sheet in sheet_files and numeric_cells(sheet) & set(cells):
                    holds = True
                    break
            if not holds:
                empty.append(f"{name} ({title or 'untitled'}): {len(references)} series, no number in "
                             + ", ".join(references[:3]))
        return empty


def split_problems(outputs: Path) -> list[str]:
    """Splits outside their workout, splits not adding up to it, splits no one runs."""
    workouts = {row["id"]: row for row in csv_rows(outputs / "workouts.csv", missing_ok=True)}
    by_workout: dict[str, list[dict]] = {}
    for split in csv_rows(outputs / "workout_splits.csv", missing_ok=True):
        by_workout.setdefault(split["workout_id"], []).append(split)
    problems = []
    for workout_id, splits in by_workout.items():
        workout = workouts.get(workout_id)
        if workout is None:
            problems.append(f"{workout_id}: splits of a workout not in workouts.csv")
            continue
        start, end = instant(workout["start"]), instant(workout["end"])
        label = f"{workout['activity_type']} {workout['start']}"
        for split in splits:
            if instant(split["start"]).timestamp() < start.timestamp() - 1 \
                    or instant(split["end"]).timestamp() > end.timestamp() + 1:
                problems.append(f"{label}: {split['unit']} {split['split']} {split['start']}–{split['end']} "
                                f"outside the workout ({workout['end']})")
            speed = number(split.get("speed_m_s"))
            fastest = FASTEST_M_S.get(workout["activity_type"])
            quarter = UNIT_METERS.get(split["unit"], 0) / 4
            if fastest and speed and speed > fastest and (number(split.get("distance_m")) or 0) >= quarter:
                problems.append(f"{label}: {split['unit']} {split['split']} at {speed} m/s ({split['from']})")
        distance = number(workout.get("distance_m"))
        # Each series of splits in each unit covers what it stands for once (Pipelines/README.md,
        # "Splits"): distance samples and a scaled route the workout's distance; a route of part
        # of the workout (`route`, unscaled) that route's distance; the Watch's Segment chain the
        # workout's distance, less the last part of a unit when the Watch wrote no segment for it.
        for source, unit in sorted({(split["from"], split["unit"]) for split in splits}):
            if not unit:
                continue
            total = sum(number(split["distance_m"]) or 0 for split in splits
                        if (split["from"], split["unit"]) == (source, unit))
            whole = number(workout.get("route_distance_m")) if source == "route" else distance
            if not whole:
                continue
            tolerance = max(10.0, 0.01 * whole)
            short_by = UNIT_METERS[unit] if source == "watch" else 0.0
            if not whole - short_by - tolerance <= total <= whole + tolerance:
                problems.append(f"{label}: {source} {unit} splits add up to {total:.0f} m, "
                                f"{'its route' if source == 'route' else 'the workout'} to {whole:.0f} m")
    return problems


def accounting_problems(run: dict) -> list[str]:
    """Types whose records do not add up (Pipelines/docs/nightly.md, "Every record accounted for")."""
    accounting = run.get("accounting")
    if accounting is None:
        return ["run.json has no accounting"]
    problems = []
    parts = ("duplicates", "rejected", "used", "setAside", "notShown", "unaccounted")
    types = accounting["types"]
    for name, line in sorted(types.items()):
        if line["read"] != sum(line[part] for part in parts):
            problems.append(f"{name}: read {line['read']} ≠ " + " + ".join(f"{p} {line[p]}" for p in parts))
        if line["unaccounted"]:
            problems.append(f"{name}: {line['unaccounted']} records unaccounted for")
        if line["read"] != run.get("typesRead", {}).get(name, 0):
            problems.append(f"{name}: accounting read {line['read']}, typesRead {run.get('typesRead', {}).get(name)}")
    for part in parts:
        total = sum(line[part] for line in types.values()) + (accounting["withoutType"] if part == "rejected" else 0)
        if accounting[part] != total:
            problems.append(f"total {part} {accounting[part]} ≠ Σ types {total}")
    if accounting["records"] != sum(line["read"] for line in types.values()) + accounting["withoutType"]:
        problems.append(f"records {accounting['records']} ≠ Σ read + withoutType")
    if sum(run.get("rejected", {}).values()) != accounting["rejected"]:
        problems.append(f"rejected {accounting['rejected']} ≠ run.json rejected {sum(run['rejected'].values())}")
    return problems


def headline_means(data: dict) -> dict[str, tuple[float | None, int]]:
    """The summary's averages at "All" as DATA.md defines them: (mean, dates left out)."""
    left_out = (data.get("worth_a_look") or {}).get("left_out") or {}
    result = {}
    for key, table, column in (("asleep_h", "nights", "asleep_h"), ("steps", "days", "steps")):
        rows = data.get(table) or {"date": []}
        values = rows.get(column) or [None] * len(rows["date"])
        flagged = set(left_out.get(key) or [])
        kept, left = [], 0
        for date, value in zip(rows["date"], values):
            if value is None or (key == "asleep_h" and value <= 0):
                continue
            if date in flagged:
                left += 1
            else:
                kept.append(value)
        if key == "steps" and not kept and left:
            # Every day one app's overlapping samples: the mean of them all, as Health adds them up.
            kept = [v for d, v in zip(rows["date"], values) if v is not None and d in flagged]
            left = 0
        result[key] = (sum(kept) / len(kept) if kept else None, left)
    return result


def unsummed_sleep(outputs: Path) -> list[str]:
    """Nights of sleep_daily.csv whose stages and unstaged sleep do not add up to time asleep."""
    problems = []
    for row in csv_rows(outputs / "sleep_daily.csv", missing_ok=True):
        asleep = number(row.get("asleep_s"))
        parts = [number(row.get(c)) for c in ("core_s", "deep_s", "rem_s", "unspecified_s")]
        if asleep is None or all(p is None for p in parts):
            continue
        if abs(sum(p or 0 for p in parts) - asleep) > 1:
            problems.append(f"{row.get('date')}: stages {sum(p or 0 for p in parts)} s, asleep {asleep} s")
    return problems


class GalleryChecks:
    """The checks, on every export of `exports()` (the subclass says which)."""

    exports: list[gallery.Export] = []
    folder: Path
    browser: Browser | None = None
    results: dict[str, object] = {}

    @classmethod
    def exports_to_check(cls) -> list[gallery.Export]:
        raise NotImplementedError

    @classmethod
    def setUpClass(cls):
        binary()  # without one the class skips, saying how to get one
        cls.folder = Path(tempfile.mkdtemp(prefix="healthetl-gallery-"))
        try:
            cls.exports = cls.exports_to_check()
            cls.results = {export.name: gallery.run_default(export, cls.folder / export.name)
                           for export in cls.exports}
        except BaseException:
            shutil.rmtree(cls.folder, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls):
        if cls.browser is not None:
            cls.browser.close()
            cls.browser = None
        shutil.rmtree(cls.folder, ignore_errors=True)

    def outputs(self, export: gallery.Export) -> Path:
        return self.folder / export.name

    def test_the_default_pipeline_runs(self):
        for export in self.exports:
            with self.subTest(export=export.name):
                result = self.results[export.name]
                self.assertEqual(result.returncode, 0, result.stderr[-500:])

    def test_empty_where_no_record_of_the_type(self):
        """A daily.csv column made of a sample type is empty on a date no record of that type
        touches (Pipelines/docs/daily.md, "Daily": missing is an empty cell, never 0), and so is
        the Daily sheet of health.xlsx."""
        for export in self.exports:
            run_json = self.outputs(export) / "run.json"
            if not run_json.exists():
                continue
            with self.subTest(export=export.name):
                run = json.loads(run_json.read_text(encoding="utf-8"))
                measured = dates_with_records(export_xml(export, run), run_zone(run["timeZone"]))
                problems = ["daily.csv " + p for p in unmeasured_cells(
                    csv_rows(self.outputs(export) / "daily.csv", missing_ok=True), measured)]
                book = self.outputs(export) / "health.xlsx"
                if book.exists():
                    problems += ["health.xlsx Daily " + p for p in unmeasured_cells(workbook_daily_rows(book), measured)]
                self.assertEqual(problems[:10], [], f"{len(problems)} cells")

    def test_every_chart_with_data_paints_it(self):
        chromium = shutil.which(os.environ.get("CHROMIUM", "chromium"))
        if chromium is None:
            self.skipTest("needs chromium: `make test-report-page` installs it")
        if type(self).browser is None:
            type(self).browser = Browser(timeout=60)
        for export in self.exports:
            html = self.outputs(export) / "report.html"
            if not html.exists():
                continue
            with self.subTest(export=export.name):
                page = self.browser.open(html)
                try:
                    page.wait_for(gallery.RENDERED, timeout=60)
                    self.assertFalse(page.evaluate("document.documentElement.dataset.reportError || ''"))
                    for range_name in ("initial", "all"):
                        if range_name == "all" and not page.evaluate(SHOW_ALL):
                            continue
                        charts = page.evaluate(PAINTED)
                        blank = [f"{c['id']} ({c['type']}): {d['label']} with {d['values']} values"
                                 for c in charts if not c["hidden"]
                                 for d in c["datasets"] or [] if d["values"] > 0 and d["painted"] == 0]
                        # A chart with nothing in the range says so rather than draw empty axes.
                        empty = [f"{c['id']}: empty axes instead of 'no data'" for c in charts
                                 if not c["hidden"] and c["datasets"] is not None
                                 and not any(d["present"] for d in c["datasets"])]
                        self.assertEqual(blank + empty, [], f"charts that show no data they hold, range {range_name}")
                finally:
                    page.close()

    def test_every_record_accounted_for(self):
        for export in self.exports:
            run_json = self.outputs(export) / "run.json"
            if run_json.exists():
                with self.subTest(export=export.name):
                    problems = accounting_problems(json.loads(run_json.read_text(encoding="utf-8")))
                    self.assertEqual(problems[:10], [], f"{len(problems)} problems")

    def test_parts_add_up_to_their_whole(self):
        for export in self.exports:
            with self.subTest(export=export.name):
                problems = unsummed_sleep(self.outputs(export))
                self.assertEqual(problems[:10], [], f"{len(problems)} nights")

    def test_headline_leaves_out_flagged_values_and_families_are_charted(self):
        chromium = shutil.which(os.environ.get("CHROMIUM", "chromium"))
        if chromium is None:
            self.skipTest("needs chromium: `make test-report-page` installs it")
        if type(self).browser is None:
            type(self).browser = Browser(timeout=60)
        for export in self.exports:
            html = self.outputs(export) / "report.html"
            if not html.exists():
                continue
            with self.subTest(export=export.name):
                data = report_data(html)
                page = self.browser.open(html)
                try:
                    page.wait_for(gallery.RENDERED, timeout=60)
                    self.assertTrue(page.evaluate(SHOW_ALL))
                    charted = set(page.evaluate(CHARTED))
                    summary = page.evaluate(SUMMARY)
                finally:
                    page.close()
                for key, (mean, left) in headline_means(data).items():
                    shown = summary[key]
                    self.assertEqual(shown["value"] == "", mean is None, f"{key}: {shown}")
                    if mean is not None:
                        self.assertAlmostEqual(float(shown["value"]), mean, places=6, msg=f"{key}: {shown}")
                    self.assertEqual("leaves out" in shown["over"], left > 0, f"{key}: {shown['over']}")
                columns = csv_rows(self.outputs(export) / "daily.csv", missing_ok=True)
                with_data = {c for row in columns for c, v in row.items() if c in FAMILY_CHARTS and v != ""}
                missing = sorted(f"{c} → {FAMILY_CHARTS[c]}" for c in with_data if FAMILY_CHARTS[c] not in charted)
                self.assertEqual(missing, [], "daily.csv columns with data whose chart is not drawn")

    def test_no_workbook_chart_without_numbers(self):
        for export in self.exports:
            book = self.outputs(export) / "health.xlsx"
            if book.exists():
                with self.subTest(export=export.name):
                    self.assertEqual(empty_workbook_charts(book), [])

    def test_no_zero_where_nothing_was_measured(self):
        for export in self.exports:
            with self.subTest(export=export.name):
                outputs = self.outputs(export)
                problems = ["daily.csv " + p for p in zeros_where_nothing_was_measured(
                    csv_rows(outputs / "daily.csv", missing_ok=True), *SLEEP_DAILY_CSV)]
                problems += ["sleep_daily.csv " + p for p in zeros_where_nothing_was_measured(
                    csv_rows(outputs / "sleep_daily.csv", missing_ok=True), *SLEEP_SLEEP_DAILY)]
                self.assertEqual(problems[:10], [], f"{len(problems)} cells")

    def test_splits_inside_their_workout_adding_up_to_it(self):
        for export in self.exports:
            with self.subTest(export=export.name):
                problems = split_problems(self.outputs(export))
                self.assertEqual(problems[:10], [], f"{len(problems)} problems")


class GalleryProfileTests(GalleryChecks, unittest.TestCase):
    """Every `healthetl sample --profile`, four weeks each."""

    @classmethod
    def exports_to_check(cls):
        return gallery.make_profiles(cls.folder)


class GalleryRealExportTests(GalleryChecks, unittest.TestCase):
    """Every real export of ../shared/fixtures/real."""

    @classmethod
    def exports_to_check(cls):
        if not gallery.REAL.is_dir():
            raise unittest.SkipTest(f"the real exports are not here: {gallery.REAL} is absent "
                                    "(set HEALTHETL_REAL_FIXTURES to their folder)")
        return gallery.real_exports()


if __name__ == "__main__":
    unittest.main()
