"""`health.sqlite` against the files of the same run, table by table and cell by cell.

The default pipeline runs over a synthetic export (`healthetl sample`) and over the real exports of
/work/shared/fixtures/real. For every table of the database, its rows must be the rows of the
output file that feeds it (the table's first output in the pipeline: `workouts.csv`, not
`workouts.json`), in the same order: an empty field is NULL, an integer column holds integers, a
number column the CSV's number, a text column the CSV's text (less the quote that guards a
formula in a CSV cell), booleans 1/0, and each `<instant>_unix` column the Unix seconds of its
instant. The `sqlite3` tool's integrity and foreign-key checks pass, every column has a row in
`columns`, and `--no-database` writes neither the database nor its `metadata.json`. The samples
pipeline's tables hold typed values, and names from the export stay data. README.md's five
queries give what it shows.

The binary is `HEALTHETL_BIN` (set by `make test-e2e`), else the debug build.
"""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import tempfile
import sys
import unittest
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows, real_fixtures  # noqa: E402

# Exports of real people (SOURCES.md of the fixtures folder): old and new iOS, a localized one,
# Garmin and iPhone only, routes, swims.
REAL_EXPORTS = [
    "bwassim__Health-Data-Analysis/data/export.zip",
    "rgosdin__docs/export.zip",
    "k0rventen__apple-health-grafana/tests/test-export.zip",
    "k0rventen__apple-health-grafana/tests/test-export-cn.zip",
    "k0rventen__apple-health-grafana/tests/test-export2.zip",
    "paulstaab__healthieR/inst/example_data/Export.zip",
    "grll__apple-health-landing-zone/data/export.xml",
    "dogsheep__healthkit-to-sqlite/tests/export.xml",
    "AlekSi__applehealth/testdata/testdata.xml",
    "jshrake__healthkit-to-sqlite/example/export.zip",
    "opendroid__hk/public/sampleexport.xml",
    "tdda__applehealthdata/testdata/export6s3sample.xml",
    "kkuichi__ms051uh/tests/data/export.xml",
    "alxdrcirilo__apple-health-parser/tests/data/export.zip",
]


def run(export: Path, out: Path, *options: str) -> None:
    subprocess.run([binary(), "run", "--quiet", "--tz", "Europe/Berlin", *options, "--out", str(out), str(export)],
                   check=True, capture_output=True, timeout=600)


def table_name(path: str) -> str:
    """The table a file feeds: its name without folder and extension, other than [A-Za-z0-9_] made `_`."""
    stem = path.rsplit("/", 1)[-1]
    if "." in stem[1:]:
        stem = stem[:stem.rindex(".")]
    return re.sub(r"[^A-Za-z0-9_]", "_", stem)


def file_rows(path: Path) -> list[dict[str, str | None]]:
    """The rows of a CSV (text as written) or JSON/NDJSON file (values as text, null as None)."""
    if path.suffix == ".csv":
        return csv_rows(path)
    text = path.read_text(encoding="utf-8")
    rows = json.loads(text) if path.suffix == ".json" else [json.loads(line) for line in text.splitlines() if line]

    def as_text(value):
        if value is None or isinstance(value, str):
            return value
        return json.dumps(value)
    return [{key: as_text(value) for key, value in row.items()} for row in rows]


def unix_seconds(iso: str) -> int:
    return int(datetime.fromisoformat(iso).timestamp())


