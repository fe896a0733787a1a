#!/usr/bin/env python3
"""A webhook receiver for the tests: checks each request's Standard Webhooks signature with Python's own hmac
(an implementation other than calwatch's), answers as told, and logs what it received.

    python3 scripts/webhook-server.py FOLDER [SECRET]

SECRET is the signing secret (`whsec_` and base64, or plain text); without it signatures are not checked.
FOLDER/answers, when present, holds one answer a line, used in order and then 200 for the rest: a status, and
for a retry its Retry-After seconds ("503 2") or, for a 2xx, `big` for a body of 1 MiB ("200 big"), or `hang` (no
answer for 30 s) or `reset` (the connection closed without an answer). Prints its port on the first line; logs each request to
FOLDER/requests.jsonl as {"status", "path", "verified", "headers" (lower-case names), "body"}.

It also stands in for ntfy and Gotify (neither is in Debian): the tests read the JSON they were sent and compare it
with the request shapes those services document.
"""
import base64
import hashlib
import hmac
import http.server
import json
import os
import sys
import time

FOLDER = sys.argv[1]
SECRET = sys.argv[2] if len(sys.argv) > 2 else None


def key():
    if SECRET.startswith("whsec_"):
        return base64.b64decode(SECRET[6:])
    return SECRET.encode()


def verified(headers, body):
    if SECRET is None:
        return None
    signed = f"{headers.get('webhook-id')}.{headers.get('webhook-timestamp')}.".encode() + body
    expected = base64.b64encode(hmac.new(key(), signed, hashlib.sha256).digest()).decode()
    given = headers.get("webhook-signature") or ""
    return any(part == "v1," + expected for part in given.split(" "))


def next_answer():
    path = os.path.join(FOLDER, "answers")
    try:
        with open(path) as answers:
            lines = [line for line in answers.read().split("\n") if line.strip()]
    except FileNotFoundError:
        return 200, None
    if not lines:
        return 200, None
    with open(path, "w") as answers:
        answers.write("\n".join(lines[1:]) + "\n")
    parts = lines[0].split()
    if parts[0] in ("hang", "reset"):
        return parts[0], None
    return int(parts[0]), (parts[1] if len(parts) > 1 else None)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        status, retry_after = next_answer()
        if status == "hang":
            time.sleep(30)
            return
        if status == "reset":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        with open(os.path.join(FOLDER, "requests.jsonl"), "a") as log:
            log.write(json.dumps({"status": status, "path": self.path, "verified": verified(headers, body),
                                  "headers": headers,
                                  "body": body.decode("utf-8", "replace")}) + "\n")
        answer = b"ok\n" if status < 300 else b"bad event: no\nsecond line\n"
        if retry_after == "big":
            answer, retry_after = b"x" * (1 << 20), None
        self.send_response(status)
        if retry_after:
            self.send_header("Retry-After", retry_after)
        if 300 <= status < 400:
            self.send_header("Location", "http://127.0.0.1:9/elsewhere")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
