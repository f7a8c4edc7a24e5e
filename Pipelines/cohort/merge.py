"""The cohort merge: every participant's tables into one Hive-partitioned Parquet dataset.

Reads the status file of every current participant and includes those whose status is `ok`
(`bad_input`, `timed_out` and `cancelled` participants are reported and left out). Per table, the
files a glob of the config names, among the files the participant's own `run.json` lists (so
leftovers of an older pipeline never sneak in), become `<table>/participant=<id>/data_0.parquet`.
Only participants that are new or changed since the published version are read; the others'
partition files are hard links to those of the previous version, unless the table's columns
changed (a new column, a wider type), when they are rewritten from their Parquet to match. Every
file of a table has one schema, recorded in `run.json` with every participant's status and the
totals. The new version is built in `.cohort/merged/<version>.tmp/`; `cohort` is a symbolic link
that is replaced in one rename, so a reader that resolves it sees the old night or the new one.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cohortlib  # noqa: E402

# Text columns keep instants as written (ISO 8601 with the run zone's offset: Parquet timestamps
# cannot hold an offset, so a cast would lose the local clock time); dates, clock times, numbers
# and booleans get their types. Cast with `::timestamptz` where an instant is wanted.
CSV_TYPES = ["BOOLEAN", "BIGINT", "DOUBLE", "DATE", "TIME", "TIMESTAMP", "VARCHAR"]
FILE_COLUMN = "__healthetl_cohort_file"
LAYOUT = "hive-participant-1"  # how a version's files are laid out; another layout is never reused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--participants", required=True, help="file with one participant id per line")
    parser.add_argument("--tables", required=True, help="JSON object: table name -> file glob")
    parser.add_argument("--marker", required=True, help="the file Snakemake tracks for this step")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--memory-mb", type=int, default=2048)
    args = parser.parse_args(argv)
    root = Path.cwd()  # OUT: Snakemake runs every job there
    ids = [line.strip() for line in Path(args.participants).read_text().splitlines() if line.strip()]
    summary = merge(root, ids, json.loads(args.tables), threads=args.threads, memory_mb=args.memory_mb)
    cohortlib.write_atomic(args.marker, json.dumps(summary, indent=1) + "\n")
    totals = summary["totals"]
    print(
        f"cohort: {totals['included']} of {totals['participants']} participants merged "
        f"({totals['ok']} new or changed, {totals['unchanged']} unchanged, {totals['bad_input']} bad input, "
        f"{totals['timed_out']} timed out) "
        f"into {root / 'cohort'} in {summary['seconds']} s"
    )
    return 0


def merge(root: Path, ids: list[str], tables: dict[str, str], *, threads: int, memory_mb: int) -> dict:
    import duckdb  # the workflow's pinned environment; imported here so --help works without it

    started = time.monotonic()
    state = root / cohortlib.STATE_DIR
    versions = state / "merged"
    versions.mkdir(parents=True, exist_ok=True)
    for leftover in [*versions.glob("*.tmp"), *versions.glob("*.trash")]:
        shutil.rmtree(leftover, ignore_errors=True)  # a merge killed before publishing

    previous_dir = (root / "cohort").resolve() if (root / "cohort").is_symlink() else None
    previous = cohortlib.load_json(previous_dir / "run.json") if previous_dir else None
    previous = previous or {}
    previous_tokens = {p["participant"]: p.get("token") for p in previous.get("participants", [])}
    # Partitions of the previous version can be taken over only when they were written the same way.
    reusable = previous.get("layout") == LAYOUT and previous.get("table_globs") == tables
    previous_rows = {
        p["participant"]: p.get("rows", {})
        for p in previous.get("participants", [])
        if reusable and p.get("status") in ("ok", "unchanged")
    }

    entries = []
    included: list[str] = []
    fresh: list[str] = []  # included participants whose files are read tonight
    for pid in ids:
        status = cohortlib.load_json(state / "status" / f"{pid}.json")
        if status is None:
            raise SystemExit(f"cohort: no status for participant {pid}: {state / 'status' / (pid + '.json')}")
        entry = {
            "participant": pid,
            "status": status["status"],
            "changed": previous_tokens.get(pid) != status["token"],
            "exit_code": status["exit_code"],
            "message": status["message"],
            "sha256": status["sha256"],
            "processed": status["finished"],
            "seconds": status["seconds"],
            "tries": status.get("tries", 1),
            "token": status["token"],
        }
        if status["status"] == "ok":
            if not entry["changed"]:
                entry["status"] = "unchanged"
            run = cohortlib.load_json(root / "participants" / pid / "run.json") or {}
            entry["time_zone"] = run.get("timeZone")
            entry["export_date"] = run.get("exportDate")
            entry["first"] = run.get("first")
            entry["last"] = run.get("last")
            included.append(pid)
            if entry["changed"] or pid not in previous_rows:
                fresh.append(pid)
        entries.append(entry)
    kept = [pid for pid in included if pid not in fresh]  # their partitions come from the previous version

    files_by_table = match_tables(root, fresh, tables)

    version = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]
    staging = versions / f"{version}.tmp"
    staging.mkdir()
    spill = state / "duckdb-tmp"
    con = duckdb.connect()
    con.execute(f"SET threads = {max(1, threads)}")
    # Leave room for Python and the Parquet writer's buffers inside the job's memory request.
    con.execute(f"SET memory_limit = '{max(256, int(memory_mb * 0.7))}MB'")
    con.execute(f"SET temp_directory = '{sql_text(str(spill))}'")
    con.execute("SET preserve_insertion_order = true")  # rows stay in the order of each file

    prefix = str(root / "participants") + "/"
    participant = f"split_part(substr({FILE_COLUMN}, {len(prefix) + 1}), '/', 1)"
    table_info = {}
    rows_by_participant: dict[str, dict[str, int]] = {pid: {} for pid in included}
    old_tables = previous.get("tables", {}) if reusable else {}
    for table in sorted(set(files_by_table) | {t for t in old_tables if any(t in previous_rows[p] for p in kept)}):
        target = staging / table
        old = old_tables.get(table) or {}
        old_columns = [tuple(c) for c in old.get("columns", [])]
        old_nulls = set(old.get("null_columns", []))
        carried = [pid for pid in kept if previous_rows[pid].get(table)]
        if not carried:
            old_columns, old_nulls = [], set()
        new_columns: list[tuple[str, str]] = []
        new_nulls: set[str] = set()
        new_counts: dict[str, int] = {}
        source = read_source(con, [path for _, path in files_by_table[table]], table) if table in files_by_table else None
        if source is not None:
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE fresh AS SELECT {participant} AS participant, "
                f"* EXCLUDE ({FILE_COLUMN}) FROM {source}"
            )
            described = con.execute("DESCRIBE fresh").fetchall()
            new_columns = [(name, kind) for name, kind, *_ in described if name != "participant"]
            if new_columns:
                counts = con.execute(
                    "SELECT " + ", ".join(f"count({quote(name)})" for name, _ in new_columns) + " FROM fresh"
                ).fetchone()
                new_nulls = {name for (name, _), count in zip(new_columns, counts) if count == 0}
            new_counts = dict(con.execute("SELECT participant, count(*) FROM fresh GROUP BY 1").fetchall())
        columns, nulls = unite(old_columns, old_nulls, new_columns, new_nulls)
        if not columns or (not new_counts and not carried):
            table_info[table] = {"path": None, "rows": 0, "participants": 0, "columns": [], "null_columns": []}
            continue
        target.mkdir(parents=True)
        if carried and columns == old_columns:
            for pid in carried:  # unchanged: the same file, one more name for it
                link_partition(previous_dir / table, target, pid)
        elif carried:
            # A column is new or wider than before: the carried partitions are rewritten to match.
            paths = "[" + ", ".join(f"'{sql_text(str(previous_dir / table / partition_name(p)))}/*.parquet'" for p in carried) + "]"
            old_source = f"read_parquet({paths}, hive_partitioning = true, hive_types = {{'participant': VARCHAR}}, union_by_name = true)"
            write_partitions(con, old_source, dict(old_columns), columns, target, staging)
        if new_counts:
            write_partitions(con, "fresh", dict(new_columns), columns, target, staging)
        counts = {pid: previous_rows[pid][table] for pid in carried} | new_counts
        for pid, count in counts.items():
            rows_by_participant[pid][table] = count
        table_info[table] = {
            "path": f"{table}/",
            "rows": sum(counts.values()),
            "participants": len(counts),
            "columns": [list(c) for c in columns],
            "null_columns": sorted(nulls),
        }
    con.close()
    shutil.rmtree(spill, ignore_errors=True)

    for entry in entries:
        if entry["participant"] in rows_by_participant:
            entry["rows"] = dict(sorted(rows_by_participant[entry["participant"]].items()))
    totals = {
        "participants": len(entries),
        "included": len(included),
        "ok": sum(1 for e in entries if e["status"] == "ok"),
        "unchanged": sum(1 for e in entries if e["status"] == "unchanged"),
        "bad_input": sum(1 for e in entries if e["status"] == "bad_input"),
        "timed_out": sum(1 for e in entries if e["status"] == cohortlib.TIMED_OUT),
        "cancelled": sum(1 for e in entries if e["status"] == cohortlib.CANCELLED),
        "rows": {table: info["rows"] for table, info in sorted(table_info.items())},
    }
    summary = {
        "version": version,
        "layout": LAYOUT,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "totals": totals,
        "table_globs": tables,
        "tables": dict(sorted(table_info.items())),
        "participants": entries,
        "written": {"participants_read": len(fresh), "participants_linked": len(kept)},
        "seconds": round(time.monotonic() - started, 3),
    }
    cohortlib.write_atomic(staging / "run.json", json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    publish(root, versions, staging, version, previous_dir)
    return {"version": version, "totals": totals, "seconds": summary["seconds"], "written": summary["written"]}


def unite(old: list[tuple[str, str]], old_nulls: set[str], new: list[tuple[str, str]], new_nulls: set[str]):
    """One table's columns after tonight: the previous ones in their order, then new ones in the
    order they appear; each column's type the narrowest that holds both sides' values (a column
    empty on one side takes the other's type). Returns the columns and those empty everywhere."""
    united = dict(old)
    nulls = set(old_nulls) | {name for name, _ in new if name in new_nulls and name not in united}
    for name, kind in new:
        if name in new_nulls:
            united.setdefault(name, kind)
            continue
        if name not in united or name in nulls:
            united[name] = kind
            nulls.discard(name)
        else:
            united[name] = wider(united[name], kind)
    return list(united.items()), {n for n in nulls if n in united}


def wider(a: str, b: str) -> str:
    if a == b:
        return a
    if {a, b} == {"BIGINT", "DOUBLE"}:
        return "DOUBLE"
    if {a, b} == {"DATE", "TIMESTAMP"}:
        return "TIMESTAMP"
    return "VARCHAR"


def write_partitions(con, source: str, have: dict[str, str], columns: list[tuple[str, str]], target: Path, staging: Path) -> None:
    """Writes `source`'s rows as `target/participant=<id>/data_0.parquet`, cast to `columns`."""
    select = ", ".join(
        (quote(name) if have.get(name) == kind else f"CAST({quote(name)} AS {kind}) AS {quote(name)}")
        if name in have
        else f"CAST(NULL AS {kind}) AS {quote(name)}"
        for name, kind in columns
    )
    scratch = staging / f".write-{uuid.uuid4().hex[:8]}"
    con.execute(
        f"COPY (SELECT participant, {select} FROM {source}) TO '{sql_text(str(scratch))}' "
        "(FORMAT parquet, COMPRESSION zstd, PARTITION_BY (participant))"
    )
    for folder in scratch.iterdir():
        os.rename(folder, target / folder.name)
    scratch.rmdir()


def partition_name(pid: str) -> str:
    return f"participant={pid}"


def link_partition(old_table: Path, target: Path, pid: str) -> None:
    folder = target / partition_name(pid)
    folder.mkdir()
    for file in (old_table / partition_name(pid)).iterdir():
        os.link(file, folder / file.name)


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def match_tables(root: Path, included: list[str], tables: dict[str, str]) -> dict[str, list[tuple[str, str]]]:
    """Table name → [(participant, absolute file)], in participant order.

    A glob may hold one `*`; the table name's `{name}` then takes what it matched, so
    `stats/{name}: stats/*.csv` makes one table per statistics job."""
    patterns = []
    for name, glob in tables.items():
        if glob.count("*") > 1 or ("{name}" in name) != ("*" in glob):
            raise SystemExit(f"cohort: table '{name}: {glob}': use one '*' in the file and '{{name}}' in the table, or neither")
        regex = re.compile("^" + re.escape(glob).replace(r"\*", "([^/]+)") + "$")
        patterns.append((name, regex))
    found: dict[str, list[tuple[str, str]]] = {}
    for pid in included:
        run = cohortlib.load_json(root / "participants" / pid / "run.json") or {}
        outputs = [o["path"] for o in run.get("outputs", []) if isinstance(o, dict) and "path" in o]
        for name, regex in patterns:
            for path in outputs:
                match = regex.match(path)
                if not match:
                    continue
                table = name.replace("{name}", match.group(1)) if match.groups() else name
                absolute = root / "participants" / pid / path
                if absolute.exists():
                    found.setdefault(table, []).append((pid, str(absolute)))
    return dict(sorted(found.items()))


def read_source(con, paths: list[str], table: str) -> str | None:
    """A DuckDB table function reading every file of one table, columns united by name."""
    listed = "[" + ", ".join(f"'{sql_text(p)}'" for p in paths) + "]"
    if all(p.endswith(".csv") for p in paths):
        candidates = "[" + ", ".join(f"'{t}'" for t in CSV_TYPES) + "]"
        return (
            f"read_csv({listed}, header = true, delim = ',', quote = '\"', escape = '\"', "
            f"encoding = 'utf-8', union_by_name = true, sample_size = -1, "
            f"auto_type_candidates = {candidates}, filename = '{FILE_COLUMN}')"
        )
    if all(p.endswith(".json") for p in paths):
        # Types from the JSON values themselves: strings stay strings (a server record's
        # recordUuid is not turned into a lower-case UUID, nor recordDate into a date).
        structure = con.execute(
            f"SELECT json_group_structure(json) FROM read_json_objects({listed}, format = 'array')"
        ).fetchone()[0]
        if structure is None:
            return None  # every file is an empty array: nothing to type, nothing to write
        columns = json.loads(structure)
        if not isinstance(columns, dict):
            raise SystemExit(f"cohort: table {table}: expected JSON arrays of objects")
        types = {key: json_column_type(kind) for key, kind in columns.items()}
        spec = "{" + ", ".join(f"'{sql_text(k)}': '{v}'" for k, v in types.items()) + "}"
        return f"read_json({listed}, format = 'array', columns = {spec}, filename = '{FILE_COLUMN}')"
    raise SystemExit(f"cohort: table {table}: its files must all be .csv or all .json: {paths[:3]}")


def json_column_type(kind) -> str:
    if isinstance(kind, str):
        return {"UBIGINT": "BIGINT", "NULL": "VARCHAR"}.get(kind, kind)
    return "JSON"  # nested objects and arrays stay JSON text


def publish(root: Path, versions: Path, staging: Path, version: str, previous: Path | None) -> None:
    """Swaps the new version in, then removes every version but it and `previous` (the one the
    link named until now), for readers still holding that one. Kept by what the link named, not
    by name order: two merges in one second have names that do not sort by time."""
    final = versions / version
    os.rename(staging, final)
    link = root / "cohort"
    keep = {version} | ({previous.name} if previous is not None else set())
    if link.exists() and not link.is_symlink():
        # A real folder (copied in, or from an older layout): keep it as a version.
        os.rename(link, versions / f"{version}-previous-folder")
        keep.add(f"{version}-previous-folder")
    temporary = root / f".cohort-link-{uuid.uuid4().hex[:8]}"
    os.symlink(os.path.relpath(final, root), temporary)
    os.replace(temporary, link)  # the one atomic step readers can observe
    fsync_dir(root)
    for old in [p for p in versions.iterdir() if p.is_dir() and not p.name.endswith((".tmp", ".trash"))]:
        if old.name in keep:
            continue
        # Out of readers' sight in one rename before it is emptied: a reader still listing an old
        # version finds all of its files or none (an error), never some of them.
        trash = versions / f"{old.name}.trash"
        os.rename(old, trash)
        shutil.rmtree(trash, ignore_errors=True)


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sql_text(text: str) -> str:
    return text.replace("'", "''")


if __name__ == "__main__":
    sys.exit(main())
