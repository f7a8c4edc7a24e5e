"""What becomes of the bearer token on the way to a server and back (`healthetl deliver`): a
server that echoes it, in any of the forms a careless server echoes text, finds it in none of
stderr, `delivery.log`, `run.json` and `.healthetl-state.json`, which are readable by their owner
only; a proxy named in the environment never sees a plain http:// request, and carries an
https:// one only as a TLS tunnel it cannot read.

Servers: Tests/HealthETLCLITests/Fixtures/delivery_server.py (records every request; its fault
bodies put the request's token in where they say `{token:FORM}`) and fake_proxy.py (answers 200
to any plain request, tunnels CONNECT to 127.0.0.1), each started by the test and stopped by PID.

What is asserted is worked out apart from healthetl: every form is derived here from the token
(`delivery_server.token_forms`), and a text holds the token when, with white space removed,
JSON escapes undone and letters lower-cased, it contains any 8 characters in a row of the token
or of one of its forms.

Run by `make test-e2e`. The binary is `e2e.binary()`: `HEALTHETL_BIN` (make sets the release build),
else the release build, else the debug build.
"""

import json
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest
import zipfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from e2e import REPO, binary  # noqa: E402
from test_delivery import Server, run, workout_starts  # noqa: E402

sys.path.insert(0, str(REPO / "Tests" / "HealthETLCLITests" / "Fixtures"))
from delivery_server import token_forms  # noqa: E402

PROXY = REPO / "Tests" / "HealthETLCLITests" / "Fixtures" / "fake_proxy.py"
# A slash for PHP's `\/`, letters of both cases, and characters whose base64 differs from
# base64url and whose percent-encoding differs from the text.
TOKEN = "Tk/9f~Q2+xZ7/aB3dE5gH8kL1mN4pR6s?"
BODY_LIMIT = 64 << 10  # bytes of an answer the client reads
PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
                   "no_proxy", "NO_PROXY")


def setUpModule():
    binary()  # without one the module skips, saying how to get one


def normalized(text):
    """`text` as the check reads it: JSON escapes undone, white space and control characters
    removed, lower-cased."""
    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), text)
    text = text.replace("\\/", "/").replace("\\n", "").replace("\\r", "").replace("\\t", "")
    return re.sub(r"[\s\x00-\x1f\x7f]", "", text).lower()


def windows(text, width=8):
    text = normalized(text)
    return {text[i:i + width] for i in range(len(text) - width + 1)}


def telltales():
    """Every 8 characters in a row of the token or of a form it may be echoed in."""
    forms = token_forms(TOKEN)
    # base64 of "Bearer " + token: characters 10 to 52 encode the token's bits alone (see
    # ECHOES); the others encode "Bearer " or padding, which carry nothing of it.
    forms["base64-header"] = forms["base64-header"][10:53]
    return windows(TOKEN).union(*(windows(form) for form in forms.values()))


TELLTALES = telltales()


def leaks(text):
    """The telltales of the token in `text`, sorted; empty when there are none."""
    text = normalized(text)
    return sorted(t for t in TELLTALES if t in text)


