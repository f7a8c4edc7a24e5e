"""The cohort merge: every participant's tables into one Hive-partitioned Parquet dataset.

Reads the status file of every current participant and includes those whose status is `ok`
(`bad_input`, `timed_out` and `cancelled` participants are reported and left out). Per table, the
files a glob of the config names, among the files the participant's own `run.json` lists (so
leftovers of an older pipeline never sneak in), become `<table>/participant=<id>/data_0.parquet`.

Types come from the declarations, never from the text: every participant's run writes
`health.sqlite`, whose `columns` table gives each column's kind, and its `metadata.json` names
the file each table of the database holds (`source`); files the database leaves out (an elements
job's, whose columns are the attributes found) take the kinds `config.yaml` gives for them. A
partition has the columns of its participant's file, each with its declared type, whether or
not a value is there. So a participant never changes another's files: only participants that are
new or changed since the published version are read, and every other partition file is a hard
link to that of the previous version. Readers unite a table's partitions by name (DuckDB's
`union_by_name`); `<table>/_common_metadata` holds the table's united schema, as a Parquet footer
without rows, for readers that take a schema (pyarrow). `run.json` records the tables, every
participant's status and the totals. The new version is built in `.cohort/merged/<version>.tmp/`;
`cohort` is a symbolic link that is replaced in one rename, so a reader that resolves it sees the
old night or the new one.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import re
import shutil
import sqlite3
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cohortlib  # noqa: E402

# A declared kind → its DuckDB (and Parquet) type. Instants stay text as written (ISO 8601 with
# the run zone's offset): a Parquet timestamp cannot hold an offset, so a cast would lose the
# participant's local clock time; `::timestamptz` gives the instant where one is wanted. Local
# clock times (`YYYY-MM-DD HH:MM[:SS]`, no offset) are TIMESTAMP. A kind this merge does not know
# (from a later HealthETL) stays text, as written.
KIND_TYPES = {
    "text": "VARCHAR",
    "integer": "BIGINT",
    "number": "DOUBLE",
    "boolean": "BOOLEAN",
    "date": "DATE",
    "instant": "VARCHAR",
    "local time": "TIMESTAMP",
    "local minute": "TIMESTAMP",
}
UNIX_SECONDS = "unix seconds"  # health.sqlite's `<instant>_unix` columns; no CSV has them
DATABASE = "health.sqlite"
DATABASE_METADATA = "metadata.json"
SCHEMA_FILE = "_common_metadata"  # the Parquet convention: a footer with the schema, no rows
FILE_COLUMN = "__healthetl_cohort_file"
LAYOUT = "hive-participant-2"  # how a version's files are laid out; another layout is never reused


class MergeError(Exception):
    """A participant's outputs cannot be typed; the merge stops with this one line."""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--participants", required=True, help="file with one participant id per line")
    parser.add_argument("--tables", required=True, help="JSON object: table name -> file glob")
    parser.add_argument(
        "--kinds", default="{}", help="JSON object: file glob -> {column or '*': kind}, for files health.sqlite leaves out"
    )
    parser.add_argument("--marker", required=True, help="the file Snakemake tracks for this step")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--memory-mb", type=int, default=2048)
    args = parser.parse_args(argv)
    root = Path.cwd()  # OUT: Snakemake runs every job there
    ids = [line.strip() for line in Path(args.participants).read_text().splitlines() if line.strip()]
    try:
        summary = merge(
            root, ids, json.loads(args.tables), kinds_outside_database=json.loads(args.kinds),
            threads=args.threads, memory_mb=args.memory_mb,
        )  # fmt: skip
    except MergeError as error:
        print(f"cohort: {error}", file=sys.stderr)
        return 65
    cohortlib.write_atomic(args.marker, json.dumps(summary, indent=1) + "\n")
    totals = summary["totals"]
    print(
        f"cohort: {totals['included']} of {totals['participants']} participants merged "
        f"({totals['ok']} new or changed, {totals['unchanged']} unchanged, {totals['bad_input']} bad input, "
        f"{totals['timed_out']} timed out) "
        f"into {root / 'cohort'} in {summary['seconds']} s"
    )
    return 0