class DatabaseEqualsFiles:
    """Checks shared by the sample and the real exports; `out` is a default run's folder."""

    out: Path

    def tables(self) -> dict[str, Path]:
        """Each database table and the file that feeds it, as `metadata.json` says (its `source`)."""
        metadata = json.loads((self.out / "metadata.json").read_text())
        tables = metadata["databases"]["health"]["tables"]
        return {name: self.out / table["source"] for name, table in tables.items() if name != "columns"}

    def check_table_names(self):
        """Tables of files of fixed names are named by the file (the first output of a table of a job)."""
        report = json.loads((self.out / "run.json").read_text())
        expected: dict[str, str] = {}
        for output in report["outputs"]:
            path = output["path"]
            # Element tables' columns depend on the data: they have no table.
            if path.endswith((".csv", ".json", ".ndjson")) and path not in ("metadata.json", "report.html") \
                    and not path.startswith(("workout_records.new", "elements/", "samples/")):
                expected.setdefault(table_name(path), path)
        self.assertEqual({name: str(path.relative_to(self.out)) for name, path in self.tables().items()
                          if not str(path.relative_to(self.out)).startswith("samples/")}, expected)

    def check_database_equals_files(self):
        database = sqlite3.connect(f"file:{self.out / 'health.sqlite'}?mode=ro", uri=True)
        self.addCleanup(database.close)
        names = {row[0] for row in database.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        fed = self.tables()
        self.assertEqual(names, set(fed) | {"columns"})
        self.check_table_names()
        for name, path in fed.items():
            with self.subTest(table=name):
                self.check_table(database, name, path)

    def check_table(self, database: sqlite3.Connection, name: str, path: Path):
        declared = {row[1]: row[2] for row in database.execute(f'PRAGMA table_info("{name}")')}
        described = {row[0]: row[1] for row in database.execute(
            'SELECT "column", "type" FROM "columns" WHERE "table" = ?', (name,))}
        self.assertEqual(described, declared, "the columns table describes every column")
        rows = file_rows(path)
        cursor = database.execute(f'SELECT * FROM "{name}" ORDER BY rowid')
        stored_names = [column[0] for column in cursor.description]
        stored = cursor.fetchall()
        self.assertEqual(len(stored), len(rows), f"{path.name} has {len(rows)} rows")
        if rows:
            # The file's columns in order, each instant followed by its Unix seconds.
            self.assertEqual([c for c in stored_names if not (c.endswith("_unix") and c[:-5] in rows[0])],
                             list(rows[0].keys()))
        for number, (row, values) in enumerate(zip(rows, stored), start=1):
            by_name = dict(zip(stored_names, values))
            for column, text in row.items():
                value = by_name[column]
                where = f"{path.name} row {number} column {column}: {text!r} vs {value!r}"
                if text in ("", None):
                    self.assertIsNone(value, where)
                    continue
                kind = declared[column]
                if isinstance(value, str) and kind == "REAL" and not re.fullmatch(r"-?[0-9.]+(e[-+]?[0-9]+)?", text):
                    # A column of numbers that holds text for some rows (a category sample's value).
                    self.assertEqual(value, text, where)
                elif kind == "INTEGER":
                    expected = {"true": 1, "false": 0}.get(text, None)
                    self.assertEqual(value, expected if expected is not None else int(text), where)
                    self.assertIsInstance(value, int, where)
                elif kind == "REAL":
                    self.assertIsInstance(value, float, where)
                    self.assertEqual(value, float(text), where)
                else:
                    self.assertIsInstance(value, str, where)
                    # A CSV guards text a spreadsheet would take for a formula with a leading quote.
                    self.assertIn(text, (value, "'" + value), where)
                if column + "_unix" in by_name and column + "_unix" not in row:
                    self.assertEqual(by_name[column + "_unix"], unix_seconds(text), where)

    def check_sqlite_tool_checks(self):
        database = str(self.out / "health.sqlite")
        checked = subprocess.run(["sqlite3", "-readonly", database, "PRAGMA integrity_check;",
                                  "PRAGMA foreign_key_check;"], check=True, capture_output=True, text=True,
                                 timeout=120)
        self.assertEqual(checked.stdout, "ok\n")


class SampleDatabaseTests(unittest.TestCase, DatabaseEqualsFiles):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        cls.export = root / "export.zip"
        subprocess.run([binary(), "sample", "--days", "21", "--seed", "5", "--zip", "--out", str(cls.export)],
                       check=True, capture_output=True, timeout=300)
        cls.out = root / "out"
        run(cls.export, cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_table_equals_its_file(self):
        self.check_database_equals_files()

    def test_integrity_and_foreign_keys_pass_the_sqlite_tool(self):
        self.check_sqlite_tool_checks()

    def test_keys_indexes_and_references(self):
        database = sqlite3.connect(f"file:{self.out / 'health.sqlite'}?mode=ro", uri=True)
        self.addCleanup(database.close)

        def primary(table):
            return [row[1] for row in sorted(database.execute(f'PRAGMA table_info("{table}")'), key=lambda r: r[5])
                    if row[5] > 0]

        self.assertEqual(primary("daily"), ["date"])
        self.assertEqual(primary("sleep_daily"), ["date"])
        self.assertEqual(primary("workouts"), ["id"])
        self.assertEqual(primary("swim_laps"), ["workout_id", "lap"])
        self.assertEqual(primary("workout_splits"), [])
        self.assertEqual(primary("steps_per_day"), ["bucket_start_unix"])
        self.assertEqual(primary("heart_rate_per_minute"), ["bucket_start_unix"])
        for table in ("swim_laps", "workout_splits", "route_points"):
            self.assertEqual([(row[2], row[3], row[4]) for row in database.execute(
                f'PRAGMA foreign_key_list("{table}")')], [("workouts", "workout_id", "id")], table)
        self.assertEqual([(row[2], row[3], row[4]) for row in database.execute(
            'PRAGMA foreign_key_list("workout_records")')], [("workouts", "recordUuid", "id")])
        indexes = {row[0] for row in database.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")}
        self.assertLessEqual({"workouts_by_start_unix", "workouts_by_activity_type_start_unix",
                              "sleep_sessions_by_date", "steps_per_day_by_date", "route_points_by_workout_id_time_unix",
                              "workout_splits_by_workout_id_start_unix"},
                             indexes)
        # A date range and a workout type are looked up through an index, not a scan.
        plan = " ".join(row[3] for row in database.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM workouts WHERE activity_type = 'Running' AND start_unix > 0"))
        self.assertIn("USING INDEX workouts_by_activity_type_start_unix", plan)
        plan = " ".join(row[3] for row in database.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM steps_per_day WHERE date BETWEEN '2024-01-01' AND '2024-02-01'"))
        self.assertIn("USING INDEX steps_per_day_by_date", plan)

    def test_columns_table_says_type_unit_precision_and_meaning(self):
        database = sqlite3.connect(f"file:{self.out / 'health.sqlite'}?mode=ro", uri=True)
        self.addCleanup(database.close)
        rows = {(row[0], row[1]): row[2:] for row in database.execute(
            'SELECT "table", "column", "position", "type", "kind", "unit", "precision", "meaning" FROM "columns"')}
        self.assertEqual(rows[("workouts", "distance_m")][:5], (11, "REAL", "number", "m", "0.00001"))
        self.assertEqual(rows[("workouts", "start")], (5, "TEXT", "instant", None, None, "the workout's start"))
        self.assertEqual(rows[("workouts", "start_unix")][:5], (6, "INTEGER", "unix seconds", "s", None))
        self.assertEqual(rows[("daily", "date")], (1, "TEXT", "date", None, None, "the local date"))
        self.assertEqual(rows[("heart_rate_per_minute", "avg")][1:4], ("REAL", "number", "count/min"))
        self.assertEqual(rows[("workouts", "indoor")][1:3], ("INTEGER", "boolean"))

    def test_metadata_describes_tables_and_columns_for_datasette(self):
        metadata = json.loads((self.out / "metadata.json").read_text())
        tables = metadata["databases"]["health"]["tables"]
        self.assertEqual(tables["sleep_daily"]["description"],
                         "one row per date that has a sleep session, in date order")
        self.assertEqual(tables["workouts"]["columns"]["distance_m"][:4], "[m] ")
        self.assertEqual(tables["workouts"]["units"]["distance_m"], "m")
        self.assertNotIn("hr_avg", tables["workouts"]["units"], "count/min is described, not converted")
        self.assertIn("columns", tables)

    def test_no_database_writes_neither_file_and_leaves_the_others_as_they_were(self):
        out = Path(self.tmp.name) / "no-database"
        run(self.export, out, "--no-database")
        self.assertFalse((out / "health.sqlite").exists())
        self.assertFalse((out / "metadata.json").exists())
        for name in ("daily.csv", "workouts.csv", "stats/heart-rate-per-minute.csv", "swim_laps.csv"):
            self.assertEqual((out / name).read_bytes(), (self.out / name).read_bytes(), name)

    def test_a_rerun_writes_the_same_database(self):
        out = Path(self.tmp.name) / "again"
        run(self.export, out)
        self.assertEqual((out / "health.sqlite").read_bytes(), (self.out / "health.sqlite").read_bytes())
        self.assertEqual((out / "metadata.json").read_bytes(), (self.out / "metadata.json").read_bytes())


def record(kind: str, value: str, source: str = "Phone", minute: int = 0, unit: str = "count") -> str:
    return (f'<Record type="{kind}" sourceName="{source}" unit="{unit}" creationDate="2024-03-18 08:00:00 +0100" '
            f'startDate="2024-03-18 07:{minute:02d}:00 +0100" endDate="2024-03-18 07:{minute:02d}:30 +0100" '
            f'value="{value}"/>')


# Type names are data: SQL in them must stay text, and names equal but for case get tables of
# their own (SQLite's names ignore case).
HOSTILE_TYPE = 'x&quot;; DROP TABLE columns; --'
HOSTILE = ('<?xml version="1.0" encoding="UTF-8"?>\n<HealthData locale="en_DE">\n'
           ' <ExportDate value="2024-03-19 10:00:00 +0100"/>\n' + "\n".join([
               record("HKQuantityTypeIdentifierStepCount", "12"),
               record("HKQuantityTypeIdentifierStepCount", "7", source="Robert&apos;); DROP TABLE StepCount;--",
                      minute=1),
               record(HOSTILE_TYPE, "3", minute=2),
               record("stepcount", "4", minute=3),
               record("columns", "5", minute=4),
               record("sqlite_master", "6", minute=5),
               record("HKCategoryTypeIdentifierSleepAnalysis", "HKCategoryValueSleepAnalysisAsleepCore", minute=6,
                      unit=""),
           ]) + "\n</HealthData>\n")


class SamplesDatabaseTests(unittest.TestCase, DatabaseEqualsFiles):
    """`Pipelines/samples.json`: a table per sample type, typed values, source, device, metadata."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        export = root / "export.zip"
        subprocess.run([binary(), "sample", "--days", "7", "--seed", "9", "--zip", "--out", str(export)],
                       check=True, capture_output=True, timeout=300)
        cls.sample_out = root / "sample"
        run(export, cls.sample_out, "--pipeline", str(REPO / "Pipelines/samples.json"))
        hostile = root / "hostile.xml"
        hostile.write_text(HOSTILE, encoding="utf-8")
        cls.hostile_out = root / "hostile"
        run(hostile, cls.hostile_out, "--pipeline", str(REPO / "Pipelines/samples.json"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_sample_table_equals_its_file(self):
        for self.out in (self.sample_out, self.hostile_out):
            with self.subTest(out=self.out.name):
                self.check_database_equals_files()
                self.check_sqlite_tool_checks()

    def test_values_are_typed(self):
        database = sqlite3.connect(f"file:{self.sample_out / 'health.sqlite'}?mode=ro", uri=True)
        self.addCleanup(database.close)
        kinds = dict(database.execute('SELECT typeof(value), count(*) FROM "HeartRate" GROUP BY 1'))
        self.assertEqual(set(kinds), {"real"})
        kinds = dict(database.execute('SELECT typeof(value), count(*) FROM "SleepAnalysis" GROUP BY 1'))
        self.assertEqual(set(kinds), {"text"})
        row = database.execute('SELECT source, device_model, json_extract(metadata, \'$.HKMetadataKeyHeartRateMotionContext\') '
                               'FROM "HeartRate" WHERE metadata IS NOT NULL LIMIT 1').fetchone()
        self.assertEqual(row, ("Alex’s Apple Watch", "Watch", "0"))

    def test_hostile_names_are_data(self):
        database = sqlite3.connect(f"file:{self.hostile_out / 'health.sqlite'}?mode=ro", uri=True)
        self.addCleanup(database.close)
        names = sorted(row[0] for row in database.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        files = sorted(p.name for p in (self.hostile_out / "samples").iterdir())
        self.assertEqual(len(names), len(files) + 1, (names, files))
        self.assertIn("columns", names)
        # `StepCount` and `stepcount` differ only in case: both files, so both tables, are hashed.
        self.assertEqual(len([name for name in names if name.lower().startswith("stepcount_")]), 2, names)
        hostile = [name for name in names if name.startswith("x_")]
        self.assertEqual(len(hostile), 1, names)
        self.assertEqual(database.execute(f'SELECT type, value FROM "{hostile[0]}"').fetchall(),
                         [('x"; DROP TABLE columns; --', 3.0)])
        steps = next(name for name in names if name.startswith("StepCount_"))
        self.assertEqual(database.execute(f'SELECT source FROM "{steps}" ORDER BY start_unix').fetchall(),
                         [("Phone",), ("Robert'); DROP TABLE StepCount;--",)])
        # `columns` and `sqlite_master` as type names get tables of other names.
        self.assertEqual(database.execute('SELECT count(*) FROM "columns" WHERE "table" = \'columns\'').fetchone(), (0,))
        self.assertTrue(any(name.startswith("columns_") for name in names), names)
        self.assertIn("table_sqlite_master", names)


def documented_queries() -> list[tuple[str, str]]:
    """The queries the docs show with their output: README.md's "In SQL or Datasette" and the
    reference's "Example queries" (in whichever file of Pipelines/ holds it)."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    sections = [readme.split("### In SQL or Datasette", 1)[1].split("\n### ", 1)[0]]
    for doc in [REPO / "Pipelines/README.md", *sorted((REPO / "Pipelines/docs").glob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        if "#### Example queries" in text:
            sections.append(text.split("#### Example queries", 1)[1].split("\n#", 1)[0])
    pattern = r"```sql\n(.*?)```\n\n```text\n(.*?)```"
    return [pair for section in sections for pair in re.findall(pattern, section, flags=re.S)]


class ReadmeQueriesTests(unittest.TestCase):
    """The docs' SQL queries (README.md, "In SQL or Datasette"; Pipelines/, "Example queries")
    give what they show on the bundled sample."""

    def test_the_readme_shows_what_the_queries_give(self):
        pairs = documented_queries()
        self.assertEqual(len(pairs), 5)
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "out"
            # As `make run` does: the bundled sample, the zone worked out from the export.
            subprocess.run([binary(), "run", "--quiet", "--no-workbook", "--out", str(out),
                            str(REPO / "SampleData/export.zip")], check=True, capture_output=True, timeout=600)
            for query, shown in pairs:
                with self.subTest(query=query.splitlines()[0]):
                    given = subprocess.run(["sqlite3", "-readonly", "-header", "-column", str(out / "health.sqlite"),
                                            query], check=True, capture_output=True, text=True, timeout=60).stdout
                    self.assertEqual([line.rstrip() for line in given.splitlines()], shown.splitlines())
                    self.assertGreater(len(shown.splitlines()), 3, "a query that shows rows")


class RealExportDatabaseTests(unittest.TestCase, DatabaseEqualsFiles):
    def test_every_real_export(self):
        root = real_fixtures()
        if not root.is_dir():
            self.skipTest(f"{root} is absent (real fixtures are not beside this checkout)")
        for export in REAL_EXPORTS:
            with self.subTest(export=export), tempfile.TemporaryDirectory() as tmp:
                self.out = Path(tmp) / "out"
                run(root / export, self.out, "--no-workbook")
                self.check_database_equals_files()
                self.check_sqlite_tool_checks()


if __name__ == "__main__":
    unittest.main()
