"""Report data for the browser tests, and the renderer that fills the report template.

`render()` does exactly what the Swift report stage must do (Pipelines/report/DATA.md, "Filling
the template"): split the template at its two placeholders, put the chart library in verbatim and
the data JSON with every `<` written as `\\u003c`. `synthetic()` makes a deterministic data file of
any length (10 years and 1,000 workouts with laps and routes for the performance test), so the
page can be tested at full size before the Swift side exists.

    python3 Tests/EndToEnd/report_fixture.py --years 10 --workouts 1000 --out /tmp/big.html
    python3 Tests/EndToEnd/report_fixture.py --data Pipelines/report/example-data.json --out /tmp/example.html

Standard library only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import random
import sys
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEMPLATE = REPO / "Pipelines" / "report" / "report.html"
EXAMPLE_DATA = REPO / "Pipelines" / "report" / "example-data.json"
CHART_JS = Path("/usr/share/javascript/chart.js/chart.min.js")

LIBRARY_TOKEN = "<!--HEALTHETL:CHART_JS-->"
DATA_TOKEN = "<!--HEALTHETL:REPORT_DATA-->"


class RenderError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# Filling the template


def dumps(data: object) -> str:
    """Compact UTF-8 JSON; NaN and infinities are refused (JSON has no such numbers)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def escape_json(text: str) -> str:
    """Inside `<script>`, only `</script` and `<!--` are dangerous; JSON has `<` only inside
    strings, where `\\u003c` means the same character, so replacing every `<` removes both."""
    return text.replace("<", "\\u003c")


def render(template: str, library: str, data_json: str) -> str:
    for token in (LIBRARY_TOKEN, DATA_TOKEN):
        if template.count(token) != 1:
            raise RenderError(f"template: placeholder {token} must occur exactly once")
    lowered = library.lower()
    if "</script" in lowered or "<!--" in library:
        raise RenderError("chart library contains '</script' or '<!--'; it cannot be inlined verbatim")
    library_at = template.index(LIBRARY_TOKEN)
    data_at = template.index(DATA_TOKEN)
    if library_at > data_at:
        raise RenderError("template: the library placeholder must come before the data placeholder")
    # One pass over the template: inserted text is never searched again for placeholders.
    return (
        template[:library_at]
        + library
        + template[library_at + len(LIBRARY_TOKEN) : data_at]
        + escape_json(data_json)
        + template[data_at + len(DATA_TOKEN) :]
    )


def render_file(data: object | str, out: Path, template: Path = TEMPLATE, library: Path = CHART_JS) -> Path:
    text = data if isinstance(data, str) else dumps(data)
    html = render(template.read_text(encoding="utf-8"), library.read_text(encoding="utf-8"), text)
    out.write_text(html, encoding="utf-8")
    return out


# ---------------------------------------------------------------------------------------------
# Synthetic data


def r(value: float, places: int) -> float:
    """Half away from zero, as DATA.md asks of the Swift side (Python's round() is half-even)."""
    q = Decimal(1).scaleb(-places)
    d = Decimal(repr(value)).quantize(q, rounding=ROUND_HALF_UP)  # ties away from zero, also below 0
    return int(d) if places == 0 else float(d)


def _iso_day(day: dt.date) -> str:
    return day.isoformat()


def _clock(day: dt.date, minutes: float) -> str:
    """Local wall clock `YYYY-MM-DD HH:MM`, `minutes` counted from `day` 00:00 (may be negative)."""
    stamp = dt.datetime.combine(day, dt.time()) + dt.timedelta(minutes=math.floor(minutes))
    return stamp.strftime("%Y-%m-%d %H:%M")


WORKOUT_TYPES = [
    ("Running", 0.33, True),
    ("Walking", 0.18, True),
    ("Cycling", 0.15, True),
    ("Swimming", 0.16, False),
    ("Hiking", 0.04, True),
    ("TraditionalStrengthTraining", 0.09, False),
    ("Yoga", 0.05, False),
]

