"""Delivering workout records to a server (`healthetl deliver`, `healthetl nightly --deliver`),
against a real HTTP server on 127.0.0.1 that each test starts itself and stops by PID:
Tests/HealthETLCLITests/Fixtures/delivery_server.py, which records every request and injects
faults on demand (5xx, 429 with Retry-After, 400, a hang past the timeout, a dropped
connection, a slow answer while the client is killed with SIGKILL).

What is asserted is worked out apart from healthetl: the records the server accepted are
compared with the `<Workout>` elements of the synthetic exports, read here with Python's XML
parser (their start times in each workout's HKTimeZone, converted with zoneinfo); the
Idempotency-Key the server expects is recomputed by the server from the request's own records.

Run by `make test-e2e`. The binary is `e2e.binary()`: `HEALTHETL_BIN` (make sets the release build),
else the release build, else the debug build.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import io
import time
import unittest
import zipfile
from datetime import datetime
from pathlib import Path
from xml.etree import ElementTree
from zoneinfo import ZoneInfo

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import REPO, binary  # noqa: E402

SERVER = REPO / "Tests" / "HealthETLCLITests" / "Fixtures" / "delivery_server.py"
TOKEN = "tok-3f9a7c1e5b2d4e6f8a0b"
RUN_TIMEOUT = 120  # seconds any one healthetl run may take
NIGHTS = (20, 40, 60)  # days of the growing inbox's exports, one more each night


def setUpModule():
    binary()  # without one the module skips, saying how to get one


def run(*args, env=None, timeout=RUN_TIMEOUT):
    environment = dict(os.environ)
    environment.pop("HEALTHETL_TOKEN", None)
    environment.update(env or {})
    return subprocess.run(
        [binary(), *map(str, args)], capture_output=True, text=True, timeout=timeout, env=environment
    )


def workout_starts(xml_bytes):
    """Local start times (yyyyMMddHHmmss) of the export's <Workout> elements: in the workout's
    own HKTimeZone, as the server records are."""
    starts = []
    for _, element in ElementTree.iterparse(io.BytesIO(xml_bytes)):
        if element.tag == "Workout":
            start = datetime.strptime(element.get("startDate"), "%Y-%m-%d %H:%M:%S %z")
            zone = next(e.get("value") for e in element.iter("MetadataEntry") if e.get("key") == "HKTimeZone")
            starts.append(start.astimezone(ZoneInfo(zone)).strftime("%Y%m%d%H%M%S"))
        if element.tag in ("Workout", "Record", "Correlation", "ActivitySummary"):
            element.clear()
    return starts


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """The fault-injecting server, in its own process, stopped by PID."""

    def __init__(self, folder: Path, honour_keys=True, tls=None, token=TOKEN):
        self.folder = folder
        self.log = folder / "requests.jsonl"
        self.faults = folder / "faults.json"
        self.faults.write_text("[]")
        port_file = folder / "port"
        arguments = [sys.executable, str(SERVER), "--port-file", str(port_file), "--log", str(self.log),
                     "--faults", str(self.faults), "--token", token]
        if not honour_keys:
            arguments.append("--ignore-keys")
        if tls:
            arguments += ["--tls", str(tls[0]), str(tls[1])]
        self.process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while not port_file.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the test server did not start: {self.process.stderr.read()!r}")
            time.sleep(0.02)
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{port_file.read_text()}/records"

    def fault(self, *rules):
        self.faults.write_text(json.dumps(list(rules)))

    def requests(self):
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def applied(self):
        """recordUuid -> how many times a batch holding it was applied."""
        counts = {}
        for request in self.requests():
            if request["applied"]:
                for uuid in request["uuids"]:
                    counts[uuid] = counts.get(uuid, 0) + 1
        return counts

    def stop(self):
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        self.process.stderr.close()


class DeliveryTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="healthetl-delivery-"))
        cls.exports = {}
        cls.starts = {}
        for days in NIGHTS:
            path = cls.tmp / f"export-{days}d.zip"
            result = run("sample", "--days", days, "--zip", "--out", path)
            assert result.returncode == 0, result.stderr
            cls.exports[days] = path
            with zipfile.ZipFile(path) as archive:
                name = next(n for n in archive.namelist() if n.endswith("export.xml"))
                cls.starts[days] = workout_starts(archive.read(name))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.folder = Path(tempfile.mkdtemp(dir=self.tmp))
        self.inbox = self.folder / "inbox"
        self.inbox.mkdir()
        self.out = self.folder / "out"
        self.token_file = self.folder / "token"
        self.token_file.write_text(TOKEN + "\n")
        self.outputs = []  # stdout + stderr of every run, searched for the token

    def start_server(self, **options):
        server = Server(self.folder, **options)
        self.addCleanup(server.stop)
        return server

    def healthetl(self, *args, **options):
        result = run(*args, **options)
        self.outputs.append(result.stdout + result.stderr)
        return result

    def night(self, days, server_url, *extra):
        shutil.copy(self.exports[days], self.inbox / f"export-{days}d.zip")
        return self.healthetl(
            "nightly", "--inbox", self.inbox, "--out", self.out, "--tz", "UTC", "--deliver", server_url,
            "--token-file", self.token_file, *extra)

    def state(self):
        return json.loads((self.out / ".healthetl-state.json").read_text())

    def report(self):
        return json.loads((self.out / "run.json").read_text())["delivery"]

    def assert_token_nowhere(self):
        for text in self.outputs:
            self.assertNotIn(TOKEN, text)
        for path in self.out.rglob("*"):
            if path.is_file():
                self.assertNotIn(TOKEN.encode(), path.read_bytes(), f"the token is in {path}")

    def assert_requests_well_formed(self, server):
        for request in server.requests():
            self.assertTrue(request["keyOK"], request)
            self.assertTrue(request["authorized"], request)
            self.assertEqual(request["contentType"], "application/json")
            self.assertTrue(request["userAgent"].startswith("healthetl/"))

    def accepted_starts(self, server):
        """execStartTime of every record the server applied, from the requests' own bodies."""
        return sorted(record["execStartTime"] for request in server.requests() if request["applied"]
                      for record in request["records"])

    # --- the nightly batch over three nights, with faults and a kill --------------------------

    def test_three_nights_with_faults_and_a_kill_deliver_every_workout_once(self):
        server = self.start_server()
        # Night 1: 13 workouts in batches of 5; the first request gets a 500, the third a 429
        # asking for 1 s.
        server.fault(
            {"match": {"nth": 1}, "action": "status", "status": 500, "body": "try later"},
            {"match": {"nth": 3}, "action": "status", "status": 429, "headers": {"Retry-After": "1"}})
        first = self.night(20, server.url, "--batch", 5, "--backoff", 0.2)
        self.assertEqual(first.returncode, 0, first.stderr)
        requests = server.requests()
        self.assertEqual([r["status"] for r in requests], [500, 200, 429, 200, 200])
        self.assertEqual(requests[0]["key"], requests[1]["key"], "a retried batch keeps its key")
        self.assertEqual(requests[2]["key"], requests[3]["key"])
        self.assertGreaterEqual(requests[1]["time"] - requests[0]["time"], 0.1)  # 0.2 s, half jittered
        self.assertLess(requests[1]["time"] - requests[0]["time"], 1.0)
        self.assertGreaterEqual(requests[3]["time"] - requests[2]["time"], 1.0, "Retry-After: 1 honoured")
        self.assertEqual(len(server.applied()), 13)

        # Night 2: 10 more workouts; the first batch is applied but answered only after 30 s,
        # and the client is killed while it waits.
        server.fault({"match": {}, "action": "slow", "seconds": 30})
        shutil.copy(self.exports[40], self.inbox / "export-40d.zip")
        client = subprocess.Popen(
            [binary(), "nightly", "--inbox", str(self.inbox), "--out", str(self.out), "--tz", "UTC",
             "--deliver", server.url, "--token-file", str(self.token_file), "--batch", "5"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while len(server.requests()) < 6:
                self.assertLess(time.monotonic(), deadline, "the slow request never arrived")
                self.assertIsNone(client.poll(), "the client ended before its request was answered")
                time.sleep(0.05)
            os.kill(client.pid, signal.SIGKILL)
        finally:
            stdout, stderr = client.communicate(timeout=10)
        self.outputs.append(stdout + stderr)
        self.assertEqual(client.returncode, -signal.SIGKILL)
        in_flight = server.requests()[5]
        self.assertEqual(in_flight["action"], "slow")
        # The night itself was committed before delivering; both of its batches are still queued.
        state = self.state()
        self.assertEqual(sum(len(b["records"]) for b in state["batches"]), 10)
        self.assertEqual(state["outbox"], [])

        # Night 3: 11 more workouts; the batch that was in flight goes first, under its key.
        server.fault()
        third = self.night(60, server.url, "--batch", 5)
        self.assertEqual(third.returncode, 0, third.stderr)
        requests = server.requests()
        resent = requests[6]
        self.assertEqual(resent["key"], in_flight["key"], "the batch in flight is sent again under the same key")
        self.assertEqual(resent["action"], "replay", "and the server does not apply it twice")
        self.assertEqual(len(requests), 6 + 1 + 1 + 3)  # the replay, the rest of night 2, night 3

        # Every workout of the last export, applied exactly once, no key applied twice.
        applied = server.applied()
        self.assertEqual(set(applied.values()), {1})
        self.assertEqual(len(applied), len(self.starts[60]))
        self.assertEqual(self.accepted_starts(server), sorted(self.starts[60]))
        keys = [r["key"] for r in requests if r["applied"]]
        self.assertEqual(len(keys), len(set(keys)))
        self.assert_requests_well_formed(server)
        self.assertEqual((self.state()["version"], self.state()["outbox"]), (2, []))
        self.assertNotIn("batches", self.state())
        self.assert_token_nowhere()

    def test_without_idempotency_only_the_batch_in_flight_is_applied_twice(self):
        # A server that ignores the key: a kill costs at most the one batch in flight, twice.
        server = self.start_server(honour_keys=False)
        shutil.copy(self.exports[60], self.inbox / "export-60d.zip")
        self.assertEqual(self.healthetl("nightly", "--inbox", self.inbox, "--out", self.out, "--tz", "UTC")
                         .returncode, 0)
        server.fault({"match": {"nth": 3}, "action": "slow", "seconds": 30})
        client = subprocess.Popen(
            [binary(), "deliver", "--out", str(self.out), "--url", server.url, "--batch", "10"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, HEALTHETL_TOKEN=TOKEN))
        try:
            deadline = time.monotonic() + 60
            while len(server.requests()) < 3:
                self.assertLess(time.monotonic(), deadline)
                time.sleep(0.05)
            os.kill(client.pid, signal.SIGKILL)
        finally:
            client.communicate(timeout=10)
        server.fault()
        again = self.healthetl("deliver", "--out", self.out, "--url", server.url, env={"HEALTHETL_TOKEN": TOKEN})
        self.assertEqual(again.returncode, 0, again.stderr)
        applied = server.applied()
        self.assertEqual(len(applied), 34)
        twice = sorted(uuid for uuid, count in applied.items() if count == 2)
        self.assertEqual(twice, sorted(server.requests()[2]["uuids"]))
        self.assertEqual(len(twice), 10)
        self.assertEqual(max(applied.values()), 2)
        self.assert_token_nowhere()

    # --- a permanent failure ------------------------------------------------------------------

    def test_a_400_quarantines_its_batch_and_the_others_go_through(self):
        server = self.start_server()
        server.fault({"match": {"nth": 2}, "action": "status", "status": 400,
                      "body": "record 3: execRuntime too large (request had {authorization})"})
        result = self.night(60, server.url, "--batch", 10)
        self.assertEqual(result.returncode, 65, result.stderr)
        rejected = server.requests()[1]
        self.assertEqual([r["status"] for r in server.requests()], [200, 400, 200, 200])
        self.assertEqual(len(server.applied()), 24)
        report = self.report()
        self.assertEqual(len(report["quarantined"]), 1)
        entry = report["quarantined"][0]
        self.assertEqual((entry["status"], entry["records"], entry["key"]), (400, 10, rejected["key"]))
        self.assertEqual(entry["body"], "record 3: execRuntime too large (request had Bearer [token])")
        self.assertEqual(report["exitCode"], 65)
        self.assertIn("HTTP 400, quarantined", (self.out / "delivery.log").read_text())
        self.assertEqual(len(self.state()["quarantinedBatches"]), 1)
        self.assertIn("quarantined", result.stderr)

        # A plain rerun leaves it alone; --retry-quarantined sends its records again.
        again = self.healthetl("deliver", "--out", self.out, "--url", server.url, "--token-file", self.token_file)
        self.assertEqual(again.returncode, 0, again.stderr)
        self.assertEqual(len(server.requests()), 4)
        self.assertEqual(len(self.report()["stillQuarantined"]), 1)
        retried = self.healthetl("deliver", "--out", self.out, "--url", server.url, "--token-file", self.token_file,
                                 "--retry-quarantined")
        self.assertEqual(retried.returncode, 0, retried.stderr)
        self.assertEqual(sorted(server.requests()[4]["uuids"]), sorted(rejected["uuids"]))
        self.assertEqual(self.accepted_starts(server), sorted(self.starts[60]))
        # Nothing queued any more: the state is version 2 again, as without delivery.
        self.assertEqual(self.state()["version"], 2)
        self.assertNotIn("quarantinedBatches", self.state())
        self.assert_token_nowhere()

    def test_a_401_stops_the_run_and_keeps_everything_queued(self):
        server = self.start_server()
        self.token_file.write_text("wrong-token\n")
        result = self.night(20, server.url)
        self.assertEqual(result.returncode, 64, result.stderr)
        self.assertIn("refused the credentials (the token from --token-file", result.stderr)
        self.assertEqual(len(server.requests()), 1)
        self.assertEqual(sum(len(b["records"]) for b in self.state()["batches"]), 13)

    # --- transient failures -------------------------------------------------------------------

    def test_server_down_leaves_everything_queued_then_a_later_run_delivers(self):
        shutil.copy(self.exports[40], self.inbox)
        self.assertEqual(self.healthetl("nightly", "--inbox", self.inbox, "--out", self.out, "--tz", "UTC")
                         .returncode, 0)
        down = f"http://127.0.0.1:{free_port()}/records"
        started = time.monotonic()
        result = self.healthetl("deliver", "--out", self.out, "--url", down, "--token-file", self.token_file,
                                "--attempts", 3, "--backoff", 0.2)
        elapsed = time.monotonic() - started
        self.assertEqual(result.returncode, 75, result.stderr)
        self.assertIn("on the last of 3 attempts; left queued for the next run", result.stderr)
        # Two delays: 0.2 s and 0.4 s, each at least half kept.
        self.assertGreaterEqual(elapsed, 0.3)
        self.assertLess(elapsed, 5)
        self.assertEqual(self.report()["pendingRecords"], 23)

        server = self.start_server()
        later = self.healthetl("deliver", "--out", self.out, "--url", server.url, "--token-file", self.token_file)
        self.assertEqual(later.returncode, 0, later.stderr)
        self.assertEqual(self.accepted_starts(server), sorted(self.starts[40]))
        self.assert_token_nowhere()

    def test_a_hang_past_the_timeout_and_a_dropped_connection_are_retried(self):
        server = self.start_server()
        server.fault({"match": {"nth": 1}, "action": "hang", "seconds": 5},
                     {"match": {"nth": 2}, "action": "drop"})
        started = time.monotonic()
        result = self.night(20, server.url, "--timeout", 0.5, "--backoff", 0.1)
        elapsed = time.monotonic() - started
        self.assertEqual(result.returncode, 0, result.stderr)
        statuses = [(r["action"], r["status"]) for r in server.requests()]
        self.assertEqual(statuses, [("hang", None), ("drop", None), ("ok", 200)])
        self.assertEqual(len({r["key"] for r in server.requests()}), 1)
        self.assertLess(elapsed, 5, "the hang was cut at --timeout 0.5")
        log = (self.out / "delivery.log").read_text()
        self.assertIn("timed out after", log)
        self.assertIn("attempt 2 of 5; retrying", log)
        self.assertEqual(len(server.applied()), 13)

    def test_retries_end_at_max_time_with_exit_75(self):
        server = self.start_server()
        server.fault({"match": {}, "times": 100, "action": "status", "status": 503,
                      "headers": {"Retry-After": "30"}})
        started = time.monotonic()
        result = self.night(20, server.url, "--max-time", 5)
        self.assertLess(time.monotonic() - started, 10)
        self.assertEqual(result.returncode, 75, result.stderr)
        self.assertIn("as Retry-After asks) would start past --max-time", result.stderr)
        self.assertEqual(len(server.requests()), 1)
        self.assertEqual(self.report()["pendingRecords"], 13)

    def test_https_with_a_private_ca_needs_ca_file(self):
        if shutil.which("openssl") is None:
            self.skipTest("needs the openssl command (make deps installs it)")
        cert, key = self.folder / "cert.pem", self.folder / "key.pem"
        made = subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
             "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
            capture_output=True, timeout=60)
        self.assertEqual(made.returncode, 0, made.stderr)
        server = self.start_server(tls=(cert, key))
        untrusted = self.night(20, server.url)
        self.assertEqual(untrusted.returncode, 64, untrusted.stderr)
        self.assertIn("(a server with a private CA needs --ca-file)", untrusted.stderr)
        self.assertEqual(server.requests(), [], "nothing is sent to a server whose certificate is not trusted")
        trusted = self.healthetl("deliver", "--out", self.out, "--url", server.url, "--token-file", self.token_file,
                                 "--ca-file", cert)
        self.assertEqual(trusted.returncode, 0, trusted.stderr)
        self.assertEqual(self.accepted_starts(server), sorted(self.starts[20]))
        self.assert_requests_well_formed(server)

    # --- configuration ------------------------------------------------------------------------

    def test_configuration_file(self):
        server = self.start_server()
        config = self.folder / "delivery.json"
        config.write_text('{\n  "url": "%s",\n  "tokenFile": "token",\n  "batch": 4,\n  "timeout": 2.5\n}\n'
                          % server.url)
        result = self.night_with_config(config)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual([len(r["uuids"]) for r in server.requests()], [4, 4, 4, 1])
        self.assertTrue(all(r["authorized"] for r in server.requests()))

        config.write_text('{\n  "url": "%s",\n  "tmieout": 3\n}\n' % server.url)
        bad = self.healthetl("deliver", "--out", self.out, "--delivery-config", config)
        self.assertEqual(bad.returncode, 64)
        self.assertIn(f"{config}:3: tmieout: unknown key (did you mean 'timeout'?)", bad.stderr)

        config.write_text('{\n  "url": "%s",\n  "token": "%s"\n}\n' % (server.url, TOKEN))
        secret = self.healthetl("deliver", "--out", self.out, "--delivery-config", config)
        self.assertEqual(secret.returncode, 64)
        self.assertIn(f"{config}:3: token: a token is never kept in this file", secret.stderr)
        self.assertNotIn(TOKEN, secret.stderr)

        config.write_text('{"url": "http://example.org/records"}')
        insecure = self.healthetl("deliver", "--out", self.out, "--delivery-config", config)
        self.assertEqual(insecure.returncode, 64)
        self.assertIn(f"{config}:1: url: plain http:// to example.org", insecure.stderr)

        config.write_text('{"url": "%s", "timeout": 0}' % server.url)
        zero = self.healthetl("deliver", "--out", self.out, "--delivery-config", config)
        self.assertEqual(zero.returncode, 64)
        self.assertIn(f"{config}:1: timeout: 0 is out of range: use 0.001 to 3600", zero.stderr)

    def night_with_config(self, config):
        shutil.copy(self.exports[20], self.inbox)
        return self.healthetl("nightly", "--inbox", self.inbox, "--out", self.out, "--delivery-config", config)

    def test_dry_run_shows_the_requests_and_changes_nothing(self):
        shutil.copy(self.exports[20], self.inbox)
        self.assertEqual(self.healthetl("nightly", "--inbox", self.inbox, "--out", self.out, "--tz", "UTC")
                         .returncode, 0)
        before = {p: p.read_bytes() for p in self.out.rglob("*") if p.is_file()}
        result = self.healthetl("deliver", "--out", self.out, "--url", "https://records.example.org/v1",
                                "--token-file", self.token_file, "--batch", 10, "--dry-run")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual({p: p.read_bytes() for p in self.out.rglob("*") if p.is_file()}, before)
        self.assertEqual(result.stdout.count("POST https://records.example.org/v1\n"), 2)
        self.assertIn(f"Authorization: Bearer <the token from --token-file {self.token_file}, hidden>", result.stdout)
        bodies = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("[")]
        self.assertEqual(sorted(r["execStartTime"] for body in bodies for r in body), sorted(self.starts[20]))
        self.assert_token_nowhere()

    def test_the_token_is_never_an_argument(self):
        result = self.healthetl("deliver", "--out", self.out, "--url", "https://x.example/", "--token", TOKEN)
        self.assertEqual(result.returncode, 64)
        self.assertNotIn(TOKEN, result.stderr)


if __name__ == "__main__":
    unittest.main()