def merge(
    root: Path, ids: list[str], tables: dict[str, str], *, kinds_outside_database: dict | None = None,
    threads: int, memory_mb: int,
) -> dict:  # fmt: skip
    import duckdb  # the workflow's pinned environment; imported here so --help works without it

    kinds_outside_database = kinds_outside_database or {}
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
    reusable = not reads_everyone(previous, tables, kinds_outside_database)
    previous_included = {
        p["participant"]: p
        for p in previous.get("participants", [])
        if reusable and p.get("status") in ("ok", "unchanged")
    }
    previous_rows = {pid: p.get("rows", {}) for pid, p in previous_included.items()}

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

    # Each fresh participant's files, grouped by format, columns and declared types: one read and
    # one write per group, and each partition gets exactly its own participant's columns.
    groups_by_table = fresh_files(root, fresh, tables, kinds_outside_database)

    version = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:8]
    staging = versions / f"{version}.tmp"
    staging.mkdir()
    old_tables = previous.get("tables", {}) if reusable else {}
    try:
        table_info, rows_by_participant, schema_of = write_tables(
            duckdb.connect(), root, staging, included=included, kept=kept, groups_by_table=groups_by_table,
            previous_dir=previous_dir, previous_included=previous_included, old_tables=old_tables,
            threads=threads, memory_mb=memory_mb,
        )  # fmt: skip
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)  # nothing of a merge that stopped is left
        raise

    for entry in entries:
        pid = entry["participant"]
        if pid in rows_by_participant:
            entry["rows"] = dict(sorted(rows_by_participant[pid].items()))
            other = {
                table: table_info[table]["_index"][schema]
                for table, schema in sorted(schema_of[pid].items())
                if table_info[table]["_index"][schema] != 0
            }
            if other:
                entry["schemas"] = other
    for info in table_info.values():
        info.pop("_index", None)
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
        "kinds_outside_database": kinds_outside_database,
        "tables": dict(sorted(table_info.items())),
        "participants": entries,
        "written": {"participants_read": len(fresh), "participants_linked": len(kept)},
        "seconds": round(time.monotonic() - started, 3),
    }
    cohortlib.write_atomic(staging / "run.json", json.dumps(summary, indent=1, ensure_ascii=False) + "\n")
    publish(root, versions, staging, version, previous_dir)
    return {"version": version, "totals": totals, "seconds": summary["seconds"], "written": summary["written"]}


