#!/usr/bin/env python3
"""A workout-record server on 127.0.0.1 for the delivery tests: records every request, injects
faults on demand, and honours Idempotency-Key.

    delivery_server.py --port-file FILE --log FILE --faults FILE [--token T] [--tls CERT KEY]
                       [--ignore-keys]

It binds a free port and writes it to --port-file once it listens. Every request to a path not
starting with `/_` is one POST of a batch; one JSON line per request goes to --log, written and
flushed before the response (so a test can see a request arrive even when the client is killed
while it waits):

    {"n": 3, "path": "/records", "key": "<Idempotency-Key>", "keyOK": true, "uuids": [...],
     "records": [<the request's records, when well formed>],
     "contentType": "application/json", "userAgent": "...", "authorized": true,
     "action": "ok" | "replay" | "status" | "hang" | "drop" | "slow" | "bad", "status": 200 | null,
     "applied": true | false}

A batch is applied (its records accepted) only by "ok" and "slow". With Idempotency-Key honoured
(the default), a key that was applied before is answered 200 again without applying anything
("replay"). The server checks what the client must get right and answers 400 ("bad") otherwise:
a JSON array of objects with exactly the seven string fields, Content-Type application/json, and
an Idempotency-Key equal to the SHA-256 hex of the sorted recordUuids, each followed by "\\n".
With --token, a request without `Authorization: Bearer <token>` gets 401.

Faults: --faults names a JSON file, re-read whenever its content changes (a test rewrites it
between runs), holding a list of rules; each request takes the first rule that matches and has
uses left:

    {"match": {"nth": 2} | {"uuid": "ABC..."} | {}, "times": 1,
     "action": "status", "status": 500, "headers": {"Retry-After": "1"}, "body": "text"}
    {"match": ..., "action": "hang", "seconds": 5}    no answer for that long, then close
    {"match": ..., "action": "drop"}                  close the connection without an answer
    {"match": ..., "action": "slow", "seconds": 5}    apply, then wait that long before the 200

`nth` counts batch requests from 1 since the server started; `uuid` matches a batch holding
that record. In a "status" body, "{authorization}" is replaced by the request's Authorization
header, "{token}" by its bearer token, and "{token:FORM}" by the token in one of the forms of
`token_forms` (a careless server's echoes: JSON-escaped, lower-cased, base64, split across
lines, ...), to check that a client never writes an echoed token anywhere.
"""

import argparse
import base64
import hashlib
import http.server
import json
import os
import ssl
import threading
import time
import urllib.parse

