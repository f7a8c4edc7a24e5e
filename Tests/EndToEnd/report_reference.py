"""Report data (Pipelines/report/DATA.md) made from a run's own outputs, in Python.

This is an independent second implementation of the data contract: it reads only what a run
already wrote (CSV, run.json, the samples and ActivitySummary tables) plus the route GPX files
of the export, and applies the rounding rules of DATA.md. It made `example-data.json` from the
bundled sample, and the Swift report stage's data for the same export can be compared with it.

    healthetl run --pipeline Pipelines/default.json --pipeline Tests/EndToEnd/report-extra.json \\
        --out /tmp/sample-out SampleData/export.zip
    python3 Tests/EndToEnd/report_reference.py /tmp/sample-out SampleData/export.zip > example-data.json

Standard library only.
"""

from __future__ import annotations

import bisect
import datetime as dt
import json
import math
import sys
import zipfile
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from xml.etree import ElementTree
from zoneinfo import ZoneInfo

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import csv_rows  # noqa: E402

HR_DAYS = 14
# DATA.md, "export" `devices`: Apple's Bluetooth product ids of AirPods (ids as read by
# github.com/maniacx/Bluetooth-Battery-Meter, lib/devices/airpods/deviceConfigs/*.js).
AIRPODS = {0x2002: "AirPods (1st generation)", 0x200F: "AirPods (2nd generation)", 0x2013: "AirPods (3rd generation)",
           0x2019: "AirPods 4", 0x201B: "AirPods 4 with noise cancellation", 0x200E: "AirPods Pro",
           0x2014: "AirPods Pro (2nd generation)", 0x2024: "AirPods Pro (2nd generation, USB-C)",
           0x2027: "AirPods Pro 3", 0x200A: "AirPods Max", 0x201F: "AirPods Max (USB-C)"}


def device_shown(model: str) -> str:
    """A model as the report names it: a `0x20xx` product id gets a name, its code kept."""
    if len(model) != 6 or model[:2].lower() != "0x":
        return model
    try:
        product = int(model[2:], 16)
    except ValueError:
        return model
    if product >> 8 != 0x20:
        return model
    return f"{AIRPODS.get(product, 'AirPods or Beats headphones')} ({model})"
