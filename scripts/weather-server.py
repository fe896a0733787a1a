#!/usr/bin/env python3
"""A stand-in for an Open-Meteo forecast server, for the tests: the service is self-hostable but not in Debian, so
this answers its documented JSON (https://open-meteo.com/en/docs) instead.

    python3 scripts/weather-server.py FOLDER

GET /v1/forecast?latitude=…&longitude=…&hourly=…&timeformat=unixtime&timezone=GMT&start_date=D&end_date=D answers
{"latitude", "longitude", "elevation", "generationtime_ms", "utc_offset_seconds", "timezone",
"timezone_abbreviation", "hourly": {"time": [unix seconds…], <variable>: [values…]}, "hourly_units": {"time":
"unixtime", <variable>: unit}} for the 24 hours of the day asked, with the variables asked for. Every hour has the
conditions of FOLDER/weather.json ({"rain": mm, "showers": mm, "snowfall": cm, "temperature_2m": °C, "visibility":
m}; dry and 15 °C without it). FOLDER/mode `error` answers the documented error ({"error": true, "reason": …},
HTTP 400), `busy` HTTP 429. Prints its port on the first line; logs each request to FOLDER/requests.log as
"METHOD PATH STATUS".
"""
import calendar
import datetime
import http.server
import json
import os
import sys
import urllib.parse

FOLDER = sys.argv[1]
UNITS = {"rain": "mm", "showers": "mm", "snowfall": "cm", "temperature_2m": "°C", "visibility": "m",
         "precipitation": "mm"}
DRY = {"rain": 0.0, "showers": 0.0, "snowfall": 0.0, "temperature_2m": 15.0, "visibility": 24140.0,
       "precipitation": 0.0}


def read(name):
    try:
        with open(os.path.join(FOLDER, name)) as file:
            return file.read().strip()
    except OSError:
        return ""


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, document):
        body = json.dumps(document, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        with open(os.path.join(FOLDER, "requests.log"), "a") as log:
            log.write(f"{self.command} {self.path} {status}\n")

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        mode = read("mode")
        if url.path != "/v1/forecast":
            return self.answer(404, {"error": True, "reason": "Not Found"})
        if mode == "busy":
            return self.answer(429, {"error": True, "reason": "Too many concurrent requests"})
        variables = [v for v in query.get("hourly", "").split(",") if v]
        unknown = [v for v in variables if v not in UNITS]
        if mode == "error" or unknown or "latitude" not in query or "longitude" not in query:
            return self.answer(400, {"error": True, "reason": "Cannot initialize WeatherVariable from invalid String "
                                     f"value {(unknown or ['?'])[0]} for key hourly"})
        day = datetime.date.fromisoformat(query.get("start_date", "2027-03-08"))
        start = calendar.timegm(day.timetuple())
        conditions = dict(DRY)
        if read("weather.json"):
            conditions.update(json.loads(read("weather.json")))
        hourly = {"time": [start + 3600 * hour for hour in range(24)]}
        for variable in variables:
            hourly[variable] = [conditions[variable]] * 24
        units = {"time": "unixtime"}
        units.update({variable: UNITS[variable] for variable in variables})
        self.answer(200, {
            "latitude": float(query["latitude"]), "longitude": float(query["longitude"]), "elevation": 38.0,
            "generationtime_ms": 0.2, "utc_offset_seconds": 0, "timezone": "GMT", "timezone_abbreviation": "GMT",
            "hourly_units": units, "hourly": hourly,
        })


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