class Proxy:
    """fake_proxy.py in its own process, stopped by PID."""

    def __init__(self, folder: Path, *options: str):
        self.log = folder / "proxy.jsonl"
        port_file = folder / "proxy-port"
        self.process = subprocess.Popen(
            [sys.executable, str(PROXY), "--port-file", str(port_file), "--log", str(self.log), *options],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while not port_file.exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the proxy did not start: {self.process.stderr.read()!r}")
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{port_file.read_text()}"

    def requests(self, at_least=0):
        """The requests logged so far, waiting up to 10 s for `at_least` of them (a tunnel is
        logged when it closes, just after the client has gone)."""
        deadline = time.monotonic() + 10
        while True:
            lines = self.log.read_text().splitlines() if self.log.exists() else []
            if len(lines) >= at_least or time.monotonic() > deadline:
                return [json.loads(line) for line in lines]
            time.sleep(0.05)

    def stop(self):
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        self.process.stderr.close()


class DeliverySecretTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="healthetl-secrets-"))
        cls.export = cls.tmp / "export-40d.zip"
        made = run("sample", "--days", 40, "--zip", "--out", cls.export)
        assert made.returncode == 0, made.stderr
        with zipfile.ZipFile(cls.export) as archive:
            name = next(n for n in archive.namelist() if n.endswith("export.xml"))
            cls.starts = sorted(workout_starts(archive.read(name)))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.folder = Path(tempfile.mkdtemp(dir=self.tmp))
        self.out = self.folder / "out"
        self.token_file = self.folder / "token"
        self.token_file.write_text(TOKEN + "\n")
        inbox = self.folder / "inbox"
        inbox.mkdir()
        shutil.copy(self.export, inbox)
        # The night that emits the 23 workouts of the export, delivered by each test.
        night = run("nightly", "--inbox", inbox, "--out", self.out, "--tz", "UTC")
        self.assertEqual(night.returncode, 0, night.stderr)

    def start_server(self, **options):
        server = Server(self.folder, token=TOKEN, **options)
        self.addCleanup(server.stop)
        return server

    def start_proxy(self, *options):
        proxy = Proxy(self.folder, *options)
        self.addCleanup(proxy.stop)
        return proxy

    def deliver(self, url, *extra, env=None):
        environment = {name: "" for name in PROXY_VARIABLES}
        environment.update(env or {})
        return run("deliver", "--out", self.out, "--url", url, "--token-file", self.token_file, *extra,
                   env=environment)

    def report(self):
        return json.loads((self.out / "run.json").read_text())["delivery"]

    def applied_starts(self, server):
        """execStartTime of every record the server applied, from the requests' own bodies."""
        return sorted(record["execStartTime"] for request in server.requests() if request["applied"]
                      for record in request["records"])

    # --- a server that echoes the token --------------------------------------------------------

    # The answers to the first 14 batches, each a 400 that echoes the token in one form.
    ECHOES = [
        "rejected; you sent Authorization: {authorization}",
        '{"error": "bad record", "request": {"headers": {"Authorization": "Bearer {token:json}"}}}',
        '{"echo": "{token:unicode}"}',
        "token {token:lower} may not write records",
        "TOKEN {token:upper}",
        "credentials {token:base64}",
        "credentials {token:base64url}",
        "header {token:base64-header}",
        "from /records?access_token={token:percent}",
        "hex {token:hex}",
        "line one {token:split} line two",
        "folded:\n {token:folded}\n(end)",
        # Past the 64 KiB the client reads: 12 and 5 characters of the token are left.
        " " * (BODY_LIMIT - 12) + "{token}",
        " " * (BODY_LIMIT - 5) + "{token}",
    ]

    def test_an_echoed_token_is_kept_nowhere_in_any_form(self):
        for name, form in token_forms(TOKEN).items():
            self.assertTrue(leaks(form), f"the check would not see the {name} form")
        server = self.start_server()
        server.fault(*({"match": {"nth": n + 1}, "action": "status", "status": 400, "body": body}
                       for n, body in enumerate(self.ECHOES)))
        rejected = self.deliver(server.url, "--batch", 1)
        self.assertEqual(rejected.returncode, 65, rejected.stderr)
        report = self.report()
        self.assertEqual((len(report["quarantined"]), report["acknowledgedRecords"]), (14, 9))
        bodies = [entry["body"] for entry in report["quarantined"]]
        # What is left of each answer, worked out by hand: the text around the token, which is
        # one "[token]" however it was written, on one line of at most 200 bytes.
        self.assertEqual(bodies, [
            "rejected; you sent Authorization: Bearer [token]",
            '{"error": "bad record", "request": {"headers": {"Authorization": "Bearer [token]"}}}',
            '{"echo": "[token]"}',
            "token [token] may not write records",
            "TOKEN [token]",
            "credentials [token]",
            "credentials [token]",
            # base64 of "Bearer " + token: its first 9 characters encode "Bearer " alone, the
            # 10th 2 bits of it and 4 of the token, the last ("w", then padding) the token's
            # last 2 bits; the 43 between encode the token alone.
            "header QmVhcmVyIF[token]w==",
            "from /records?access_token=[token]",
            "hex [token]",
            "line one [token] line two",
            "folded: [token] (end)",
            "[token]",
            "[token]",
        ])
        self.assertTrue(all(len(body.encode()) <= 200 for body in bodies))

        # A refusal's answer (403) goes into the reason the run stopped for, on stderr, in the
        # log and in run.json.
        server.fault({"match": {}, "action": "status", "status": 403,
                      "body": "forbidden: {token:json} / {token:lower} / {token:base64}"})
        refused = self.deliver(server.url, "--retry-quarantined")
        self.assertEqual(refused.returncode, 64, refused.stderr)
        self.assertIn("the server refused the credentials", self.report()["stopped"])
        self.assertTrue(self.report()["stopped"].endswith(": forbidden: [token] / [token] / [token]"),
                        self.report()["stopped"])

        places = {"stderr of the first run": rejected.stderr, "stderr of the second run": refused.stderr}
        for name in ("delivery.log", "run.json", ".healthetl-state.json"):
            path = self.out / name
            places[name] = path.read_text()
            self.assertEqual(stat.S_IMODE(path.stat().st_mode), 0o600, f"{name} is readable by others")
        for place, text in places.items():
            self.assertEqual(leaks(text), [], f"the token is in {place}")
        self.assertIn("[token]", places["delivery.log"])
        for path in self.out.rglob("*"):
            if path.is_file():
                self.assertEqual(leaks(path.read_bytes().decode("latin-1")), [], f"the token is in {path}")

    # --- proxies ------------------------------------------------------------------------------

    def test_plain_http_never_goes_through_a_proxy(self):
        server = self.start_server()
        proxy = self.start_proxy()
        every_variable = {name: proxy.url for name in PROXY_VARIABLES if not name.lower().startswith("no_")}
        # A host elsewhere, allowed in plain http: nothing answers at 192.0.2.1 (TEST-NET-1), so
        # the records stay queued; through the proxy they would have been acknowledged.
        elsewhere = self.deliver("http://192.0.2.1:9/records", "--allow-insecure-http", "--timeout", 1,
                                 "--attempts", 1, env=every_variable)
        self.assertEqual(elsewhere.returncode, 75, elsewhere.stderr)
        self.assertEqual((self.report()["acknowledgedRecords"], self.report()["pendingRecords"]), (0, 23))
        self.assertEqual(proxy.requests(), [], "a plain http:// request went to the proxy")

        direct = self.deliver(server.url, env=every_variable)
        self.assertEqual(direct.returncode, 0, direct.stderr)
        self.assertEqual(len(server.requests()), 1)
        self.assertEqual(self.applied_starts(server), self.starts)
        self.assertEqual(proxy.requests(), [], "a plain http:// request went to the proxy")

    def test_https_goes_through_the_proxy_as_a_tunnel_it_cannot_read(self):
        if shutil.which("openssl") is None:
            self.skipTest("needs the openssl command (make deps installs it)")
        # A host no resolver knows: only the proxy, which tunnels every CONNECT to 127.0.0.1,
        # can reach it. The certificate names it, and is trusted through --ca-file.
        host = "records.example.test"
        cert, key = self.folder / "cert.pem", self.folder / "key.pem"
        made = subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
             "-days", "2", "-subj", f"/CN={host}", "-addext", f"subjectAltName=DNS:{host},IP:127.0.0.1"],
            capture_output=True, timeout=60)
        self.assertEqual(made.returncode, 0, made.stderr)
        server = self.start_server(tls=(cert, key))
        port = server.url.split(":")[2].split("/")[0]
        proxy = self.start_proxy()

        # To this machine, https goes direct whatever the variables say: the server's 503 is
        # the answer, and the proxy saw nothing.
        server.fault({"match": {"nth": 1}, "action": "status", "status": 503})
        local = self.deliver(server.url, "--ca-file", cert, "--attempts", 1,
                             env={"HTTPS_PROXY": proxy.url, "https_proxy": proxy.url, "ALL_PROXY": proxy.url})
        self.assertEqual(local.returncode, 75, local.stderr)
        self.assertEqual([r["status"] for r in server.requests()], [503])
        self.assertEqual(proxy.requests(), [], "an https:// request to this machine went to the proxy")

        tunnelled = self.deliver(f"https://{host}:{port}/records", "--ca-file", cert, env={"HTTPS_PROXY": proxy.url})
        self.assertEqual(tunnelled.returncode, 0, tunnelled.stderr)
        self.assertEqual(self.applied_starts(server), self.starts)
        connect, closed = proxy.requests(at_least=2)
        self.assertEqual((connect["method"], connect["target"]), ("CONNECT", f"{host}:{port}"))
        self.assertNotIn("Authorization", connect["headers"])
        self.assertEqual((closed["method"], closed["target"]), ("closed", f"{host}:{port}"))
        self.assertGreater(closed["tunnelled"], 1000)  # the TLS handshake and the request
        self.assertEqual(leaks(closed["clientBytes"]), [], "the proxy could read the token")
        self.assertNotIn("recordUuid", closed["clientBytes"], "the proxy could read the records")

    def test_a_proxy_that_refuses_the_tunnel_is_a_refusal_not_a_retry(self):
        # 407 (credentials wanted) and 403 (host forbidden) come back on every attempt until the
        # setup changes: refused (64), the records left queued; a 502 may pass later (75). Was
        # 75 with "CONNECT tunnel failed, response 407", retried every run for ever.
        for status, code in ((407, 64), (403, 64), (502, 75)):
            with self.subTest(status=status):
                proxy = Proxy(self.folder, "--refuse-connect", str(status))
                try:
                    done = self.deliver("https://records.example.test:8443/records", "--attempts", 2,
                                        "--backoff", 0.01, env={"HTTPS_PROXY": proxy.url})
                    connects = [r for r in proxy.requests(at_least=1) if r["method"] == "CONNECT"]
                finally:
                    proxy.stop()
                    proxy.log.unlink(missing_ok=True)
                    (self.folder / "proxy-port").unlink(missing_ok=True)
                self.assertEqual(done.returncode, code, done.stderr)
                report = self.report()
                self.assertEqual(report["exitCode"], code)
                self.assertEqual((report["acknowledgedRecords"], report["pendingRecords"]), (0, len(self.starts)))
                if code == 64:
                    self.assertIn(f"the proxy refused the tunnel to the server (HTTP {status})", done.stderr)
                    self.assertEqual(len(connects), 1, "a refusal is not tried again")
                else:
                    self.assertEqual(len(connects), 2)
                self.assertEqual(leaks(done.stderr), [])


if __name__ == "__main__":
    unittest.main()