FIELDS = ["recordDate", "execTypeCode", "execStartTime", "execEndTime", "execRuntime", "deviceTypeCode", "recordUuid"]


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.count = 0
        self.applied_keys = set()
        self.rules_text = None
        self.rules = []
        self.log = open(args.log, "a", encoding="utf-8")

    def take_rule(self, n, uuids):
        try:
            with open(self.args.faults, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            text = "[]"
        if text != self.rules_text:
            self.rules_text = text
            self.rules = [dict(rule, left=rule.get("times", 1)) for rule in json.loads(text)]
        for rule in self.rules:
            match = rule.get("match", {})
            if rule["left"] <= 0:
                continue
            if "nth" in match and match["nth"] != n:
                continue
            if "uuid" in match and match["uuid"] not in uuids:
                continue
            rule["left"] -= 1
            return rule
        return None

    def record(self, entry):
        self.log.write(json.dumps(entry, sort_keys=True) + "\n")
        self.log.flush()


def token_forms(token):
    """The forms in which a server may echo a bearer token back, by name."""
    raw = token.encode()
    half = len(token) // 2
    return {
        "json": token.replace("/", "\\/"),  # PHP's json_encode escapes every slash
        "unicode": "".join("\\u%04x" % ord(c) for c in token),  # every character a \\u escape
        "lower": token.lower(),
        "upper": token.upper(),
        "base64": base64.b64encode(raw).decode(),
        "base64url": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        # The whole header value encoded: the token starts 7 bytes in, so its base64 is aligned
        # differently from the token's own.
        "base64-header": base64.b64encode(b"Bearer " + raw).decode(),
        "percent": urllib.parse.quote(token, safe=""),
        "hex": raw.hex(),
        "split": token[:half] + "\r\n" + token[half:],
        "folded": "\n ".join(token[i:i + 5] for i in range(0, len(token), 5)),
    }


def echo(template, authorization):
    """A fault's body with the request's credentials put in where the template asks."""
    token = authorization[len("Bearer "):] if authorization.startswith("Bearer ") else ""
    text = template.replace("{authorization}", authorization).replace("{token}", token)
    for name, form in token_forms(token).items():
        text = text.replace("{token:%s}" % name, form)
    return text


def expected_key(uuids):
    return hashlib.sha256("".join(u + "\n" for u in sorted(uuids, key=lambda u: u.encode())).encode()).hexdigest()


def well_formed(records):
    return isinstance(records, list) and records and all(
        isinstance(r, dict) and list(r.keys()) == FIELDS and all(isinstance(v, str) for v in r.values())
        for r in records)


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "delivery-test/1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, headers=None):
        data = body.encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json" if body.startswith("{") else "text/plain")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        state = self.server.state
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            records = json.loads(body)
        except ValueError:
            records = None
        uuids = [r.get("recordUuid") for r in records] if isinstance(records, list) and all(
            isinstance(r, dict) for r in records) else []
        key = self.headers.get("Idempotency-Key")
        authorization = self.headers.get("Authorization") or ""
        with state.lock:
            state.count += 1
            entry = {
                "n": state.count, "path": self.path, "key": key, "uuids": uuids, "time": time.time(),
                "keyOK": well_formed(records) and key == expected_key(uuids),
                "contentType": self.headers.get("Content-Type"), "userAgent": self.headers.get("User-Agent"),
                "authorized": state.args.token is None or authorization == "Bearer " + state.args.token,
                "wellFormed": bool(well_formed(records)), "applied": False, "status": None,
                "records": records if well_formed(records) else None,
            }
            rule = state.take_rule(state.count, uuids)
            action = rule["action"] if rule else "ok"
            if not entry["authorized"]:
                action = "unauthorized"
            elif action in ("ok", "slow") and not (entry["keyOK"] and entry["contentType"] == "application/json"):
                action = "bad"
            elif action == "ok" and key in state.applied_keys and not state.args.ignore_keys:
                action = "replay"
            if action in ("ok", "slow"):
                state.applied_keys.add(key)
                entry["applied"] = True
            entry["action"] = action
            entry["status"] = {"ok": 200, "slow": 200, "replay": 200, "bad": 400, "unauthorized": 401}.get(
                action, rule.get("status") if rule else None)
            state.record(entry)
        if action == "drop":
            self.close_connection = True
            return
        if action == "hang":
            time.sleep(rule.get("seconds", 5))
            self.close_connection = True
            return
        if action == "slow":
            time.sleep(rule.get("seconds", 5))
        if action == "status":
            text = echo(rule.get("body", ""), authorization)
            self.answer(rule["status"], text, rule.get("headers"))
        elif action == "bad":
            self.answer(400, '{"error": "malformed batch or wrong Idempotency-Key"}')
        elif action == "unauthorized":
            self.answer(401, '{"error": "unauthorized"}')
        else:
            self.answer(200, json.dumps({"accepted": len(uuids), "replayed": action == "replay"}))


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    tls = None

    def finish_request(self, request, client_address):
        # The TLS handshake happens here, on the request's own thread, so a client that fails
        # it (or never starts it) cannot stall the accepting thread.
        if self.tls is not None:
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return
        super().finish_request(request, client_address)

    def handle_error(self, request, client_address):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--faults", required=True)
    parser.add_argument("--token")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    parser.add_argument("--ignore-keys", action="store_true")
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.state = State(args)
    if args.tls:
        server.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server.tls.load_cert_chain(*args.tls)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
