#!/usr/bin/env python3
"""A small HTTP server for calwatch's feed tests and benchmarks, on loopback: serves FOLDER/feed.ics (and any
FOLDER/NAME as /f/NAME) with ETag, Last-Modified, 304 and gzip, and the ways servers fail (redirect chains, slow answers, 503 with Retry-After, bodies shorter than
their Content-Length or cut before END:VCALENDAR, an HTML sign-in page, 410). Prints its port on the first line; logs each request to FOLDER/requests.log as
`METHOD PATH STATUS BYTES`.

    python3 scripts/feed-server.py FOLDER
"""
import email.utils
import gzip
import hashlib
import http.server
import os
import sys
import time

FOLDER = sys.argv[1]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body=b"", headers=()):
        # Logged before the answer goes, so a client that has it finds it in the log.
        self.record(status, len(body))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def record(self, status, size):
        with open(os.path.join(FOLDER, "requests.log"), "a") as log:
            log.write(f"GET {self.path} {status} {size}\n")

    def do_GET(self):
        path = self.path.split("?")[0]
        if path.startswith("/redirect/"):
            left = int(path.rsplit("/", 1)[1])
            return self.answer(302, headers=[("Location", f"/redirect/{left - 1}" if left > 1 else "/feed.ics")])
        if path == "/slow" or path.startswith("/slow/"):
            # /slow answers after 5 s, /slow/N after N s; FOLDER/asked says that it has begun.
            open(os.path.join(FOLDER, "asked"), "w").close()
            time.sleep(float(path[len("/slow/"):]) if path.startswith("/slow/") else 5)
            return self.feed()
        if path == "/unavailable":
            return self.answer(503, b"busy", [("Retry-After", "120")])
        if path == "/gone":
            return self.answer(410, b"gone")
        if path == "/signin":
            return self.answer(200, b"<!DOCTYPE html><html><body>Sign in</body></html>", [("Content-Type", "text/html")])
        if path == "/cut":
            # No Content-Length: the end of the connection ends the body, here before the calendar's end.
            with open(os.path.join(FOLDER, "feed.ics"), "rb") as file:
                body = file.read()
            self.record(200, len(body) // 2)
            self.send_response(200)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.close_connection = True
            return
        if path == "/truncated":
            with open(os.path.join(FOLDER, "feed.ics"), "rb") as file:
                body = file.read()
            self.record(200, len(body) // 2)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        if path.startswith("/f/") and "/" not in path[3:] and os.path.isfile(os.path.join(FOLDER, path[3:])):
            return self.feed(path[3:])
        return self.feed()

    def feed(self, name="feed.ics"):
        with open(os.path.join(FOLDER, name), "rb") as file:
            body = file.read()
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        modified = email.utils.formatdate(os.path.getmtime(os.path.join(FOLDER, name)), usegmt=True)
        if self.headers.get("If-None-Match") == etag:
            return self.answer(304, headers=[("ETag", etag)])
        headers = [("ETag", etag), ("Last-Modified", modified), ("Content-Type", "text/calendar; charset=utf-8")]
        if "gzip" in (self.headers.get("Accept-Encoding") or ""):
            body = gzip.compress(body)
            headers.append(("Content-Encoding", "gzip"))
        return self.answer(200, body, headers)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
