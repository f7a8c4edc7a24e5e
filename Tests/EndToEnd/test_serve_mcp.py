"""`make serve` as an MCP client meets it: Datasette with datasette-mcp and Pipelines/serve over a
run of the bundled sample, started by Pipelines/serve/serve.sh on a free loopback port.

- The official `mcp` Python client connects over Streamable HTTP to /-/mcp and lists the tools:
  datasette-mcp's read-only ones, and one per canned query of Pipelines/serve/queries.yaml whose
  date parameters are typed (an impossible date is refused before any SQL runs).
- `execute_sql` returns daily.csv's steps; the typed tools `activity_by_day`, `sleep_by_night`,
  `workouts_in_range` and `night_stages`, and `workout_totals` run through datasette-mcp's
  `execute_canned_query`, return what daily.csv, workouts.csv and sleep_sessions.csv hold, worked
  out here from the CSV rows.
- Write statements (INSERT, UPDATE, DELETE, DROP, ATTACH, a WITH … DELETE that passes Datasette's
  SELECT check) are refused and the file is unchanged; the canned queries are Datasette pages too.
- A Host or Origin other than loopback is refused (DNS rebinding).
- A run that swaps a new out/ in while the server runs does not leak into its answers.
- With Pipelines/serve/token-auth.yaml, a client without the bearer token sees no database and
  no page; one with it gets the tools. Without HEALTHETL_SERVE_TOKEN set, the server refuses to
  start (exit 64, one line).
- The plugin refuses a queries file whose SQL names an undeclared or untyped parameter, or a
  query that writes.

Every MCP session is bounded by a timeout; the servers are stopped by PID. The datasette program is
the one beside this Python (make test-e2e: .build/venv, installed from requirements.txt); the
healthetl binary is HEALTHETL_BIN (set by make test-e2e), else a local build.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e import REPO, binary, csv_rows  # noqa: E402

try:
    import httpx2
    import yaml
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
except ImportError:  # pragma: no cover - the venv of make test-e2e has both
    Client = None

SERVE = REPO / "Pipelines/serve/serve.sh"
MCP_SECONDS = 60
DATASETTE_TOOLS = {"list_databases", "get_database_schema", "execute_sql", "list_canned_queries",
                   "execute_canned_query", "execute_writable_canned_query"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def half_up(value: float, digits: int = 0) -> float:
    """SQLite's round(): halves away from zero (Python's round() goes to even)."""
    return float(Decimal(repr(value)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def number(text: str) -> float | None:
    return float(text) if text else None


async def mcp_session(base: str, headers: dict, session):
    """`session(client)` in one MCP session over Streamable HTTP to base/-/mcp, sending `headers`."""
    async with httpx2.AsyncClient(headers=headers) as http:
        async with Client(streamable_http_client(base + "/-/mcp", http_client=http)) as client:
            return await session(client)


class Server:
    """serve.sh over `out` on a free port, with this venv's datasette; stopped by PID."""

    def __init__(self, out: Path, log: Path, env: dict | None = None, headers: dict | None = None):
        datasette = Path(sys.executable).parent / "datasette"
        if Client is None or not datasette.exists():
            raise unittest.SkipTest("needs datasette, datasette-mcp and mcp: pip install -r Tests/EndToEnd/requirements.txt")
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.headers = headers or {}
        self.log = log.open("w")
        self.process = subprocess.Popen(["sh", str(SERVE), str(out), "--port", str(self.port)],
                                        env=dict(os.environ, DATASETTE=str(datasette), **(env or {})),
                                        stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(urllib.request.Request(self.base + "/-/versions.json", headers=self.headers),
                                            timeout=10):
                    return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError("datasette did not answer within 90 s: " + log.read_text())
                time.sleep(0.3)

    def stop(self):
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=20)
        self.log.close()

    async def session(self, session):
        return await mcp_session(self.base, self.headers, session)

    def mcp(self, session):
        """Runs `session(client)` in one MCP session over Streamable HTTP, bounded in time."""
        return asyncio.run(asyncio.wait_for(self.session(session), MCP_SECONDS))

    def call(self, tool: str, arguments: dict):
        async def session(client):
            return await client.call_tool(tool, arguments)
        return self.mcp(session)

    def rows(self, tool: str, arguments: dict) -> list[dict]:
        result = self.call(tool, arguments)
        if result.is_error:
            raise AssertionError(f"{tool} failed: {result.content}")
        if result.structured_content["truncated"]:
            raise AssertionError(f"{tool}: truncated")
        return result.structured_content["rows"]

    def get(self, path: str, headers: dict | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(self.base + path, headers=headers or {})
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()


def run_healthetl(export: Path, out: Path):
    subprocess.run([binary(), "run", "--quiet", "--no-workbook", "--out", str(out), str(export)],
                   check=True, capture_output=True, timeout=300)


class ServeMCPTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = Path(cls.tmp.name)
        cls.out = root / "out"
        run_healthetl(REPO / "SampleData/export.zip", cls.out)
        cls.daily = csv_rows(cls.out / "daily.csv")
        cls.workouts = csv_rows(cls.out / "workouts.csv")
        cls.sessions = csv_rows(cls.out / "sleep_sessions.csv")
        cls.queries = yaml.safe_load((REPO / "Pipelines/serve/queries.yaml").read_text(encoding="utf-8"))
        try:
            cls.server = Server(cls.out, root / "datasette.log")
        except BaseException:
            cls.tmp.cleanup()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.tmp.cleanup()

    def test_the_tools_are_listed_with_typed_parameters(self):
        async def session(client):
            return (await client.list_tools()).tools, await client.call_tool("list_databases", {})
        tools, databases = self.server.mcp(session)
        by_name = {tool.name: tool for tool in tools}
        self.assertEqual(set(by_name), DATASETTE_TOOLS | set(self.queries["queries"]))
        self.assertEqual(databases.structured_content, {"databases": ["health"]})
        sleep = by_name["sleep_by_night"]
        self.assertTrue(sleep.annotations.read_only_hint)
        self.assertIn("hours", sleep.description)
        self.assertEqual(sleep.input_schema["required"], ["start", "end"])
        self.assertEqual(sleep.input_schema["properties"]["start"]["format"], "date")
        self.assertIn("YYYY-MM-DD", sleep.input_schema["properties"]["start"]["description"])
        workouts = by_name["workouts_in_range"].input_schema
        self.assertEqual(workouts["properties"]["activity_type"]["type"], "string")
        self.assertNotIn("activity_type", workouts["required"])

    def test_an_impossible_date_is_refused_before_the_query(self):
        result = self.server.call("sleep_by_night", {"start": "2024-02-30", "end": "2024-03-31"})
        self.assertTrue(result.is_error)
        self.assertIn("start", result.content[0].text)

    def test_execute_sql_returns_the_daily_steps(self):
        rows = self.server.rows("execute_sql", {"database": "health", "sql": "SELECT date, steps FROM daily ORDER BY date"})
        self.assertEqual(rows, [{"date": row["date"], "steps": number(row["steps"])} for row in self.daily])
        self.assertEqual(len(rows), 29)

    def test_activity_and_sleep_for_a_date_range_are_daily_csv(self):
        days = self.daily[3:17]
        start, end = days[0]["date"], days[-1]["date"]
        activity = self.server.rows("activity_by_day", {"start": start, "end": end})
        self.assertEqual([(row["date"], row["steps"], row["distance_km"]) for row in activity],
                         [(row["date"], number(row["steps"]), number(row["distance_km"])) for row in days])
        sleep = self.server.rows("sleep_by_night", {"start": start, "end": end})
        nights = [row for row in days if row["asleep_h"] or row["in_bed_h"]]
        self.assertGreater(len(nights), 10)
        self.assertEqual([(row["date"], row["bedtime"], row["asleep_h"], row["deep_h"]) for row in sleep],
                         [(row["date"], row["bedtime"], number(row["asleep_h"]), number(row["deep_h"])) for row in nights])

    def test_workouts_of_a_type_and_their_totals_are_workouts_csv(self):
        runs = [row for row in self.workouts if row["activity_type"] == "Running"]
        start, end = runs[0]["local_time"][:10], runs[-1]["local_time"][:10]
        listed = self.server.rows("workouts_in_range", {"start": start, "end": end, "activity_type": "Running"})
        self.assertEqual([(row["started"], row["distance_km"], row["duration_min"]) for row in listed],
                         [(row["local_time"], half_up(float(row["distance_m"]) / 1000, 2),
                           half_up(float(row["duration_s"]) / 60, 1)) for row in runs])
        # The same query as datasette-mcp's generic tool runs it, for the whole sample.
        result = self.server.call("execute_canned_query", {
            "database": "health", "query": "workout_totals",
            "parameters": {"start": self.daily[0]["date"], "end": self.daily[-1]["date"], "activity_type": ""}})
        self.assertFalse(result.is_error, result.content)
        totals = {row["activity_type"]: row for row in result.structured_content["rows"]}
        self.assertEqual(set(totals), {row["activity_type"] for row in self.workouts})
        for activity_type, row in totals.items():
            mine = [w for w in self.workouts if w["activity_type"] == activity_type]
            distances = [float(w["distance_m"]) for w in mine if w["distance_m"]]
            self.assertEqual(row["workouts"], len(mine), activity_type)
            self.assertEqual(row["duration_h"], half_up(sum(float(w["duration_s"]) for w in mine) / 3600, 2))
            self.assertEqual(row["distance_km"], half_up(sum(distances) / 1000, 2) if distances else None)
            self.assertEqual(row["energy_kcal"], half_up(sum(float(w["energy_kcal"]) for w in mine)))
        self.assertEqual(totals["Running"]["workouts"], 6)

    def test_weekly_averages_and_a_ranges_totals_are_daily_csv(self):
        start, end = self.daily[0]["date"], self.daily[-1]["date"]
        weeks = self.server.rows("weekly_averages", {"start": start, "end": end})
        # The sample starts on Monday 2024-03-18; its first week is its first seven days.
        first = self.daily[:7]
        self.assertEqual(weeks[0]["week_start"], "2024-03-18")
        self.assertEqual(weeks[0]["days"], 7)
        self.assertEqual(weeks[0]["steps"], half_up(sum(float(d["steps"]) for d in first) / 7))
        resting = [float(d["resting_hr_bpm"]) for d in first if d["resting_hr_bpm"]]
        self.assertEqual(weeks[0]["resting_hr_bpm"], half_up(sum(resting) / len(resting), 1))
        self.assertEqual(sum(week["workouts"] for week in weeks), len(self.workouts))
        [summary] = self.server.rows("period_summary", {"start": start, "end": end})
        steps = [float(d["steps"]) for d in self.daily if d["steps"]]
        self.assertEqual((summary["days"], summary["total_steps"], summary["workouts"]),
                         (len(self.daily), half_up(sum(steps)), len(self.workouts)))
        # Every query runs over the whole sample and finds rows.
        arguments = {"start": start, "end": end, "night": self.sessions[0]["date"]}
        for name, query in self.queries["queries"].items():
            self.assertTrue(self.server.rows(name, {p: arguments[p] for p in query.get("params", []) if p in arguments}), name)

    def test_a_nights_stages_are_its_sessions(self):
        session = self.sessions[0]
        rows = self.server.rows("night_stages", {"night": session["date"]})
        self.assertEqual(len(rows), sum(1 for s in self.sessions if s["date"] == session["date"]))
        for stage in ("asleep", "core", "deep", "rem", "awake", "in_bed"):
            self.assertEqual(rows[0][f"{stage}_min"], half_up(int(session[f"{stage}_s"]) / 60, 1), stage)
        self.assertEqual(rows[0]["deep_pct"], half_up(100 * int(session["deep_s"]) / int(session["asleep_s"]), 1))

    def test_write_statements_are_refused_and_the_file_is_unchanged(self):
        database = self.out / "health.sqlite"
        before = hashlib.sha256(database.read_bytes()).hexdigest()
        statements = ["INSERT INTO daily (date) VALUES ('2030-01-01')", "UPDATE daily SET steps = 0",
                      "DELETE FROM workouts", "DROP TABLE daily", "ATTACH DATABASE ':memory:' AS other",
                      # Datasette's check lets a WITH through; the read-only connection refuses it.
                      "WITH doomed AS (SELECT 1) DELETE FROM daily",
                      "SELECT 1; DELETE FROM daily"]

        async def session(client):
            return [await client.call_tool("execute_sql", {"database": "health", "sql": sql}) for sql in statements]
        results = self.server.mcp(session)
        for sql, result in zip(statements, results):
            self.assertTrue(result.is_error, sql)
        self.assertIn("readonly", results[5].content[0].text)
        self.assertEqual(hashlib.sha256(database.read_bytes()).hexdigest(), before)
        count = self.server.rows("execute_sql", {"database": "health", "sql": "SELECT count(*) AS n FROM daily"})
        self.assertEqual(count, [{"n": len(self.daily)}])

    def test_the_canned_queries_are_datasette_pages_with_the_runs_metadata(self):
        status, body = self.server.get("/health/activity_by_day.json?start=2024-03-18&end=2024-03-19&_shape=array")
        self.assertEqual(status, 200)
        self.assertEqual([row["steps"] for row in json.loads(body)], [number(row["steps"]) for row in self.daily[:2]])
        status, page = self.server.get("/health/sleep_by_night?start=2024-03-18&end=2024-03-19")
        self.assertEqual(status, 200)
        self.assertIn(b"Sleep per night", page)
        status, body = self.server.get("/-/metadata.json")
        metadata = json.loads(body)["databases"]["health"]
        self.assertEqual(set(metadata["queries"]), set(self.queries["queries"]))
        self.assertEqual(metadata["tables"]["daily"]["columns"]["date"], "the local date")

    def test_a_foreign_host_or_origin_is_refused(self):
        self.assertEqual(self.server.get("/-/versions.json", {"Host": f"localhost:{self.server.port}"})[0], 200)
        status, body = self.server.get("/health/daily.json", {"Host": f"rebound.example:{self.server.port}"})
        self.assertEqual(status, 421)
        self.assertIn(b"HEALTHETL_SERVE_ALLOWED_HOSTS", body)
        self.assertEqual(self.server.get("/health/daily.json", {"Origin": "http://rebound.example"})[0], 403)
        initialize = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}).encode()
        request = urllib.request.Request(self.server.base + "/-/mcp", data=initialize, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "Origin": "http://rebound.example"})
        with self.assertRaises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        self.assertEqual(refused.exception.code, 403)


