#!/usr/bin/env python3
"""A stand-in for three flight-status services, for the tests: the real ones are paid services on the internet.
Each answers in the shape its documentation gives (the field names and formats of its documented example answers):

    /aerodatabox/flights/number/<number>/<dateLocal>   AeroDataBox (doc.aerodatabox.com), X-RapidAPI-Key
    /aeroapi/flights/<ident>?start=…&end=…             FlightAware AeroAPI v4, x-apikey
    /aviationstack/v1/flights?access_key=…&flight_iata=…   aviationstack v1, the key in the query

    python3 scripts/flight-status-server.py FOLDER

The flight is FOLDER/flight.json, read at each request: {"code": "BA1436", "origin": "LHR", "destination": "EDI",
"zone": "Europe/London", "scheduled": "2027-03-01T12:00:00Z", "expected": null or an instant, "gate": null,
"terminal": "5", "status": "scheduled" | "delayed" | "cancelled" | "diverted", "divertedTo": null}. A request for
another number gets no flight. FOLDER/mode: `slow` answers after 30 s, `error` with a 500. The key is KEY; a
wrong one gets each service's documented refusal. Prints its port on the first line; logs each request to
FOLDER/requests.log as "SERVICE NUMBER STATUS" (never the key).
"""
import datetime
import http.server
import json
import os
import sys
import time
import urllib.parse
import zoneinfo

FOLDER = sys.argv[1]
KEY = "fs-test-key-5e1f0c9a"


def instant(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def read(name):
    try:
        with open(os.path.join(FOLDER, name)) as file:
            return file.read().strip()
    except OSError:
        return ""


def aerodatabox(flight):
    zone = zoneinfo.ZoneInfo(flight["zone"])

    def times(moment):
        if moment is None:
            return None
        return {"utc": moment.strftime("%Y-%m-%d %H:%MZ"),
                "local": moment.astimezone(zone).isoformat(sep=" ", timespec="minutes")}

    scheduled, expected = instant(flight["scheduled"]), instant(flight.get("expected"))
    departure = {
        "airport": {"icao": "X" + flight["origin"], "iata": flight["origin"], "name": flight["origin"] + " Airport",
                    "timeZone": flight["zone"]},
        "scheduledTime": times(scheduled),
        "terminal": flight.get("terminal"),
        "quality": ["Basic", "Live"],
    }
    if expected:
        departure["revisedTime"] = times(expected)
    if flight.get("gate"):
        departure["gate"] = flight["gate"]
    status = {"scheduled": "Expected", "delayed": "Delayed", "cancelled": "Canceled",
              "diverted": "Diverted"}[flight["status"]]
    return [{
        "departure": departure,
        "arrival": {"airport": {"iata": flight.get("divertedTo") or flight["destination"]}, "quality": ["Basic"]},
        "lastUpdatedUtc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%MZ"),
        "number": flight["code"][:2] + " " + flight["code"][2:],
        "status": status,
        "codeshareStatus": "IsOperator",
        "isCargo": False,
        "airline": {"name": "Airline " + flight["code"][:2], "iata": flight["code"][:2]},
    }]


def aeroapi(flight):
    scheduled, expected = instant(flight["scheduled"]), instant(flight.get("expected"))
    iso = lambda moment: moment.strftime("%Y-%m-%dT%H:%M:%SZ") if moment else None
    delay = int((expected - scheduled).total_seconds()) if expected else 0
    text = {"scheduled": "Scheduled", "delayed": "Scheduled / Delayed", "cancelled": "Cancelled",
            "diverted": "Diverted"}[flight["status"]]
    return {"links": None, "num_pages": 1, "flights": [{
        "ident": flight["code"], "ident_icao": None, "ident_iata": flight["code"],
        "fa_flight_id": flight["code"] + "-1700000000-airline-0001",
        "operator_iata": flight["code"][:2], "flight_number": flight["code"][2:],
        "blocked": False, "diverted": flight["status"] == "diverted", "cancelled": flight["status"] == "cancelled",
        "position_only": False,
        "origin": {"code": flight["origin"], "code_iata": flight["origin"], "timezone": flight["zone"]},
        "destination": {"code_iata": flight.get("divertedTo") or flight["destination"]},
        "departure_delay": delay,
        "scheduled_out": iso(scheduled), "estimated_out": iso(expected or scheduled), "actual_out": None,
        "scheduled_off": iso(scheduled + datetime.timedelta(minutes=15)), "actual_off": None, "actual_on": None,
        "progress_percent": 0, "status": text,
        "gate_origin": flight.get("gate"), "terminal_origin": flight.get("terminal"), "type": "Airline",
    }]}


