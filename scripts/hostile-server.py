#!/usr/bin/env python3
"""A server that means harm, on loopback, for calwatch's tests: every way a feed or CalDAV server can try to hang,
exhaust or trick a client. Prints its port on the first line; logs each request to FOLDER/requests.log as
`METHOD PATH AUTH` (AUTH is `auth` when an Authorization header came, else `-`).

    python3 scripts/hostile-server.py FOLDER [--tls CERT KEY]   (--tls: HTTPS with that certificate)

Routes (any method):
  /trickle          headers, then a byte of the calendar every 2 s, for ever (slowloris)
  /slow-headers     the status line, then a header byte every 2 s
  /endless          a chunked body with no end, as fast as the client reads
  /huge             Content-Length of 1 GB, and that much, as fast as the client reads
  /bomb             a gzip body of 50 KB that decodes to 48 MB: a calendar's first line, then zeros
  /lying            Content-Length 100000, 100 bytes, then the connection closed
  /headers-forever  headers, one after another, for ever
  /to-other-host/P  307 to the same path P on `localhost` (another origin than 127.0.0.1)
  /to-other-port/N  307 to 127.0.0.1:N/echo
  /to-plain/N       301 to http://127.0.0.1:N/echo (from https, a downgrade)
  /echo             a calendar; the log tells whether credentials came
  /not-modified     304 to a request that was not conditional
  /html-calendar    200, BEGIN:VCALENDAR and an HTML page, then END:VCALENDAR
  /dav/             a CalDAV home with two calendars: /dav/good/ (empty) and /dav/bad/, which answers 403
"""
import gzip
import http.server
import io
import os
import sys
import time

FOLDER = sys.argv[1]
CALENDAR = (
    b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//hostile//EN\r\nBEGIN:VEVENT\r\nUID:echo\r\n"
    b"DTSTAMP:20270101T000000Z\r\nDTSTART:20270301T090000Z\r\nSUMMARY:Echo\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


BOMB = []


def bomb():
    """48 MB of zeros after a calendar's first line, gzipped (about 1000:1, as far as gzip goes); made once."""
    if BOMB:
        return BOMB[0]
    out = io.BytesIO()
    block = bytes(1 << 20)
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as zipped:
        zipped.write(b"BEGIN:VCALENDAR\r\n")
        for _ in range(48):
            zipped.write(block)
    BOMB.append(out.getvalue())
    return BOMB[0]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def record(self):
        with open(os.path.join(FOLDER, "requests.log"), "a") as log:
            auth = "auth" if self.headers.get("Authorization") else "-"
            log.write(f"{self.command} {self.path} {auth}\n")

    def handle_any(self):
        self.record()
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        path = self.path.split("?")[0]
        try:
            self.route(path)
        except (BrokenPipeError, ConnectionResetError):
            pass

    do_GET = do_PROPFIND = do_REPORT = do_POST = handle_any

    def route(self, path):
        if path == "/trickle":
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            for byte in CALENDAR * 1000:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(2)
        elif path == "/slow-headers":
            self.wfile.write(b"HTTP/1.1 200 OK\r\n")
            for byte in b"X-Slow: " + b"a" * 10000:
                self.wfile.write(bytes([byte]))
                self.wfile.flush()
                time.sleep(2)
        elif path == "/endless":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = CALENDAR * 100
            frame = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
            while True:
                self.wfile.write(frame)
        elif path == "/huge":
            self.send_response(200)
            self.send_header("Content-Length", str(1 << 30))
            self.end_headers()
            block = CALENDAR * 1000
            sent = 0
            while sent < 1 << 30:
                self.wfile.write(block)
                sent += len(block)
        elif path == "/bomb":
            body = bomb()
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif path == "/lying":
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(CALENDAR[:100])
            self.wfile.flush()
            self.close_connection = True
        elif path == "/headers-forever":
            self.send_response(200)
            number = 0
            while True:
                self.send_header(f"X-Header-{number}", "a" * 100)
                self.flush_headers()
                number += 1
        elif path.startswith("/to-other-host/"):
            port = self.server.server_address[1]
            self.answer(307, headers=[("Location", f"http://localhost:{port}/{path[len('/to-other-host/'):]}")])
        elif path.startswith("/to-plain/"):
            self.answer(301, headers=[("Location", f"http://127.0.0.1:{path.rsplit('/', 1)[1]}/echo")])
        elif path.startswith("/to-other-port/"):
            self.answer(307, headers=[("Location", f"http://127.0.0.1:{path.rsplit('/', 1)[1]}/echo")])
        elif path == "/not-modified":
            self.answer(304)
        elif path in ("/dav/", "/dav/good/"):
            calendars = ["/dav/good/", "/dav/bad/"] if path == "/dav/" and self.headers.get("Depth") == "1" else []
            body = '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" ' \
                'xmlns:cs="http://calendarserver.org/ns/">' + self.dav_response(path, home=path == "/dav/") + \
                "".join(self.dav_response(href, calendar=True) for href in calendars) + "</d:multistatus>"
            self.answer(207, body.encode(), [("Content-Type", "application/xml")])
        elif path == "/dav/bad/":
            self.answer(403, b"forbidden")
        elif path == "/html-calendar":
            body = b"BEGIN:VCALENDAR\r\n<!DOCTYPE html>\r\n<html><body>\r\n<p>Sign in</p>\r\n</body></html>\r\nEND:VCALENDAR\r\n"
            self.answer(200, body)
        else:
            self.answer(200, CALENDAR, [("Content-Type", "text/calendar")])

    @staticmethod
    def dav_response(href, home=False, calendar=False):
        kind = "<d:collection/><c:calendar/>" if calendar else "<d:collection/>"
        extra = f"<c:calendar-home-set><d:href>{href}</d:href></c:calendar-home-set>" if home else ""
        extra += f"<cs:getctag>{href}1</cs:getctag><d:displayname>{href.strip('/').split('/')[-1]}</d:displayname>" \
            if calendar else ""
        return f"<d:response><d:href>{href}</d:href><d:propstat><d:prop><d:resourcetype>{kind}</d:resourcetype>" \
            f"{extra}</d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"

    def answer(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    # IPv4 and `localhost`, which resolves to 127.0.0.1 here as well.
    address_family = __import__("socket").AF_INET


server = Server(("127.0.0.1", 0), Handler)
if "--tls" in sys.argv:
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    at = sys.argv.index("--tls")
    context.load_cert_chain(sys.argv[at + 1], sys.argv[at + 2])
    server.socket = context.wrap_socket(server.socket, server_side=True)
print(server.server_address[1], flush=True)
server.serve_forever()
