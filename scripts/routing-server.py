#!/usr/bin/env python3
"""A stand-in for a routing engine, for the tests: OSRM and Valhalla are not in Debian and have no wheel that builds
their tiles, so this answers in each engine's documented JSON instead.

    python3 scripts/routing-server.py FOLDER

- OSRM: GET /route/v1/{profile}/{lon},{lat};{lon},{lat} answers {"code":"Ok","routes":[{"duration":…,"distance":…}]}
  (http://project-osrm.org/docs/v5.24.0/api/#route-service).
- Valhalla: POST /route with {"locations":[{lat,lon},{lat,lon}],"costing":…} answers
  {"trip":{"summary":{"time":…,"length":…},"status":0}} (https://valhalla.github.io/valhalla/api/turn-by-turn/api-reference/).

The duration is 60 s per 0.01 degree of latitude and longitude between the points (a town at 36 km/h), times 1.5
for cycling and 4 for walking. FOLDER/mode, when present, changes every answer: `traffic` (every way takes twice
as long), `noroute` (OSRM's
{"code":"NoRoute"} with HTTP 400, Valhalla's error 442), `busy` (HTTP 429), `absurd` (a duration of -5 s), `slow`
(the answer after 20 s). Prints its port on the first line; logs each request to FOLDER/requests.log as
"METHOD PATH STATUS".
"""
import json
import os
import sys
import time
import http.server

FOLDER = sys.argv[1]
FACTORS = {"driving": 1, "car": 1, "auto": 1, "cycling": 1.5, "bike": 1.5, "bicycle": 1.5, "walking": 4,
           "foot": 4, "pedestrian": 4}


def seconds(a, b, profile):
    degrees = abs(a[0] - b[0]) + abs(a[1] - b[1])
    try:
        with open(os.path.join(FOLDER, "mode")) as file:
            traffic = 2 if file.read().strip() == "traffic" else 1
    except OSError:
        traffic = 1
    return round(degrees / 0.01 * 60 * FACTORS.get(profile, 1) * traffic, 1)


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def mode(self):
        try:
            with open(os.path.join(FOLDER, "mode")) as file:
                return file.read().strip()
        except OSError:
            return ""

    def answer(self, status, document):
        body = json.dumps(document).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        with open(os.path.join(FOLDER, "requests.log"), "a") as log:
            log.write(f"{self.command} {self.path} {status}\n")

    def failure(self, engine):
        mode = self.mode()
        if mode == "slow":
            time.sleep(20)
        if mode == "busy":
            return (429, {"message": "Too Many Requests"})
        if mode == "noroute":
            if engine == "osrm":
                return (400, {"code": "NoRoute", "message": "Impossible route between points"})
            return (400, {"error_code": 442, "error": "No path could be found for input", "status_code": 400})
        return None

    def do_GET(self):
        parts = self.path.split("?")[0].split("/")
        if len(parts) != 5 or parts[1:3] != ["route", "v1"]:
            return self.answer(400, {"code": "InvalidUrl", "message": "URL string malformed"})
        failed = self.failure("osrm")
        if failed:
            return self.answer(*failed)
        try:
            points = [tuple(float(x) for x in pair.split(",")) for pair in parts[4].split(";")]
            (lon1, lat1), (lon2, lat2) = points
        except ValueError:
            return self.answer(400, {"code": "InvalidQuery", "message": "Query string malformed"})
        duration = -5 if self.mode() == "absurd" else seconds((lat1, lon1), (lat2, lon2), parts[3])
        return self.answer(200, {"code": "Ok", "routes": [{"duration": duration, "distance": abs(duration) * 10}],
                                 "waypoints": []})

    def do_POST(self):
        if self.path.split("?")[0] != "/route":
            return self.answer(404, {"error_code": 106, "error": "Try any of: '/route'"})
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length))
            (a, b) = [(point["lat"], point["lon"]) for point in request["locations"]]
        except (ValueError, KeyError, TypeError):
            return self.answer(400, {"error_code": 100, "error": "Failed to parse json request"})
        failed = self.failure("valhalla")
        if failed:
            return self.answer(*failed)
        duration = -5 if self.mode() == "absurd" else seconds(a, b, request.get("costing", "auto"))
        return self.answer(200, {"trip": {"summary": {"time": duration, "length": abs(duration) / 100}, "status": 0,
                                          "units": "kilometers"}})


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