# DATA.md, "days": report column -> (daily.csv column, places).
CELL_COLUMNS = {
    "distance_km": ("distance_km", 2), "cycling_km": ("cycling_distance_km", 2), "flights": ("flights", 0),
    "exercise_min": ("exercise_min", 0), "mindful_min": ("mindful_min", 0), "bp_systolic": ("bp_systolic_mmhg", 0),
    "bp_diastolic": ("bp_diastolic_mmhg", 0), "bp_readings": ("bp_readings", 0), "glucose_mg_dl": ("glucose_mg_dl", 0),
    "dietary_kcal": ("dietary_energy_kcal", 0), "carbs_g": ("carbohydrates_g", 1), "protein_g": ("protein_g", 1),
    "fat_g": ("fat_g", 1), "body_fat": ("body_fat_fraction", 3), "bmi": ("bmi", 1), "lean_mass_kg": ("lean_body_mass_kg", 1),
    "walking_speed_kmh": ("walking_speed_kmh", 1), "step_length_cm": ("step_length_cm", 0),
    "walking_asymmetry": ("walking_asymmetry_fraction", 3), "double_support": ("double_support_fraction", 3),
    "headphone_db": ("headphone_audio_dba", 1), "environmental_db": ("environmental_audio_dba", 1),
}
# DATA.md, "also_in_export": the types some chart draws.
CHARTED_TYPES = {
    "StepCount", "ActiveEnergyBurned", "DistanceWalkingRunning", "DistanceCycling", "FlightsClimbed", "AppleExerciseTime",
    "MindfulSession", "SleepAnalysis", "HeartRate", "RestingHeartRate", "HeartRateVariabilitySDNN", "WalkingHeartRateAverage",
    "BodyMass", "VO2Max", "BloodPressureSystolic", "BloodPressureDiastolic", "BloodGlucose", "DietaryEnergyConsumed",
    "DietaryCarbohydrates", "DietaryProtein", "DietaryFatTotal", "BodyFatPercentage", "BodyMassIndex", "LeanBodyMass",
    "WalkingSpeed", "WalkingStepLength", "WalkingAsymmetryPercentage", "WalkingDoubleSupportPercentage",
    "HeadphoneAudioExposure", "EnvironmentalAudioExposure",
}
# The daily.csv columns that repeat a statistic of a type, in column order (Pipelines/docs/daily.md, "Daily").
DAILY_STATISTIC_COLUMNS = [
    ("StepCount", "steps"), ("DistanceWalkingRunning", "distance_km"), ("ActiveEnergyBurned", "active_energy_kcal"),
    ("BasalEnergyBurned", "basal_energy_kcal"), ("FlightsClimbed", "flights"), ("AppleExerciseTime", "exercise_min"),
    ("RestingHeartRate", "resting_hr_bpm"), ("WalkingHeartRateAverage", "walking_hr_avg_bpm"),
    ("HeartRateVariabilitySDNN", "hrv_sdnn_ms"), ("HeartRate", "hr_min_bpm"), ("RespiratoryRate", "respiratory_rate_per_min"),
    ("VO2Max", "vo2max_ml_kg_min"), ("BodyMass", "body_mass_kg"), ("DistanceSwimming", "swim_distance_m"),
    ("SwimmingStrokeCount", "swim_strokes"), ("DistanceCycling", "cycling_distance_km"),
    ("BloodPressureSystolic", "bp_systolic_mmhg"), ("BloodPressureDiastolic", "bp_diastolic_mmhg"),
    ("BloodGlucose", "glucose_mg_dl"), ("DietaryEnergyConsumed", "dietary_energy_kcal"),
    ("DietaryCarbohydrates", "carbohydrates_g"), ("DietaryProtein", "protein_g"), ("DietaryFatTotal", "fat_g"),
    ("BodyFatPercentage", "body_fat_fraction"), ("BodyMassIndex", "bmi"), ("LeanBodyMass", "lean_body_mass_kg"),
    ("WalkingSpeed", "walking_speed_kmh"), ("WalkingStepLength", "step_length_cm"),
    ("WalkingAsymmetryPercentage", "walking_asymmetry_fraction"),
    ("WalkingDoubleSupportPercentage", "double_support_fraction"),
]
SOURCES_PER_TYPE = 20  # DATA.md, "quality": the rest in one row
ROUTE_POINTS = 300
# Types whose values add up (Apple's cumulative aggregation style): the priority merge applies.
CUMULATIVE = {
    "StepCount", "DistanceWalkingRunning", "DistanceCycling", "DistanceSwimming", "DistanceWheelchair",
    "DistanceDownhillSnowSports", "ActiveEnergyBurned", "BasalEnergyBurned", "FlightsClimbed", "SwimmingStrokeCount",
    "PushCount", "AppleExerciseTime", "AppleStandTime", "AppleMoveTime", "NikeFuel", "DietaryWater", "DietaryEnergyConsumed",
}