def write_tables(
    con, root: Path, staging: Path, *, included: list[str], kept: list[str], groups_by_table: dict,
    previous_dir: Path | None, previous_included: dict[str, dict], old_tables: dict, threads: int, memory_mb: int,
) -> tuple[dict, dict[str, dict[str, int]], dict[str, dict[str, tuple]]]:  # fmt: skip
    """Every table's partitions in `staging`: the fresh participants' files read and written by
    groups, the kept participants' linked from the previous version; each table's `_common_metadata`.
    Returns the tables' entries of run.json, the rows and the schema of each participant's partitions."""
    previous_rows = {pid: previous_included[pid].get("rows", {}) for pid in kept}
    spill = root / cohortlib.STATE_DIR / "duckdb-tmp"
    con.execute(f"SET threads = {max(1, threads)}")
    # Leave room for Python and the Parquet writer's buffers inside the job's memory request.
    con.execute(f"SET memory_limit = '{max(256, int(memory_mb * 0.7))}MB'")
    con.execute(f"SET temp_directory = '{sql_text(str(spill))}'")
    con.execute("SET preserve_insertion_order = true")  # rows stay in the order of each file

    prefix = str(root / "participants") + "/"
    participant = f"split_part(substr({FILE_COLUMN}, {len(prefix) + 1}), '/', 1)"
    table_info = {}
    rows_by_participant: dict[str, dict[str, int]] = {pid: {} for pid in included}
    schema_of: dict[str, dict[str, tuple]] = {pid: {} for pid in included}  # participant → table → columns
    for table in sorted(set(groups_by_table) | {t for t in old_tables if any(previous_rows[p].get(t) for p in kept)}):
        target = staging / table
        old = old_tables.get(table) or {}
        old_schemas = [tuple(tuple(c) for c in columns) for columns in old.get("schemas", [])]
        carried = [pid for pid in kept if previous_rows[pid].get(table)]
        counts: dict[str, int] = {pid: previous_rows[pid][table] for pid in carried}
        for pid in carried:
            schema_of[pid][table] = old_schemas[previous_included[pid].get("schemas", {}).get(table, 0)]
        if carried:
            target.mkdir(parents=True)
            for pid in carried:  # unchanged: the same file, one more name for it
                link_partition(previous_dir / table, target, pid)
        for (file_format, schema), members in groups_by_table.get(table, {}).items():
            source = read_source(file_format, [path for _, path in members], schema)
            con.execute(
                f"CREATE OR REPLACE TEMP TABLE fresh AS SELECT {participant} AS participant, "
                f"* EXCLUDE ({FILE_COLUMN}) FROM {source}"
            )
            written = dict(con.execute("SELECT participant, count(*) FROM fresh GROUP BY 1").fetchall())
            if written:
                target.mkdir(parents=True, exist_ok=True)
                write_partitions(con, "fresh", schema, target, staging)
            for pid, count in written.items():
                counts[pid] = count
                schema_of[pid][table] = schema
        con.execute("DROP TABLE IF EXISTS fresh")
        if not counts:
            table_info[table] = {"path": None, "rows": 0, "participants": 0, "columns": [], "schemas": []}
            continue
        # The table's schemas in use, the most common first (a participant records its own only
        # when it is another); the table's columns, every schema's united by name.
        usage: dict[tuple, int] = {}
        for pid in counts:
            usage[schema_of[pid][table]] = usage.get(schema_of[pid][table], 0) + 1
        schemas = sorted(usage, key=lambda s: -usage[s])
        columns = united(table, schemas)
        old_order = {name: n for n, (name, _) in enumerate(old.get("columns", []))}
        columns.sort(key=lambda c: old_order.get(c[0], len(old_order)))  # the previous order, then new ones
        write_schema_file(con, target, columns, previous_dir / table if carried else None, old.get("columns"))
        for pid in counts:
            rows_by_participant[pid][table] = counts[pid]
        table_info[table] = {
            "path": f"{table}/",
            "rows": sum(counts.values()),
            "participants": len(counts),
            "columns": [list(c) for c in columns],
            "schemas": [[list(c) for c in schema] for schema in schemas],
            "_index": {schema: n for n, schema in enumerate(schemas)},
        }
    con.close()
    shutil.rmtree(spill, ignore_errors=True)
    return table_info, rows_by_participant, schema_of


def reads_everyone(previous: dict | None, tables: dict[str, str], kinds_outside_database: dict) -> bool:
    """Whether a merge after the published version `previous` (its run.json) reads every
    participant: partitions are taken over only when they were written the same way."""
    previous = previous or {}
    return not (
        previous.get("layout") == LAYOUT
        and previous.get("table_globs") == tables
        and previous.get("kinds_outside_database", {}) == kinds_outside_database
    )


