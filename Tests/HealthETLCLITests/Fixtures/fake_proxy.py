#!/usr/bin/env python3
"""A forward proxy on 127.0.0.1 for the delivery tests: the proxy a client must not trust with a
plain http:// request, and may use for an https:// one.

    fake_proxy.py --port-file FILE --log FILE [--refuse-connect STATUS]

It binds a free port and writes it to --port-file once it listens. One JSON line per request
goes to --log, written and flushed before the answer:

    {"method": "POST", "target": "http://127.0.0.1:8080/records", "headers": {...},
     "body": "<the request body>"}
    {"method": "CONNECT", "target": "records.example.test:8443", "headers": {...}}
    {"method": "closed", "target": "records.example.test:8443",
     "tunnelled": <bytes carried from the client to the server>,
     "clientBytes": "<everything the client sent through the tunnel, latin-1>"}

A plain request (any method but CONNECT) is never forwarded: the proxy answers 200 with
`{"accepted": true}`, as a careless or hostile proxy could, so a client that sends a batch
through it would count the batch as acknowledged. A CONNECT to HOST:PORT opens a tunnel to
127.0.0.1:PORT whatever HOST is (the tests name a host no resolver knows, so only the proxy
could have reached it) and carries bytes both ways until either side closes; what passed through
the tunnel is logged ("closed") once it closes. With --refuse-connect STATUS (407, 403, 502, …)
every CONNECT is logged and answered with that status instead, as a proxy that wants
credentials (407, with `Proxy-Authenticate`) or refuses the host does.
"""

import argparse
import http.server
import json
import os
import select
import socket
import threading


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-proxy/1"

    def log_message(self, *args):
        pass

    def record(self, entry):
        with self.server.lock:
            self.server.log.write(json.dumps(entry, sort_keys=True) + "\n")
            self.server.log.flush()

    def answer_anything(self):
        length = int(self.headers.get("Content-Length", 0))
        body = self.rfile.read(length) if length else b""
        self.record({"method": self.command, "target": self.path, "headers": dict(self.headers),
                     "body": body.decode("latin-1")})
        data = b'{"accepted": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = answer_anything

    def do_CONNECT(self):
        self.record({"method": "CONNECT", "target": self.path, "headers": dict(self.headers)})
        if self.server.refuse_connect:
            body = b"tunnel refused by the proxy"
            self.send_response(self.server.refuse_connect)
            if self.server.refuse_connect == 407:
                self.send_header("Proxy-Authenticate", 'Basic realm="fake-proxy"')
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        port = int(self.path.rsplit(":", 1)[1])
        try:
            upstream = socket.create_connection(("127.0.0.1", port), timeout=10)
        except OSError:
            self.send_error(502)
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        self.wfile.flush()
        client = self.connection
        sent = bytearray()
        try:
            while True:
                readable, _, _ = select.select([client, upstream], [], [], 30)
                if not readable:
                    break
                closed = False
                for source in readable:
                    data = source.recv(65536)
                    if not data:
                        closed = True
                        break
                    if source is client:
                        sent += data
                        upstream.sendall(data)
                    else:
                        client.sendall(data)
                if closed:
                    break
        except OSError:
            pass
        finally:
            upstream.close()
            self.close_connection = True
        self.record({"method": "closed", "target": self.path, "tunnelled": len(sent),
                     "clientBytes": sent.decode("latin-1")})


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--refuse-connect", type=int, default=0)
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.refuse_connect = args.refuse_connect
    server.lock = threading.Lock()
    server.log = open(args.log, "a", encoding="utf-8")
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