def rnd(text_or_number, places: int):
    """Half away from zero, on the decimal text the CSV wrote; None for an empty field."""
    if text_or_number in ("", None):
        return None
    d = Decimal(str(text_or_number)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return int(d) if d == d.to_integral_value() else float(d)  # 56, not 56.0: the same JSON number


def hours(seconds_text: str):
    """Whole seconds to hours with two decimals, in integers: hundredths = (s + 18) // 36."""
    if seconds_text in ("", None):
        return None
    hundredths = (int(seconds_text) + 18) // 36
    return hundredths / 100 if hundredths % 100 else hundredths // 100


def minute_text(iso: str):
    return iso[:16].replace("T", " ") if iso else None


def stats(out: Path, name: str, column: str) -> dict[str, str]:
    return {row["bucket_start"][:10]: row[column] for row in csv_rows(out / "stats" / f"{name}.csv", missing_ok=True) if row[column] != ""}


def simplify(points: list[tuple[float, float]], limit: int = ROUTE_POINTS) -> list[tuple[float, float]]:
    """Douglas–Peucker in local metres, the tolerance doubled from 1 m until at most `limit` points."""
    if len(points) <= 2:
        return points
    lat0 = points[0][0]
    k = math.cos(math.radians(lat0)) * 111_320
    xy = [((lon - points[0][1]) * k, (lat - lat0) * 111_320) for lat, lon in points]

    def keep(tolerance: float) -> list[int]:
        marked = {0, len(xy) - 1}
        stack = [(0, len(xy) - 1)]
        while stack:
            a, b = stack.pop()
            (ax, ay), (bx, by) = xy[a], xy[b]
            length = math.hypot(bx - ax, by - ay)
            far, at = -1.0, -1
            for i in range(a + 1, b):
                px, py = xy[i]
                d = (abs((bx - ax) * (ay - py) - (ax - px) * (by - ay)) / length) if length else math.hypot(px - ax, py - ay)
                if d > far:
                    far, at = d, i
            if at >= 0 and far > tolerance:
                marked.add(at)
                stack += [(a, at), (at, b)]
        return sorted(marked)

    tolerance = 1.0
    while True:
        kept = keep(tolerance)
        if len(kept) <= limit:
            return [points[i] for i in kept]
        tolerance *= 2


def route(export_zip: Path | None, path: str):
    if not export_zip or not path:
        return None
    first = path.split(";")[0]
    with zipfile.ZipFile(export_zip) as z:
        member = next((n for n in z.namelist() if n.endswith(first)), None)
        if member is None:
            return None
        tree = ElementTree.fromstring(z.read(member))
    pts = [(float(p.get("lat")), float(p.get("lon"))) for p in tree.iter() if p.tag.endswith("trkpt")]
    if len(pts) < 2:
        return None
    return [[rnd(repr(lat), 5), rnd(repr(lon), 5)] for lat, lon in simplify(pts)]


# ---------------------------------------------------------------------------------------------
# Data quality: per-source counts, overlap across sources, and the priority merge's shares


def parse_instant(text: str) -> float:
    return dt.datetime.fromisoformat(text).timestamp()


def group_rank(name: str, manual: bool, model: str):
    cls = {"Watch": 1, "iPhone": 2}.get(model) if model else (1 if "Watch" in name else 2 if "iPhone" in name else 3)
    return (0 if manual else cls or 3, name.encode())


def quality_type(rows: list[dict], cumulative: bool) -> tuple[int, list[dict]]:
    samples = []
    group_model: dict[tuple[str, bool], str] = {}
    for row in rows:
        manual = json.loads(row["metadata"] or "{}").get("HKWasUserEntered") in ("1", 1, True)
        key = (row["source"], manual)
        if row["device_model"] and key not in group_model:
            group_model[key] = row["device_model"]
        group_model.setdefault(key, "")
        try:
            value = float(row["value"])
        except ValueError:
            value = 0.0
        samples.append((parse_instant(row["start"]), parse_instant(row["end"]), value, key))
    # Overlap: a positive-length sample sharing a positive stretch of time with another source's.
    by_source: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for s, e, _, (name, _) in samples:
        if e > s:
            by_source[name].append((s, e))
    index = {}
    for name, spans in by_source.items():
        spans.sort()
        starts = [s for s, _ in spans]
        prefix, best = [], -math.inf
        for _, e in spans:
            best = max(best, e)
            prefix.append(best)
        index[name] = (starts, prefix)
    overlapping = 0
    for s, e, _, (name, _) in samples:
        if e <= s:
            continue
        for other, (starts, prefix) in index.items():
            if other == name:
                continue
            i = bisect.bisect_left(starts, e)
            if i and prefix[i - 1] > s:
                overlapping += 1
                break
    # Merge: time cut at every boundary; a piece counts from the best-ranked group covering it.
    counted: dict[str, float] = defaultdict(float)
    total: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)
    rank = {key: group_rank(key[0], key[1], model) for key, model in group_model.items()}
    events = []
    for n, (s, e, v, key) in enumerate(samples):
        total[key[0]] += v
        count[key[0]] += 1
        if e <= s:
            counted[key[0]] += v  # an instant is never merged away
        else:
            events.append((s, 1, n))
            events.append((e, 0, n))
    events.sort()
    active: set[int] = set()
    last = None
    for t, kind, n in events:
        if last is not None and t > last and active:
            best = min(rank[samples[i][3]] for i in active)
            for i in active:
                s, e, v, key = samples[i]
                if rank[key] == best:
                    counted[key[0]] += v * (t - last) / (e - s)
        if kind:
            active.add(n)
        else:
            active.discard(n)
        last = t
    def share(names: list[str]):
        whole = sum(total[n] for n in names)
        return rnd(repr(sum(counted[n] for n in names) / whole), 3) if cumulative and whole else None

    ordered = sorted(count, key=lambda n: (-count[n], n))
    listed, rest = ordered[:SOURCES_PER_TYPE], ordered[SOURCES_PER_TYPE:]
    sources = [{"name": n, "samples": count[n], "counted_share": share([n])} for n in listed]
    if rest:
        sources.append({"name": f"{len(rest)} other sources", "samples": sum(count[n] for n in rest),
                        "counted_share": share(rest), "others": len(rest)})
    return overlapping, sources