STYLES = ["freestyle", "freestyle", "freestyle", "breaststroke", "backstroke", "butterfly", "kickboard", "mixed"]


def _route(rng: random.Random, distance_m: float, points: int) -> list[list[float]]:
    """A closed loop of `points` points around a city park, about `distance_m` long."""
    lat0 = 52.5145 + rng.uniform(-0.02, 0.02)
    lon0 = 13.3501 + rng.uniform(-0.03, 0.03)
    radius = distance_m / (2 * math.pi)
    wobble = [rng.uniform(-0.25, 0.25) for _ in range(5)]
    out = []
    for i in range(points):
        a = 2 * math.pi * i / (points - 1)
        k = 1 + sum(w * math.sin((j + 2) * a + j) for j, w in enumerate(wobble)) * 0.3
        north = radius * k * (math.sin(a))
        east = radius * k * (1 - math.cos(a)) * 1.3
        out.append([r(lat0 + north / 111_320, 5), r(lon0 + east / (111_320 * math.cos(math.radians(lat0))), 5)])
    return out


def synthetic(
    years: int = 10, workouts: int = 1000, seed: int = 1, end: dt.date = dt.date(2024, 3, 27), hr_days: int = 14
) -> dict:
    """A deterministic report data file per DATA.md: `years` × 365 days ending `end`."""
    rng = random.Random(seed)
    n_days = years * 365
    first = end - dt.timedelta(days=n_days - 1)
    watch_from = first + dt.timedelta(days=min(n_days // 4, 900))  # older data: iPhone only
    stages_from = first + dt.timedelta(days=n_days // 3)  # before: asleep / in bed only

    days = {k: [] for k in (
        "date", "steps", "active_kcal", "move_kcal", "move_goal_kcal", "exercise_ring_min", "exercise_goal_min",
        "stand_h", "stand_goal_h", "resting_hr", "hrv_sdnn_ms", "walking_hr", "hr_min", "hr_avg", "hr_max",
        "body_mass_kg", "vo2max",
    )}
    nights = {k: [] for k in (
        "date", "core_h", "deep_h", "rem_h", "awake_h", "unspecified_h", "asleep_h", "in_bed_h", "bedtime", "wake",
    )}
    move_goal = 450.0
    resting = 62.0
    for i in range(n_days):
        day = first + dt.timedelta(days=i)
        if rng.random() < 0.015:  # phone left at home, nothing recorded
            continue
        watch = day >= watch_from
        weekend = day.weekday() >= 5
        steps = max(0, rng.gauss(7200 if weekend else 9100, 2800))
        kcal = max(20, steps * 0.045 + rng.gauss(120, 60)) if watch or rng.random() < 0.5 else None
        if watch and i % 97 == 0:
            move_goal = float(rng.choice([400, 450, 500, 550, 600, 650]))
        resting += (60.5 - resting) * 0.02 + rng.gauss(0, 0.6)
        days["date"].append(_iso_day(day))
        days["steps"].append(r(steps, 0))
        days["active_kcal"].append(None if kcal is None else r(kcal, 1))
        # Heart rate and body measures follow the resting rate and the day number, drawing nothing
        # from `rng`, so every other column is what it was before they were added.
        days["hr_min"].append(r(resting - 9, 1))
        days["hr_avg"].append(r(resting + 14 + (i % 7), 1))
        days["hr_max"].append(r(resting + 70 + (i % 40), 1))
        days["body_mass_kg"].append(r(80 - 6 * i / n_days + (i % 5) / 10, 2) if i % 7 == 0 else None)
        days["vo2max"].append(r(44 + (i % 60) / 20, 1) if watch and i % 9 == 0 else None)
        if watch:
            move = kcal if kcal is not None else rng.uniform(200, 700)
            days["move_kcal"].append(r(move, 1))
            days["move_goal_kcal"].append(move_goal)
            days["exercise_ring_min"].append(r(max(0, rng.gauss(32, 18)), 0))
            days["exercise_goal_min"].append(30)
            days["stand_h"].append(rng.randint(6, 15))
            days["stand_goal_h"].append(12)
            days["resting_hr"].append(r(resting, 1) if rng.random() > 0.03 else None)
            days["hrv_sdnn_ms"].append(r(max(12, rng.gauss(48, 12)), 1) if rng.random() > 0.05 else None)
            days["walking_hr"].append(r(rng.gauss(resting + 38, 4), 1) if rng.random() > 0.1 else None)
        else:
            for key in ("move_kcal", "move_goal_kcal", "exercise_ring_min", "exercise_goal_min", "stand_h", "stand_goal_h",
                        "resting_hr", "hrv_sdnn_ms", "walking_hr"):
                days[key].append(None)

        if rng.random() < 0.06:
            continue  # no sleep recorded that night
        bed = 22 * 60 + rng.gauss(50, 40) + (45 if weekend else 0)  # minutes after the previous midnight
        asleep_min = max(180, rng.gauss(430, 45))
        awake_min = max(0, rng.gauss(22, 12))
        lie_in = max(0, rng.gauss(12, 8))
        wake_at = bed + asleep_min + awake_min
        prev = day - dt.timedelta(days=1)
        nights["date"].append(_iso_day(day))
        nights["bedtime"].append(_clock(prev, bed))
        nights["wake"].append(_clock(prev, wake_at))
        nights["in_bed_h"].append(r((asleep_min + awake_min + lie_in + 8) / 60, 2))
        if day >= stages_from:
            deep = asleep_min * rng.uniform(0.12, 0.2)
            rem = asleep_min * rng.uniform(0.18, 0.26)
            core_h, deep_h, rem_h = r((asleep_min - deep - rem) / 60, 2), r(deep / 60, 2), r(rem / 60, 2)
            nights["core_h"].append(core_h)
            nights["deep_h"].append(deep_h)
            nights["rem_h"].append(rem_h)
            nights["unspecified_h"].append(0)
            nights["awake_h"].append(r(awake_min / 60, 2))
            if rng.random() < 0.3:
                nights["in_bed_h"][-1] = None  # the Watch alone records no in-bed time
        else:
            nights["core_h"].append(0)
            nights["deep_h"].append(0)
            nights["rem_h"].append(0)
            nights["unspecified_h"].append(r(asleep_min / 60, 2))
            nights["awake_h"].append(0)
        # asleep_h is rounded from the seconds, not summed from rounded parts (DATA.md)
        nights["asleep_h"].append(r(asleep_min / 60, 2))

    # Heart rate per minute: the last `hr_days` dates, with the Watch off the wrist for a while
    # every day (absent minutes, which the page must draw as gaps, never as zeros).
    hr = []
    for k in range(hr_days):
        day = end - dt.timedelta(days=hr_days - 1 - k)
        minutes, bpm = [], []
        off_from = rng.randint(7 * 60, 20 * 60)
        off_to = off_from + rng.randint(20, 90)
        level = 58.0
        for m in range(1440):
            if off_from <= m < off_to or rng.random() < 0.08:
                continue
            awake = 7 * 60 <= m < 23 * 60
            target = (76 if awake else 55) + (65 if 18 * 60 <= m < 18 * 60 + 40 and k % 2 == 0 else 0)
            level += (target - level) * 0.2 + rng.gauss(0, 2.5)
            minutes.append(m)
            bpm.append(int(round(max(40, level))))
        hr.append({"date": _iso_day(day), "minute": minutes, "bpm_max": bpm, "utc_offsets": [[0, 60]]})

    # Workouts, spread over the years, start order.
    w = {k: [] for k in (
        "id", "type", "start", "duration_s", "distance_m", "energy_kcal", "hr_avg", "hr_max", "laps", "route",
    )}
    types = [t for t, _, _ in WORKOUT_TYPES]
    weights = [p for _, p, _ in WORKOUT_TYPES]
    outdoor = {t: o for t, _, o in WORKOUT_TYPES}
    starts = sorted(
        (rng.randrange(n_days), rng.choice([6, 7, 12, 17, 18, 19]), rng.randrange(60)) for _ in range(workouts)
    )
    for offset, hour, minute in starts:
        kind = rng.choices(types, weights)[0]
        day = first + dt.timedelta(days=offset)
        start = dt.datetime.combine(day, dt.time(hour, minute))
        watch = start.date() >= watch_from
        laps = None
        route = None
        if kind == "Swimming":
            n = rng.randint(16, 64)
            open_water = rng.random() < 0.15
            if open_water:
                distance = rng.uniform(800, 2500)
                duration = distance / 1000 * rng.uniform(1500, 1900)
                route = _route(rng, distance, rng.randint(80, 200))
            else:
                laps = {"duration_s": [], "distance_m": [], "strokes": [], "style": [], "swolf": []}
                main_style = rng.choice(STYLES[:6])
                for _ in range(n):
                    style = main_style if rng.random() < 0.8 else rng.choice(STYLES)
                    secs = rng.randint(22, 48)
                    strokes = rng.randint(14, 26)
                    laps["duration_s"].append(secs)
                    laps["distance_m"].append(25)
                    laps["strokes"].append(strokes)
                    laps["style"].append(style)
                    laps["swolf"].append(r(secs + strokes + rng.random(), 1))
                distance = 25.0 * n
                duration = sum(laps["duration_s"]) + rng.randint(60, 400)
        elif kind in ("Running", "Walking", "Cycling", "Hiking"):
            speed = {"Running": 2.9, "Walking": 1.4, "Cycling": 6.5, "Hiking": 1.2}[kind]
            duration = rng.uniform(1200, 5400)
            distance = duration * speed * rng.uniform(0.85, 1.15)
            if watch and outdoor[kind] and rng.random() < 0.9:
                route = _route(rng, distance, rng.randint(150, 300))
        else:
            duration = rng.uniform(1200, 3600)
            distance = None
        energy = duration / 60 * rng.uniform(6, 12)
        w["id"].append("%08X-%04X-5%03X-8%03X-%012X" % (
            rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12), rng.getrandbits(12), rng.getrandbits(48)))
        w["type"].append(kind)
        w["start"].append(start.strftime("%Y-%m-%d %H:%M"))
        w["duration_s"].append(r(duration, 0))
        w["distance_m"].append(None if distance is None else r(distance, 1))
        w["energy_kcal"].append(r(energy, 1))
        w["hr_avg"].append(r(rng.uniform(105, 155), 1) if watch else None)
        w["hr_max"].append(r(rng.uniform(160, 185), 0) if watch else None)
        w["laps"].append(laps)
        w["route"].append(route)

    sources = ["Alex’s Apple Watch", "Alex’s iPhone", "AutoSleep", "Withings"]
    quality_types = []
    for name, samples, merged, per_source in [
        ("HeartRate", 1_840_512, False, [(0, 1.0), (3, 1.0)]),
        ("ActiveEnergyBurned", 1_022_880, True, [(0, 0.97), (1, 0.31)]),
        ("StepCount", 486_210, True, [(0, 0.92), (1, 0.38)]),
        ("DistanceWalkingRunning", 471_033, True, [(0, 0.91), (1, 0.36)]),
        ("BasalEnergyBurned", 402_117, True, [(0, 1.0)]),
        ("SleepAnalysis", 61_204, True, [(0, 0.88), (2, 0.24)]),
        ("FlightsClimbed", 31_877, True, [(1, 0.55), (0, 0.93)]),
        ("HeartRateVariabilitySDNN", 14_650, False, [(0, 1.0)]),
        ("RestingHeartRate", 2_711, False, [(0, 1.0)]),
        ("BodyMass", 803, False, [(3, 1.0), (1, 1.0)]),
    ]:
        left = samples
        src = []
        for k, (s, share) in enumerate(per_source):
            count = left if k == len(per_source) - 1 else int(samples * rng.uniform(0.55, 0.8))
            left -= count
            src.append({"name": sources[s], "samples": count, "counted_share": share if merged else None})
        quality_types.append({
            "type": name,
            "samples": samples,
            "duplicates": int(samples * rng.uniform(0, 0.02)),
            "overlapping": int(samples * rng.uniform(0.05, 0.45)) if len(per_source) > 1 else 0,
            "merged": merged,
            "sources": src,
        })
    rejected = [
        {"reason": "unparseable date", "count": 12, "examples": [
            {"line": 1_204_551 + k * 977, "element": "Record", "detail": 'startDate="2019-13-01 25:00:00 +0100"'}
            for k in range(5)]},
        {"reason": "non-numeric value", "count": 3, "examples": [
            # a detail that would end the data script if it were not escaped
            {"line": 88_123, "element": "Record", "detail": 'value="</script><!--x"'},
            {"line": 88_140, "element": "Record", "detail": 'value="n/a & <b>"'},
            {"line": 90_007, "element": "Record", "detail": 'value=""'}]},
        {"reason": "end before start", "count": 1, "examples": [
            {"line": 3_004_112, "element": "Workout", "detail": "endDate 2021-06-01 07:00:00 +0200 is before startDate"}]},
    ]
    total_samples = sum(t["samples"] for t in quality_types)
    return {
        "report_version": 1,
        "export": {
            "export_date": f"{(end + dt.timedelta(days=1)).isoformat()}T09:00:00+01:00",
            "export_version": "14",
            "locale": "en_DE",
            "first_date": _iso_day(first),
            "last_date": _iso_day(end),
            "time_zone": "Europe/Berlin",
            "time_zone_reason": "most frequent HKTimeZone metadata (41230 of 41388 votes)",
            "sources": sorted(sources),
            "devices": ["Watch", "iPhone"],
            "records": total_samples,
            "records_read": total_samples + sum(t["duplicates"] for t in quality_types),
            "duplicates": sum(t["duplicates"] for t in quality_types),
            "workouts": workouts,
            "workout_copies": 7,
            "rejected": sum(x["count"] for x in rejected),
        },
        "days": days,
        "nights": nights,
        "heart_rate": {"days_limit": hr_days, "days": hr},
        "workouts": w,
        "quality": {"types": quality_types, "rejected": rejected},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="a data JSON file to render (default: synthetic data)")
    parser.add_argument("--years", type=int, default=10)
    parser.add_argument("--workouts", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--write-data", type=Path, help="also write the data JSON here")
    parser.add_argument("--out", type=Path, required=True, help="the report.html to write")
    parser.add_argument("--screenshot", type=Path, help="also write a PNG of the top of the page here")
    parser.add_argument("--screenshot-height", type=int, default=1320, help="CSS pixels from the top (width 1280)")
    args = parser.parse_args(argv)
    text = args.data.read_text(encoding="utf-8") if args.data else dumps(synthetic(args.years, args.workouts, args.seed))
    if args.write_data:
        args.write_data.write_text(text, encoding="utf-8")
    render_file(text, args.out)
    print(f"{args.out}: {args.out.stat().st_size / 1e6:.2f} MB")
    if args.screenshot:
        from chromium import Browser  # only this option needs a browser

        with Browser(width=1280, height=900) as browser:
            page = browser.open(args.out)
            page.wait_for("document.documentElement.dataset.chartsDrawn || document.documentElement.dataset.reportError")
            if page.console_errors() or page.foreign_requests():
                raise RenderError(f"the page did not render cleanly: {page.console_errors()} {page.foreign_requests()}")
            args.screenshot.write_bytes(page.screenshot(clip_height=args.screenshot_height))
        print(f"{args.screenshot}: {args.screenshot.stat().st_size / 1e3:.0f} KB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