def united(table: str, schemas: list[tuple]) -> list[tuple[str, str]]:
    """A table's columns: every schema's by name, in the order they first appear. One name with
    two types cannot come from one HealthETL version, and every participant reruns when the
    version changes, so it is reported rather than unified."""
    types: dict[str, str] = {}
    for schema in schemas:
        for name, kind in schema or ():
            if types.setdefault(name, kind) != kind:
                raise MergeError(
                    f"table {table}: column '{name}' is declared {types[name]} by some participants and {kind} by "
                    "others; their outputs come from different HealthETL versions. Run the cohort again with one "
                    "binary (delete OUT/.cohort/status/ to rerun every participant)"
                )
    return list(types.items())


def declared_kinds(folder: Path) -> dict[str, dict[str, str]]:
    """File (relative to the participant's folder) → column → declared kind, from the run's
    `health.sqlite` (`columns`) and its `metadata.json` (each table's `source` file). Opened
    read-only and immutable: no journal or lock file is made beside the participant's database."""
    metadata = cohortlib.load_json(folder / DATABASE_METADATA) or {}
    sources = {}
    for database in (metadata.get("databases") or {}).values():
        for name, table in (database.get("tables") or {}).items():
            if isinstance(table, dict) and isinstance(table.get("source"), str):
                sources[name] = table["source"]
    if not (folder / DATABASE).is_file():
        return {}
    uri = "file:" + str(folder / DATABASE).replace("?", "%3f").replace("#", "%23") + "?mode=ro&immutable=1"
    connection = sqlite3.connect(uri, uri=True)
    try:
        rows = connection.execute('SELECT "table", "column", "kind" FROM "columns" ORDER BY "table", "position"').fetchall()
    except sqlite3.DatabaseError as error:
        raise MergeError(f"{folder / DATABASE}: cannot read its columns table ({error}); rerun this participant")
    finally:
        connection.close()
    declared: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        if table in sources and kind != UNIX_SECONDS:
            declared.setdefault(sources[table], {})[column] = kind
    return declared


def fresh_files(root: Path, fresh: list[str], tables: dict[str, str], kinds_outside_database: dict) -> dict:
    """Table → (format, schema) → [(participant, absolute file)], in participant order; a schema
    is ((column, DuckDB type), ...) in the file's order: a CSV's header, a JSON file's declared
    columns. Equal schemas are one tuple, so a large cohort holds each once."""
    interned: dict[tuple, tuple] = {}
    groups: dict[str, dict[tuple, list[tuple[str, str]]]] = {}
    for pid in fresh:
        files = match_tables(root, pid, tables)
        if not files:
            continue
        declared = declared_kinds(root / "participants" / pid)
        for table, relative, absolute in files:
            file_format = "json" if relative.endswith(".json") else "csv"
            schema = file_schema(pid, relative, absolute, file_format, declared, kinds_outside_database)
            key = interned.setdefault((file_format, schema), (file_format, schema))
            groups.setdefault(table, {}).setdefault(key, []).append((pid, absolute))
    return dict(sorted(groups.items()))


def file_schema(pid: str, relative: str, absolute: str, file_format: str, declared: dict, kinds_outside_database: dict) -> tuple:
    kinds = declared.get(relative)
    if kinds is None:
        kinds = next((k for glob, k in kinds_outside_database.items() if glob_regex(glob).match(relative)), None)
    if kinds is None:
        raise MergeError(
            f"participant {pid}: {relative}: no declaration of its columns: neither its {DATABASE} (with "
            f"{DATABASE_METADATA}) nor config.yaml's kinds_outside_database names this file. The cohort runs "
            "`healthetl run` with the database; delete this participant's status file (OUT/.cohort/status/"
            f"{pid}.json) to rerun it"
        )
    names = [name for name in kinds if name != "*"] if file_format == "json" else csv_header(absolute)
    schema = []
    for name in names:
        kind = kinds.get(name, kinds.get("*"))
        if kind is None:
            raise MergeError(f"participant {pid}: {relative}: column '{name}' is not declared in its {DATABASE}")
        schema.append((name, KIND_TYPES.get(kind, "VARCHAR")))
    return tuple(schema)