def aviationstack(flight):
    zone = zoneinfo.ZoneInfo(flight["zone"])
    scheduled, expected = instant(flight["scheduled"]), instant(flight.get("expected"))

    # Its documented example's form; the clock is the airport's, though it says +00:00.
    def local(moment):
        return moment.astimezone(zone).strftime("%Y-%m-%dT%H:%M:%S") + "+00:00" if moment else None

    status = {"scheduled": "scheduled", "delayed": "scheduled", "cancelled": "cancelled",
              "diverted": "diverted"}[flight["status"]]
    return {"pagination": {"limit": 100, "offset": 0, "count": 1, "total": 1}, "data": [{
        "flight_date": scheduled.astimezone(zone).strftime("%Y-%m-%d"),
        "flight_status": status,
        "departure": {"airport": flight["origin"] + " Airport", "timezone": flight["zone"], "iata": flight["origin"],
                      "icao": "X" + flight["origin"], "terminal": flight.get("terminal"), "gate": flight.get("gate"),
                      "delay": int((expected - scheduled).total_seconds() // 60) if expected else None,
                      "scheduled": local(scheduled), "estimated": local(expected or scheduled), "actual": None,
                      "estimated_runway": None, "actual_runway": None},
        "arrival": {"iata": flight.get("divertedTo") or flight["destination"]},
        "airline": {"name": "Airline " + flight["code"][:2], "iata": flight["code"][:2]},
        "flight": {"number": flight["code"][2:], "iata": flight["code"], "icao": None, "codeshared": None},
        "aircraft": None, "live": None,
    }]}


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, service, number, status, body):
        data = json.dumps(body).encode() if body is not None else b""
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            pass
        with open(os.path.join(FOLDER, "requests.log"), "a") as log:
            log.write(f"{service} {number} {status}\n")

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        query = urllib.parse.parse_qs(url.query)
        parts = url.path.strip("/").split("/")
        service = parts[0]
        if service == "aerodatabox" and len(parts) == 5 and parts[1:3] == ["flights", "number"]:
            number, authorized = parts[3], self.headers.get("X-RapidAPI-Key") == KEY
            refusal = {"message": "You are not subscribed to this API."}
        elif service == "aeroapi" and len(parts) == 3 and parts[1] == "flights":
            number, authorized = parts[2], self.headers.get("x-apikey") == KEY
            refusal = {"title": "Invalid API key", "reason": "UNAUTHORIZED",
                       "detail": "Unable to authenticate with supplied API key", "status": 401}
        elif service == "aviationstack" and parts[1:] == ["v1", "flights"]:
            number, authorized = query.get("flight_iata", [""])[0], query.get("access_key", [""])[0] == KEY
            refusal = {"error": {"code": "invalid_access_key",
                                 "message": "You have not supplied a valid API Access Key."}}
        else:
            return self.answer("unknown", "-", 404, {"message": "not found"})
        if not authorized:
            return self.answer(service, number, 401 if service != "aerodatabox" else 403, refusal)
        mode = read("mode")
        if mode == "slow":
            time.sleep(30)
        if mode == "error":
            return self.answer(service, number, 500, {"message": "internal error"})
        flight = json.loads(read("flight.json") or "{}")
        if flight.get("code") != number:
            if service == "aerodatabox":
                return self.answer(service, number, 204, None)
            return self.answer(service, number, 200, {"flights": []} if service == "aeroapi" else {"data": []})
        body = {"aerodatabox": aerodatabox, "aeroapi": aeroapi, "aviationstack": aviationstack}[service](flight)
        self.answer(service, number, 200, body)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
