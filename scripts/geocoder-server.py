#!/usr/bin/env python3
"""A stand-in for a Nominatim instance, for the tests: Nominatim needs a PostGIS import of OpenStreetMap data and is
not in Debian, so this answers its documented search API from a small table instead.

    python3 scripts/geocoder-server.py FOLDER

GET /search?q=…&format=jsonv2&limit=1 answers a list of places, each with "lat" and "lon" as text, "display_name"
and more (https://nominatim.org/release-docs/latest/api/Search/); an address it does not know gives []. A request
without a User-Agent is refused with 403, as the public instance's usage policy says it may be. FOLDER/mode, when
present, changes every answer: `down` (HTTP 503 with Nominatim's error document). Prints its port on the first
line; logs each request to FOLDER/requests.log as "METHOD QUERY STATUS SECONDS USER-AGENT", tab-separated.
"""
import json
import os
import sys
import time
import http.server
import urllib.parse

FOLDER = sys.argv[1]
PLACES = {
    "kastanienallee 12, 10435 berlin": ("52.5386400", "13.4095600", "12, Kastanienallee, Prenzlauer Berg, Berlin"),
    "alexanderplatz 1, berlin": ("52.5219184", "13.4132147", "1, Alexanderplatz, Mitte, Berlin"),
    "marienplatz 8, münchen": ("48.1373932", "11.5754485", "8, Marienplatz, Altstadt, München"),
}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, document, query=""):
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        agent = self.headers.get("User-Agent") or "-"
        with open(os.path.join(FOLDER, "requests.log"), "a") as log:
            log.write(f"{self.command}\t{query}\t{status}\t{time.time():.3f}\t{agent}\n")

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path.rstrip("/") != "/search":
            return self.answer(404, {"error": {"code": 404, "message": "Not Found"}})
        query = urllib.parse.parse_qs(url.query).get("q", [""])[0]
        if not self.headers.get("User-Agent"):
            return self.answer(403, {"error": {"code": 403, "message": "Access blocked: no User-Agent"}}, query)
        try:
            with open(os.path.join(FOLDER, "mode")) as file:
                mode = file.read().strip()
        except OSError:
            mode = ""
        if mode == "down":
            return self.answer(503, {"error": {"code": 503, "message": "Service Unavailable"}}, query)
        found = PLACES.get(" ".join(query.lower().split()))
        if query.lower() == "berlin":
            found = ("52.5170365", "13.3888599", "Berlin, Deutschland")
        if not found:
            return self.answer(200, [], query)
        lat, lon, name = found
        return self.answer(200, [{"place_id": 1, "licence": "Data © OpenStreetMap contributors, ODbL 1.0.",
                                  "osm_type": "node", "lat": lat, "lon": lon, "display_name": name,
                                  "category": "place", "type": "house", "importance": 0.5}], query)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
