#!/usr/bin/env python3
"""Compare two output snapshots (`/work/baseline/snapshot.sh` folders, or any two output folders
with the same layout) and check that every value that changed moved by no more than half a unit
of its column's stated precision.

    compare_snapshots.py HEALTHETL_BINARY OLD NEW

The stated precisions come from the binary itself (`healthetl pipelines tables`, the blocks that
`make docs` puts into Pipelines/README.md): a column's `0.001` allows 0.0005, `15 significant
digits` half a unit in the 15th digit, `by unit` (statistics values) the unit's row of the
precision table. Text must be equal; columns may be added (reported by name), never removed; row
counts must match. `run.json` is compared without sizes and timings. Prints the kinds of
differences with counts and examples; exits 1 on any violation.
"""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

# Canonical units of the types the shipped pipelines' statistics jobs ask for.
STATISTICS_UNITS = {
    "HeartRate": "count/min", "RestingHeartRate": "count/min", "WalkingHeartRateAverage": "count/min",
    "RespiratoryRate": "count/min", "StepCount": "count", "FlightsClimbed": "count", "SwimmingStrokeCount": "count",
    "DistanceWalkingRunning": "m", "DistanceSwimming": "m", "ActiveEnergyBurned": "kcal", "BasalEnergyBurned": "kcal",
    "HeartRateVariabilitySDNN": "ms", "AppleExerciseTime": "s", "BodyMass": "kg", "VO2Max": "other",
}


# The nightly delivery state (Pipelines/docs/nightly.md, "Runs and the nightly batch") is compared as
# its own files: its format is versioned separately from the tables.
DELIVERY_STATE = {
    ".healthetl-state.json": "delivery state file (format versioned on its own)",
    ".healthetl-emitted": "delivery state: emitted record ids (format versioned on its own)",
}


def read_docs(binary: str):
    text = subprocess.run([binary, "pipelines", "tables"], check=True, capture_output=True, text=True).stdout
    tables: dict[str, dict[str, str]] = {}
    units: dict[str, tuple[str, str]] = {}
    for block_id, body in re.findall(r"<!-- generated: (\S+) .*?-->(.*?)<!-- end generated -->", text, re.S):
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in body.splitlines()
                if line.startswith("| ") and not line.startswith("| column") and not line.startswith("| unit")]
        if block_id == "precision":
            for row in rows:
                units[row[0].strip("`") if row[0] != "any other" else "other"] = (row[1], row[2])
        elif block_id != "units":
            tables[block_id] = {row[0].strip("`"): row[3] for row in rows}
    return tables, units


def table_of(relative: str) -> str | None:
    name = relative.split("/")[-1]
    if relative.startswith("stats/"):
        return "statistics.buckets"
    if relative.startswith("samples/") or name.startswith("samples"):
        return "samples.samples"
    if relative.startswith("elements/"):
        return "elements.elements"
    return {
        "sleep_daily.csv": "sleep.daily", "sleep_sessions.csv": "sleep.sessions", "workouts.csv": "workouts.workouts",
        "workouts.json": "workouts.workouts", "swim_laps.csv": "workouts.laps", "daily.csv": "daily.daily",
        "workout_records.json": "workouts.records", "workout_records.new.json": "workouts.records",
    }.get(name)


def allowed(precision: str, old: Decimal) -> Decimal | None:
    """Half a unit of `precision` at `old`; None when the column must not change."""
    if re.fullmatch(r"[0-9.]+", precision):
        return Decimal(precision) / 2
    match = re.fullmatch(r"(\d+) significant digits", precision)
    if match:
        if old == 0:
            return Decimal(0)
        return Decimal(5).scaleb(old.adjusted() - int(match[1]))
    return None


def number(text) -> Decimal | None:
    """The exact decimal a cell's text (or a JSON number, read as Decimal) stands for."""
    if isinstance(text, bool) or text is None:
        return None
    if isinstance(text, (int, Decimal)):
        return Decimal(text)
    return Decimal(text) if re.fullmatch(r"-?[0-9.]+(e-?\d+)?", text) else None


def rows_of(path: Path):
    if path.suffix == ".csv":
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
            return (list(rows[0].keys()) if rows else next(csv.reader(io.StringIO(path.read_text()))) if
                    path.stat().st_size else []), rows
    data = json.loads(path.read_text(), parse_float=Decimal)
    if isinstance(data, dict):
        data = data.get("records", [])
    return (list(data[0].keys()) if data else []), data


