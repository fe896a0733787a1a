#!/usr/bin/env python3
"""A stand-in for an airline's wallet pass web service (PassKit's "Wallet Passes web service", the part a wallet
calls to get a pass's latest version), for the tests: the real ones are the airlines'.

    python3 scripts/pass-web-service.py FOLDER BOARDING

Writes FOLDER/pass.pkpass, a boarding pass boarding at BOARDING (an ISO 8601 instant) whose webServiceURL is this
server and whose authenticationToken is TOKEN, then serves GET /v1/passes/<passTypeIdentifier>/<serialNumber>:
401 without `Authorization: ApplePass TOKEN`; by FOLDER/mode, `same` (the default) 304 when If-Modified-Since is
given, `moved` 200 with a new version (gate A7, boarding 35 minutes later, a Last-Modified header), `redirect` a
302 to /elsewhere. Prints its port on the first line; logs each request to FOLDER/requests.log as
"METHOD PATH STATUS AUTHORIZATION-OK IF-MODIFIED-SINCE".
"""
import datetime
import http.server
import importlib.util
import io
import os
import sys

FOLDER, BOARDING = sys.argv[1], sys.argv[2]
TOKEN = "vxwxd7J8AlNNFPS8k0a0FfUFtq0ewzFdc"
spec = importlib.util.spec_from_file_location(
    "fixtures", os.path.join(os.path.dirname(os.path.abspath(__file__)), "pkpass-fixtures.py"))
fixtures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fixtures)


def pkpass(gate, boarding, base):
    buffer = io.BytesIO()
    document = fixtures.pass_json(gate=gate, boarding=boarding, web_service=(base, TOKEN))
    fixtures.archive(buffer, {"pass.json": document, "icon.png": b"\x89PNG\r\n\x1a\n" + bytes(64)})
    return buffer.getvalue()


def read(name):
    try:
        with open(os.path.join(FOLDER, name)) as file:
            return file.read().strip()
    except OSError:
        return ""


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        authorized = self.headers.get("Authorization") == "ApplePass " + TOKEN
        with open(os.path.join(FOLDER, "requests.log"), "a") as log:
            log.write(f"GET {self.path} {status} {authorized} {self.headers.get('If-Modified-Since', '-')}\n")

    def do_GET(self):
        if not self.path.startswith("/v1/passes/"):
            return self.answer(404)
        if self.headers.get("Authorization") != "ApplePass " + TOKEN:
            return self.answer(401)
        mode = read("mode") or "same"
        if mode == "redirect":
            return self.answer(302, headers=[("Location", "/elsewhere")])
        if mode == "same" and self.headers.get("If-Modified-Since"):
            return self.answer(304)
        boarding = datetime.datetime.fromisoformat(BOARDING.replace("Z", "+00:00"))
        gate = "B12"
        if mode == "moved":
            boarding += datetime.timedelta(minutes=35)
            gate = "A7"
        body = pkpass(gate, boarding.strftime("%Y-%m-%dT%H:%M:%SZ"), BASE)
        self.answer(200, body, [("Content-Type", "application/vnd.apple.pkpass"),
                                ("Last-Modified", "Mon, 22 Nov 2027 18:00:00 GMT")])


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
BASE = f"http://127.0.0.1:{server.server_address[1]}/"
with open(os.path.join(FOLDER, "pass.pkpass"), "wb") as f:
    f.write(pkpass("B12", BOARDING, BASE))
print(server.server_address[1], flush=True)
server.serve_forever()