def csv_header(path: str) -> list[str]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return next(csv.reader(handle), [])


def glob_regex(glob: str) -> re.Pattern:
    return re.compile("^" + re.escape(glob).replace(r"\*", "([^/]+)") + "$")


def write_partitions(con, source: str, schema: tuple, target: Path, staging: Path) -> None:
    """Writes `source`'s rows as `target/participant=<id>/data_0.parquet`, one per participant."""
    select = ", ".join(quote(name) for name, _ in schema)
    scratch = staging / f".write-{uuid.uuid4().hex[:8]}"
    con.execute(
        f"COPY (SELECT participant, {select} FROM {source}) TO '{sql_text(str(scratch))}' "
        "(FORMAT parquet, COMPRESSION zstd, PARTITION_BY (participant))"
    )
    for folder in scratch.iterdir():
        os.rename(folder, target / folder.name)
    scratch.rmdir()


def write_schema_file(con, target: Path, columns: list[tuple[str, str]], old_table: Path | None, old_columns) -> None:
    """`<table>/_common_metadata`: the table's united schema, a Parquet file without rows. The
    previous version's is linked when the columns are the same, so a night changes no file but
    those of the participants that changed."""
    if old_table is not None and [tuple(c) for c in old_columns or []] == columns and (old_table / SCHEMA_FILE).exists():
        os.link(old_table / SCHEMA_FILE, target / SCHEMA_FILE)
        return
    select = ", ".join(f"CAST(NULL AS {kind}) AS {quote(name)}" for name, kind in columns)
    con.execute(f"COPY (SELECT {select} LIMIT 0) TO '{sql_text(str(target / SCHEMA_FILE))}' (FORMAT parquet)")


def partition_name(pid: str) -> str:
    return f"participant={pid}"


def link_partition(old_table: Path, target: Path, pid: str) -> None:
    folder = target / partition_name(pid)
    folder.mkdir()
    for file in (old_table / partition_name(pid)).iterdir():
        os.link(file, folder / file.name)


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def match_tables(root: Path, pid: str, tables: dict[str, str]) -> list[tuple[str, str, str]]:
    """One participant's files of the tables: [(table, file relative to its folder, absolute file)].

    A glob may hold one `*`; the table name's `{name}` then takes what it matched, so
    `stats/{name}: stats/*.csv` makes one table per statistics job."""
    patterns = []
    for name, glob in tables.items():
        if glob.count("*") > 1 or ("{name}" in name) != ("*" in glob):
            raise SystemExit(f"cohort: table '{name}: {glob}': use one '*' in the file and '{{name}}' in the table, or neither")
        patterns.append((name, glob_regex(glob)))
    run = cohortlib.load_json(root / "participants" / pid / "run.json") or {}
    outputs = [o["path"] for o in run.get("outputs", []) if isinstance(o, dict) and isinstance(o.get("path"), str)]
    found = []
    for name, regex in patterns:
        for path in outputs:
            match = regex.match(path)
            if not match:
                continue
            table = name.replace("{name}", match.group(1)) if match.groups() else name
            absolute = root / "participants" / pid / path
            if absolute.exists():
                found.append((table, path, str(absolute)))
    return found


def read_source(file_format: str, paths: list[str], schema: tuple) -> str:
    """A DuckDB table function reading files of one format and schema, typed as declared."""
    listed = "[" + ", ".join(f"'{sql_text(p)}'" for p in paths) + "]"
    spec = "{" + ", ".join(f"'{sql_text(name)}': '{kind}'" for name, kind in schema) + "}"
    if file_format == "csv":
        return (
            f"read_csv({listed}, header = true, delim = ',', quote = '\"', escape = '\"', "
            f"encoding = 'utf-8', columns = {spec}, filename = '{FILE_COLUMN}')"
        )
    return f"read_json({listed}, format = 'array', columns = {spec}, filename = '{FILE_COLUMN}')"


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
