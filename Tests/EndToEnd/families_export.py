"""An export holding every family the report charts beyond activity, sleep and heart, written by
this test code (not by `healthetl sample`, whose profiles other work shapes): blood pressure as
correlations whose members repeat at top level plus a lone systolic, glucose in mmol/L, Food
correlations with Dietary* members, body composition, the iPhone's mobility measures, headphone
and environmental sound, cycling distance, mindful sessions, flights and exercise minutes, and a
few types no chart draws (caffeine, water). Deterministic: the same days give the same bytes.

    python3 Tests/EndToEnd/families_export.py OUT.xml [DAYS]
"""

from __future__ import annotations

import datetime as dt
import math
import sys
from pathlib import Path

START = dt.date(2024, 1, 1)
# Types beyond the charted ones, for "Also in this export".
UNCHARTED = ("DietaryCaffeine", "DietaryWater")


def _t(day: dt.date, minutes: int) -> str:
    moment = dt.datetime.combine(day, dt.time()) + dt.timedelta(minutes=minutes)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + " +0100"


def _q(kind: str, value, unit: str, start: str, end: str | None = None, source: str = "iPhone") -> str:
    end = end or start
    return (f'<Record type="HKQuantityTypeIdentifier{kind}" sourceName="{source}" unit="{unit}" '
            f'creationDate="{end}" startDate="{start}" endDate="{end}" value="{value}"/>')


def records(days: int) -> list[str]:
    out: list[str] = []
    for n in range(days):
        day = START + dt.timedelta(days=n)
        wave = math.sin(n / 5)
        # Steps and flights, exercise minutes.
        out.append(_q("StepCount", 6000 + int(2000 * wave) + n * 10, "count", _t(day, 600), _t(day, 660)))
        out.append(_q("FlightsClimbed", 5 + n % 7, "count", _t(day, 700), _t(day, 720)))
        out.append(_q("AppleExerciseTime", 20 + n % 30, "min", _t(day, 1020), _t(day, 1080), source="Watch"))
        out.append(_q("DistanceWalkingRunning", round(4.2 + wave, 3), "km", _t(day, 600), _t(day, 660)))
        if n % 3 == 0:
            out.append(_q("DistanceCycling", round(12.5 + 3 * wave, 3), "km", _t(day, 480), _t(day, 530), source="Watch"))
        # Blood pressure: a morning correlation, its members again at top level; every fifth day a
        # lone evening systolic from another app.
        if n % 2 == 0:
            at = _t(day, 450)
            pair = [_q("BloodPressureSystolic", 118 + (n * 7) % 30, "mmHg", at, source="Omron"),
                    _q("BloodPressureDiastolic", 76 + (n * 3) % 16, "mmHg", at, source="Omron")]
            out.append(f'<Correlation type="HKCorrelationTypeIdentifierBloodPressure" sourceName="Omron" '
                       f'creationDate="{at}" startDate="{at}" endDate="{at}">')
            out += pair + ["</Correlation>"] + pair
        if n % 5 == 0:
            out.append(_q("BloodPressureSystolic", 142, "mmHg", _t(day, 1260), source="BP Log"))
        # Glucose in mmol/L (a meter's unit as exports write it).
        for minutes, level in ((420, 5.2), (780, 6.9 + wave)):
            out.append(_q("BloodGlucose", round(level, 1), "mmol&lt;180.1558800000541&gt;/L", _t(day, minutes), source="mySugr"))
        # Two meals a day as Food correlations whose members repeat at top level.
        for minutes, kcal in ((750, 640 + 40 * n % 200), (1140, 820)):
            at = _t(day, minutes)
            members = [_q("DietaryEnergyConsumed", kcal, "kcal", at, source="MyFitnessPal"),
                       _q("DietaryCarbohydrates", 70 + n % 20, "g", at, source="MyFitnessPal"),
                       _q("DietaryProtein", 30 + n % 10, "g", at, source="MyFitnessPal"),
                       _q("DietaryFatTotal", 22.5, "g", at, source="MyFitnessPal"),
                       _q("DietaryCaffeine", 95, "mg", at, source="MyFitnessPal")]
            out.append(f'<Correlation type="HKCorrelationTypeIdentifierFood" sourceName="MyFitnessPal" '
                       f'creationDate="{at}" startDate="{at}" endDate="{at}">')
            out += members + ["</Correlation>"] + members
        out.append(_q("DietaryWater", 250, "mL", _t(day, 600), source="WaterMinder"))
        # A weekly weigh-in on a smart scale.
        if n % 7 == 0:
            at = _t(day, 400)
            out += [_q("BodyMass", round(80 - n * 0.05, 2), "kg", at, source="Withings"),
                    _q("BodyFatPercentage", round(0.22 - n * 0.0003, 4), "%", at, source="Withings"),
                    _q("BodyMassIndex", round(24.7 - n * 0.015, 2), "count", at, source="Withings"),
                    _q("LeanBodyMass", round(62.4 + n * 0.01, 2), "kg", at, source="Withings")]
        # The iPhone's walking measures.
        for minutes in (540, 1110):
            at, until = _t(day, minutes), _t(day, minutes + 5)
            out += [_q("WalkingSpeed", round(1.3 + 0.1 * wave, 3), "m/s", at, until),
                    _q("WalkingStepLength", round(0.70 + 0.02 * wave, 3), "m", at, until),
                    _q("WalkingAsymmetryPercentage", round(0.02 + 0.01 * (n % 3), 3), "%", at, until),
                    _q("WalkingDoubleSupportPercentage", round(0.28 + 0.005 * (n % 4), 3), "%", at, until)]
        # Sound: an hour of headphones, environment in half-hour samples from the Watch.
        out.append(_q("HeadphoneAudioExposure", round(68 + 6 * wave, 2), "dBASPL", _t(day, 480), _t(day, 540), source="iPhone"))
        for k in range(6):
            out.append(_q("EnvironmentalAudioExposure", 55 + (k * 7 + n) % 25, "dBASPL", _t(day, 600 + 30 * k), _t(day, 630 + 30 * k), source="Watch"))
        # A short mindful session.
        if n % 2 == 1:
            out.append(f'<Record type="HKCategoryTypeIdentifierMindfulSession" sourceName="Breathe" '
                       f'creationDate="{_t(day, 1321)}" startDate="{_t(day, 1320)}" endDate="{_t(day, 1325)}" '
                       f'value="HKCategoryValueNotApplicable"/>')
    return out


def write(path: Path, days: int = 60) -> Path:
    end = START + dt.timedelta(days=days + 1)
    text = ('<?xml version="1.0" encoding="UTF-8"?>\n<HealthData locale="en_DE">\n'
            f' <ExportDate value="{end.isoformat()} 09:00:00 +0100"/>\n '
            + "\n ".join(records(days)) + "\n</HealthData>\n")
    path.write_text(text, encoding="utf-8")
    return path


if __name__ == "__main__":
    write(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 60)