# ---------------------------------------------------------------------------------------------


def from_outputs(out: Path, export_zip: Path | None = None) -> dict:
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    zone = ZoneInfo(run["timeZone"])

    steps = stats(out, "steps-per-day", "sum")
    kcal = stats(out, "active-energy-per-day", "sum")
    rhr = stats(out, "resting-heart-rate-per-day", "avg")
    hrv = stats(out, "hrv-per-day", "avg")
    walk = stats(out, "walking-heart-rate-per-day", "avg")
    heart = {option: stats(out, "heart-rate-per-day", option) for option in ("min", "avg", "max")}
    mass = stats(out, "body-mass-per-day", "mostRecent")
    vo2 = stats(out, "vo2max-per-day", "mostRecent")
    rings = {}
    for row in csv_rows(out / "elements" / "ActivitySummary.csv", missing_ok=True):
        factor = Decimal(1) / Decimal("4.184") if row.get("activeEnergyBurnedUnit") == "kJ" else Decimal(1)
        energy = lambda v: None if v in ("", None) else str(Decimal(v) * factor)  # noqa: E731
        rings[row["dateComponents"]] = {
            "move_kcal": rnd(energy(row.get("activeEnergyBurned")), 1),
            "move_goal_kcal": rnd(energy(row.get("activeEnergyBurnedGoal")), 1),
            "exercise_ring_min": rnd(row.get("appleExerciseTime"), 0),
            "exercise_goal_min": rnd(row.get("appleExerciseTimeGoal"), 0),
            "stand_h": rnd(row.get("appleStandHours"), 0),
            "stand_goal_h": rnd(row.get("appleStandHoursGoal"), 0),
        }
    # DATA.md, "days": these are the daily.csv cells themselves.
    daily = {row["date"]: row for row in csv_rows(out / "daily.csv", missing_ok=True)}
    cells = {name: {d: row[column] for d, row in daily.items() if row[column] != ""} for name, (column, _) in CELL_COLUMNS.items()}
    dates = sorted(set(steps) | set(kcal) | set(rhr) | set(hrv) | set(walk) | set(rings) | set(heart["avg"]) | set(mass) | set(vo2)
                   | {d for values in cells.values() for d in values})
    days = {"date": dates}
    days["steps"] = [rnd(steps.get(d), 0) for d in dates]
    days["active_kcal"] = [rnd(kcal.get(d), 1) for d in dates]
    for key in ("move_kcal", "move_goal_kcal", "exercise_ring_min", "exercise_goal_min", "stand_h", "stand_goal_h"):
        days[key] = [rings.get(d, {}).get(key) for d in dates]
    days["resting_hr"] = [rnd(rhr.get(d), 1) for d in dates]
    days["hrv_sdnn_ms"] = [rnd(hrv.get(d), 1) for d in dates]
    days["walking_hr"] = [rnd(walk.get(d), 1) for d in dates]
    for option in ("min", "avg", "max"):
        days[f"hr_{option}"] = [rnd(heart[option].get(d), 1) for d in dates]
    days["body_mass_kg"] = [rnd(mass.get(d), 2) for d in dates]
    days["vo2max"] = [rnd(vo2.get(d), 1) for d in dates]
    for name, (_, places) in CELL_COLUMNS.items():
        days[name] = [rnd(cells[name].get(d), places) for d in dates]

    # Bedtime and wake-up are the main sleep's: the date's session with the most time asleep
    # (the first of equals), so a nap does not stretch the night into the afternoon.
    main_session: dict[str, dict] = {}
    for row in csv_rows(out / "sleep_sessions.csv", missing_ok=True):
        best = main_session.get(row["date"])
        # An in-bed-only session has no asleep_s: 0 here, as the report counts it.
        if best is None or int(row["asleep_s"] or 0) > int(best["asleep_s"] or 0):
            main_session[row["date"]] = row
    nights = defaultdict(list)
    for row in csv_rows(out / "sleep_daily.csv", missing_ok=True):
        nights["date"].append(row["date"])
        for key in ("core", "deep", "rem", "awake", "unspecified", "asleep", "in_bed"):
            nights[f"{key}_h"].append(hours(row[f"{key}_s"]))
        main = main_session.get(row["date"], {})
        nights["bedtime"].append(minute_text(main.get("sleep_start")))
        nights["wake"].append(minute_text(main.get("sleep_end")))

    per_day = defaultdict(list)
    for row in csv_rows(out / "stats" / "heart-rate-per-minute.csv", missing_ok=True):
        if row["max"] != "":
            per_day[row["bucket_start"][:10]].append(row)
    hr = []
    for date in sorted(per_day)[-HR_DAYS:]:
        midnight = dt.datetime.combine(dt.date.fromisoformat(date), dt.time(), zone)
        offsets = [[0, int(midnight.utcoffset().total_seconds() // 60)]]
        minutes, bpm = [], []
        for row in per_day[date]:
            start = dt.datetime.fromisoformat(row["bucket_start"])
            minute = int((start - midnight).total_seconds() // 60)
            offset = int(start.utcoffset().total_seconds() // 60)
            if offset != offsets[-1][1]:
                offsets.append([minute, offset])
            minutes.append(minute)
            bpm.append(rnd(row["max"], 1))
        hr.append({"date": date, "minute": minutes, "bpm_max": bpm, "utc_offsets": offsets})

    laps = defaultdict(lambda: defaultdict(list))
    for row in csv_rows(out / "swim_laps.csv", missing_ok=True):
        lap = laps[row["workout_id"]]
        lap["duration_s"].append(rnd(row["duration_s"], 0))
        lap["distance_m"].append(rnd(row["distance_m"], 1))
        lap["strokes"].append(rnd(row["strokes"], 0))
        lap["style"].append(row["style"] or None)
        lap["swolf"].append(rnd(row["swolf"], 1))
    workouts = defaultdict(list)
    workout_rows = csv_rows(out / "workouts.csv", missing_ok=True)
    for row in workout_rows:
        workouts["id"].append(row["id"])
        workouts["type"].append(row["activity_type"])
        workouts["start"].append(minute_text(row["start"]))
        workouts["duration_s"].append(rnd(row["duration_s"], 0))
        workouts["distance_m"].append(rnd(row["distance_m"], 1))
        workouts["energy_kcal"].append(rnd(row["energy_kcal"], 1))
        workouts["hr_avg"].append(rnd(row["hr_avg"], 1))
        workouts["hr_max"].append(rnd(row["hr_max"], 1))
        workouts["laps"].append({k: v for k, v in laps[row["id"]].items()} if row["id"] in laps else None)
        workouts["route"].append(route(export_zip, row["route"]))

    types = []
    for name, distinct in run["types"].items():
        rows = csv_rows(out / "samples" / f"{name}.csv", missing_ok=True)
        overlapping, sources = quality_type(rows, name in CUMULATIVE) if rows else (None, [])
        types.append({
            "type": name, "samples": distinct, "duplicates": run["duplicates"].get(name, 0),
            "overlapping": overlapping, "merged": name in CUMULATIVE, "sources": sources,
        })
    types.sort(key=lambda t: (-t["samples"], t["type"]))
    rejected = [
        {"reason": reason, "count": count, "examples": run["rejectedExamples"].get(reason, [])[:5]}
        for reason, count in sorted(run["rejected"].items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    # DATA.md, "also_in_export": a type is a file of the samples pipeline by its plain name (the
    # types of these exports all have one).
    daily_columns = {}
    for type_name, column in DAILY_STATISTIC_COLUMNS:
        daily_columns.setdefault(type_name, column)
    also = [
        {"type": name, "samples": count, "daily_column": daily_columns.get(name), "pipeline": "samples",
         "file": f"samples/{name}.csv"}
        for name, count in sorted(run["types"].items(), key=lambda kv: (-kv[1], kv[0].encode()))
        if count > 0 and name not in CHARTED_TYPES
    ]
    # DATA.md, "worth_a_look": run.json's flags by key; the dates the averages leave out are those
    # of the sleep rules' items and of the step days of `oneSourceOverlaps` (every item of those is
    # listed in run.json while a rule flags at most 20, as in the exports these tests read).
    flags = run.get("worthALook") or {}
    for key in ("longNights", "repeatedSleepBlocks", "oneSourceOverlaps"):
        found = flags.get(key, {"count": 0, "items": []})
        assert found["count"] == len(found["items"]), f"{key}: more items than run.json lists"
    worth = {
        "rules": [
            {"key": key, "title": found["title"], "why": found["why"], "count": found["count"],
             "items": [{"date": item["date"], "id": item.get("id"), "detail": item["detail"]}
                       for item in found["items"]]}
            for key, found in sorted(flags.items(), key=lambda kv: kv[0].encode())
        ],
        "left_out": {
            "asleep_h": sorted({item["date"] for key in ("longNights", "repeatedSleepBlocks")
                                for item in flags.get(key, {}).get("items", [])}),
            "steps": sorted({item["date"] for item in flags.get("oneSourceOverlaps", {}).get("items", [])
                             if item["detail"].startswith("StepCount:")}),
        },
    }
    version = run.get("exportVersion")
    return {
        "report_version": 1,
        "export": {
            "export_date": run.get("exportDate"),
            "export_version": None if version is None else str(version),
            "locale": run.get("locale"),
            "first_date": (run.get("first") or "")[:10] or None,
            "last_date": (run.get("last") or "")[:10] or None,
            "time_zone": run["timeZone"],
            "time_zone_reason": run["timeZoneReason"],
            "sources": run["sources"],
            "devices": [device_shown(model) for model in run["deviceModels"]],
            "records": sum(run["types"].values()),
            "records_read": sum(run["typesRead"].values()),
            "duplicates": sum(run["duplicates"].values()),
            "workouts": len(workout_rows),
            "workout_copies": run["workoutCopies"],
            "rejected": sum(run["rejected"].values()),
            **({"sources_omitted": run["sourcesOmitted"]} if "sourcesOmitted" in run else {}),
            **({"devices_omitted": run["deviceModelsOmitted"]} if "deviceModelsOmitted" in run else {}),
        },
        "days": days,
        "nights": dict(nights),
        "heart_rate": {"days_limit": HR_DAYS, "days": hr},
        "workouts": dict(workouts),
        "quality": {"types": types, "rejected": rejected},
        "also_in_export": also,
        "worth_a_look": worth,
    }


def pretty(data: dict) -> str:
    """Readable JSON for the example file: objects indented, arrays of scalars on one line."""
    def fmt(value, indent: int) -> str:
        pad = "  " * (indent + 1)
        if isinstance(value, dict):
            if not value:
                return "{}"
            return "{\n" + ",\n".join(f"{pad}{json.dumps(k)}: {fmt(v, indent + 1)}" for k, v in value.items()) + "\n" + "  " * indent + "}"
        if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
            if all(isinstance(v, list) and not any(isinstance(x, (dict, list)) for x in v) for v in value):
                return "[" + ", ".join(json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in value) + "]"
            return "[\n" + ",\n".join(pad + fmt(v, indent + 1) for v in value) + "\n" + "  " * indent + "]"
        return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), allow_nan=False)
    return fmt(data, 0) + "\n"


if __name__ == "__main__":
    out_dir = Path(sys.argv[1])
    export = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    sys.stdout.write(pretty(from_outputs(out_dir, export)))