def main() -> int:
    binary, old_root, new_root = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    tables, units = read_docs(binary)
    kinds: Counter = Counter()
    examples: dict[str, list[str]] = defaultdict(list)
    violations: list[str] = []
    worst: dict[str, Decimal] = defaultdict(Decimal)
    worst_example: dict[str, str] = {}

    def note(kind: str, example: str):
        kinds[kind] += 1
        if len(examples[kind]) < 3:
            examples[kind].append(example)

    old_files = {p.relative_to(old_root).as_posix() for p in old_root.rglob("*") if p.is_file()}
    new_files = {p.relative_to(new_root).as_posix() for p in new_root.rglob("*") if p.is_file()}
    for path in sorted(new_files - old_files):
        note("file only in new: " + path.split("/", 1)[-1], path)
    for path in sorted(old_files - new_files):
        violations.append(f"{path}: missing in the new snapshot")
    for relative in sorted(old_files & new_files):
        old_path, new_path = old_root / relative, new_root / relative
        if old_path.read_bytes() == new_path.read_bytes():
            continue
        name = relative.split("/", 1)[-1]
        if name in DELIVERY_STATE:
            note(f"{name}: {DELIVERY_STATE[name]}", relative)
            continue
        if relative.endswith(".stderr"):
            violations.append(f"{relative}: differs")
            continue
        if name == "run.json":
            old, new = json.loads(old_path.read_text()), json.loads(new_path.read_text())
            for key in sorted(set(old) | set(new)):
                if key == "outputs":
                    old_rows = {o["path"]: o["rows"] for o in old[key]}
                    new_rows = {o["path"]: o["rows"] for o in new[key]}
                    for path, rows in old_rows.items():
                        if new_rows.get(path) != rows:
                            violations.append(f"{relative}: rows of {path} {rows} -> {new_rows.get(path)}")
                    for path in sorted(set(new_rows) - set(old_rows)):
                        note("run.json lists a new output", f"{relative}: {path}")
                    if any(o["bytes"] != n["bytes"] for o in old[key] for n in new[key] if o["path"] == n["path"]):
                        note("run.json: output sizes", relative)
                elif key not in old:
                    note(f"run.json: new key {key}", relative)
                elif key in ("newWorkoutRecords", "delta") and old.get(key) is None:
                    note(f"run.json: {key} now set (a delta is written)", relative)
                elif old.get(key) != new.get(key):
                    violations.append(f"{relative}: {key} differs")
            continue
        table = table_of(name)
        if table is None:
            violations.append(f"{relative}: differs and has no declared table")
            continue
        old_columns, old_rows = rows_of(old_path)
        new_columns, new_rows = rows_of(new_path)
        added = [c for c in new_columns if c not in old_columns]
        removed = [c for c in old_columns if c not in new_columns]
        if added:
            note("columns added: " + ", ".join(added), relative)
        if removed:
            violations.append(f"{relative}: columns removed: {removed}")
        if len(old_rows) != len(new_rows):
            violations.append(f"{relative}: {len(old_rows)} rows -> {len(new_rows)}")
            continue
        precisions = tables.get(table, {})
        for index, (old, new) in enumerate(zip(old_rows, new_rows)):
            for column in old_columns:
                a, b = old.get(column), new.get(column)
                if a == b:
                    continue
                x, y = number(a), number(b)
                precision = precisions.get(column, "")
                if precision == "by unit":
                    unit = STATISTICS_UNITS.get(new.get("type", ""), "other")
                    values, sums = units.get(unit, units["other"])
                    precision = sums if column == "sum" else values
                limit = allowed(precision, x) if x is not None else None
                where = f"{relative} row {index + 2} {column}: {a!r} -> {b!r} (precision {precision or 'none'})"
                if x is None or y is None or limit is None:
                    violations.append(where)
                elif abs(x - y) > limit:
                    violations.append(where + f", moved {abs(x - y):.3g} > {limit:.3g}")
                else:
                    note(f"{table}.{column}: rounded to {precision}", where)
                    fraction = abs(x - y) / limit if limit else 0
                    if fraction > worst[f"{table}.{column}"]:
                        worst[f"{table}.{column}"] = fraction
                        worst_example[f"{table}.{column}"] = where
    for kind, count in sorted(kinds.items()):
        print(f"{count:8d}  {kind}")
        for example in examples[kind]:
            print(f"          e.g. {example}")
    if worst:
        print("largest move as a fraction of half the stated precision:")
        for column, fraction in sorted(worst.items()):
            print(f"          {column}: {fraction:.3f}  ({worst_example.get(column, '')})")
    for violation in violations[:40]:
        print("VIOLATION", violation)
    print(f"{len(violations)} violations")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
