"""The cohort merge: every participant's tables into one Parquet file per table, published at once.

Reads the status file of every current participant, merges the outputs of those whose status is
`ok` (per table: every file a glob of the config names, among the files the participant's own
`run.json` lists, so leftovers of an older pipeline never sneak in; `bad_input` and `timed_out`
participants are reported and left out), adds a leading
`participant` column, and writes `cohort/run.json` with every participant's status and the
totals. The new dataset is built in `.cohort/merged/<version>/`; `cohort` is a symbolic link
that is replaced in one rename, so a reader sees the old dataset or the new one, never a mix.
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
KEEP_VERSIONS = 2  # the current dataset and the one before it, for readers still holding it


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
    for leftover in versions.glob("*.tmp"):
        shutil.rmtree(leftover, ignore_errors=True)  # a merge killed before publishing

    previous = cohortlib.load_json(root / "cohort" / "run.json") or {}
    previous_tokens = {p["participant"]: p.get("token") for p in previous.get("participants", [])}

    entries = []
    included: list[str] = []
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
        entries.append(entry)

    files_by_table = match_tables(root, included, tables)

    version = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]
    staging = versions / f"{version}.tmp"
    staging.mkdir()
    spill = state / "duckdb-tmp"
    con = duckdb.connect()
    con.execute(f"SET threads = {max(1, threads)}")
    # Leave room for Python and the Parquet writer's buffers inside the job's memory request.
    con.execute(f"SET memory_limit = '{max(256, int(memory_mb * 0.7))}MB'")
    con.execute(f"SET temp_directory = '{sql_text(str(spill))}'")
    con.execute("SET preserve_insertion_order = true")  # rows stay in participant, then file order

    prefix = str(root / "participants") + "/"
    table_info = {}
    rows_by_participant: dict[str, dict[str, int]] = {pid: {} for pid in included}
    for table, files in files_by_table.items():
        target = staging / f"{table}.parquet"
        target.parent.mkdir(parents=True, exist_ok=True)
        paths = [path for _, path in files]
        participant = f"split_part(substr({FILE_COLUMN}, {len(prefix) + 1}), '/', 1)"
        # Every file is sniffed whole: DuckDB casts '0.5' to a BIGINT column as 1 without an
        # error, so a column typed from a sample could silently round values past the sample.
        source = read_source(con, paths, table)
        if source is None:
            table_info[table] = {"file": None, "rows": 0, "participants": 0, "columns": []}
            continue
        con.execute(
            f"COPY (SELECT {participant} AS participant, * EXCLUDE ({FILE_COLUMN}) FROM {source}) "
            f"TO '{sql_text(str(target))}' (FORMAT parquet, COMPRESSION zstd)"
        )
        counts = dict(
            con.execute(
                f"SELECT participant, count(*) FROM read_parquet('{sql_text(str(target))}') GROUP BY participant"
            ).fetchall()
        )
        for pid, count in counts.items():
            rows_by_participant[pid][table] = count
        columns = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{sql_text(str(target))}')").fetchall()
        table_info[table] = {
            "file": f"{table}.parquet",
            "rows": sum(counts.values()),
            "participants": len(counts),
            "columns": [[name, kind] for name, kind, *_ in columns],
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
        "rows": {table: info["rows"] for table, info in sorted(table_info.items())},
    }
    summary = {
        "version": version,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "totals": totals,
        "tables": dict(sorted(table_info.items())),
        "participants": entries,
        "seconds": round(time.monotonic() - started, 3),
    }
    cohortlib.write_atomic(staging / "run.json", json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    publish(root, versions, staging, version)
    return {"version": version, "totals": totals, "seconds": summary["seconds"]}


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


def publish(root: Path, versions: Path, staging: Path, version: str) -> None:
    final = versions / version
    os.rename(staging, final)
    link = root / "cohort"
    if link.exists() and not link.is_symlink():
        # A real folder (copied in, or from an older layout): keep it as a version.
        os.rename(link, versions / f"{version}-previous-folder")
    temporary = root / f".cohort-link-{uuid.uuid4().hex[:8]}"
    os.symlink(os.path.relpath(final, root), temporary)
    os.replace(temporary, link)  # the one atomic step readers can observe
    fsync_dir(root)
    kept = sorted((p for p in versions.iterdir() if p.is_dir() and not p.name.endswith(".tmp")), reverse=True)
    for old in kept[KEEP_VERSIONS:]:
        shutil.rmtree(old, ignore_errors=True)


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