class NewRunWhileServingTests(unittest.TestCase):
    def test_a_run_that_replaces_out_does_not_mix_into_the_answers(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            out = root / "out"
            run_healthetl(REPO / "SampleData/export.zip", out)
            days = len(csv_rows(out / "daily.csv"))
            server = Server(out, root / "datasette.log")
            self.addCleanup(server.stop)
            smaller = root / "week.zip"
            subprocess.run([binary(), "sample", "--days", "7", "--seed", "9", "--zip", "--out", str(smaller)],
                           check=True, capture_output=True, timeout=300)
            run_healthetl(smaller, out)
            self.assertNotEqual(len(csv_rows(out / "daily.csv")), days)

            # Concurrent clients are what made Datasette open more connections, on the new file (with
            # its default of three SQL threads, answers mixed 8 and 29 days).
            async def count(client):
                result = await client.call_tool("execute_sql", {"database": "health", "sql": "SELECT count(*) AS n FROM daily"})
                return result.structured_content["rows"][0]["n"]

            async def clients():
                return await asyncio.gather(*[server.session(count) for _ in range(12)])
            for _ in range(5):
                self.assertEqual(asyncio.run(asyncio.wait_for(clients(), MCP_SECONDS)), [days] * 12)


class TokenAuthTests(unittest.TestCase):
    def test_only_a_client_with_the_token_gets_the_data(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            out = root / "out"
            run_healthetl(REPO / "SampleData/export.zip", out)
            token = os.urandom(16).hex()
            env = {"HEALTHETL_SERVE_METADATA": str(REPO / "Pipelines/serve/token-auth.yaml"), "HEALTHETL_SERVE_TOKEN": token}
            owner = Server(out, root / "datasette.log", env, {"Authorization": f"Bearer {token}"})
            self.addCleanup(owner.stop)

            async def probe(client):
                databases = await client.call_tool("list_databases", {})
                steps = await client.call_tool("execute_sql", {"database": "health", "sql": "SELECT sum(steps) AS s FROM daily"})
                week = await client.call_tool("activity_by_day", {"start": "2024-03-18", "end": "2024-03-24"})
                return databases.structured_content["databases"], steps.is_error, week.is_error
            self.assertEqual(owner.mcp(probe), (["health"], False, False))
            self.assertEqual(asyncio.run(asyncio.wait_for(
                mcp_session(owner.base, {"Authorization": "Bearer not-the-token"}, probe), MCP_SECONDS)), ([], True, True))
            self.assertEqual(owner.get("/health/daily.json", owner.headers)[0], 200)
            self.assertEqual(owner.get("/health/daily.json")[0], 403)
            self.assertEqual(owner.get("/health/activity_by_day.json?start=2024-03-18&end=2024-03-24")[0], 403)

            del env["HEALTHETL_SERVE_TOKEN"]
            refused = subprocess.run(["sh", str(SERVE), str(out), "--port", str(free_port())], capture_output=True, text=True,
                                     env=dict({k: v for k, v in os.environ.items() if k != "HEALTHETL_SERVE_TOKEN"},
                                              DATASETTE=str(Path(sys.executable).parent / "datasette"), **env), timeout=120)
            self.assertEqual(refused.returncode, 64)
            self.assertEqual(refused.stderr.strip().splitlines(),
                             [f"serve: error: {env['HEALTHETL_SERVE_METADATA']} reads the environment variable(s) "
                              "HEALTHETL_SERVE_TOKEN: set them"])


class QueriesFileTests(unittest.TestCase):
    def test_a_mistake_in_the_queries_file_stops_the_plugin(self):
        if Client is None:
            raise unittest.SkipTest("needs datasette-mcp and mcp: pip install -r Tests/EndToEnd/requirements.txt")
        spec = importlib.util.spec_from_file_location("healthetl_serve", REPO / "Pipelines/serve/plugins/healthetl_serve.py")
        plugin = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(plugin)
        typed = {"start": {"type": "date", "description": "d"}}
        cases = {
            "params ['start'] but the SQL uses ['end', 'start']":
                {"q": {"description": "d", "params": ["start"], "sql": "SELECT :start, :end"}},
            "['end'] not typed": {"q": {"description": "d", "params": ["start", "end"], "sql": "SELECT :start, :end"}},
            "never writes": {"q": {"description": "d", "write": True, "sql": "DELETE FROM daily"}},
            "has no description": {"q": {"sql": "SELECT 1"}},
        }
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "queries.yaml"
            for message, queries in cases.items():
                path.write_text(yaml.safe_dump({"parameters": typed, "queries": queries}), encoding="utf-8")
                with self.assertRaises(ValueError) as refused:
                    plugin.load_queries(path)
                self.assertIn(message, str(refused.exception))
            self.assertEqual(set(plugin.CANNED_QUERIES["queries"]), set(yaml.safe_load(
                (REPO / "Pipelines/serve/queries.yaml").read_text(encoding="utf-8"))["queries"]))


if __name__ == "__main__":
    unittest.main()
