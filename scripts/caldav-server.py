#!/usr/bin/env python3
"""A CalDAV collection of ITEMS generated items that answers as fast as Python can, on loopback: for measuring
calwatch's own part of a first sync of many items, which Radicale's own time would hide (Radicale's figure is
measured beside it). Prints its port on the first line; logs each request to FOLDER/requests.log as
`METHOD PATH SECONDS BYTES`.

    python3 scripts/caldav-server.py FOLDER ITEMS

One collection at /cal/ (sync-token, getctag, displayname "Work"): PROPFIND of it at depth 0, REPORT
sync-collection (every item's href and etag), REPORT calendar-multiget (the items asked for). Each item is one
event in Europe/Berlin with the VTIMEZONE a server writes into every item, spread over the 60 days from today.
"""
import datetime as dt
import http.server
import os
import re
import sys
import time
from xml.sax.saxutils import escape

FOLDER, ITEMS = sys.argv[1], int(sys.argv[2])
ZONE = (
    "BEGIN:VTIMEZONE\r\nTZID:Europe/Berlin\r\nBEGIN:DAYLIGHT\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\n"
    "TZNAME:CEST\r\nDTSTART:19700329T020000\r\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r\nEND:DAYLIGHT\r\n"
    "BEGIN:STANDARD\r\nTZOFFSETFROM:+0200\r\nTZOFFSETTO:+0100\r\nTZNAME:CET\r\nDTSTART:19701025T030000\r\n"
    "RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
)
FIRST = dt.datetime.combine(dt.date.today(), dt.time(8, 0))


def item(number: int) -> str:
    start = FIRST + dt.timedelta(minutes=(number * 37) % (60 * 24 * 60))
    stamp = "%Y%m%dT%H%M%S"
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calwatch benchmarks//EN\r\n" + ZONE
        + f"BEGIN:VEVENT\r\nUID:item-{number}@bench\r\nDTSTAMP:20260101T000000Z\r\n"
        f"DTSTART;TZID=Europe/Berlin:{start.strftime(stamp)}\r\n"
        f"DTEND;TZID=Europe/Berlin:{(start + dt.timedelta(minutes=30)).strftime(stamp)}\r\n"
        f"SUMMARY:Meeting {number}\r\nLOCATION:Room {number % 40}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


HEAD = '<?xml version="1.0" encoding="utf-8"?>\n<d:multistatus xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav" ' \
       'xmlns:cs="http://calendarserver.org/ns/">'
COLLECTION = (
    HEAD + "<d:response><d:href>/cal/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/><c:calendar/>"
    "</d:resourcetype><d:displayname>Work</d:displayname><cs:getctag>ctag-1</cs:getctag>"
    "<d:sync-token>http://127.0.0.1/sync/1</d:sync-token></d:prop><d:status>HTTP/1.1 200 OK</d:status>"
    "</d:propstat></d:response></d:multistatus>").encode()
LISTING = (
    HEAD + "".join(f"<d:response><d:href>/cal/item-{n}.ics</d:href><d:propstat><d:prop><d:getetag>\"e{n}\""
                   "</d:getetag></d:prop><d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response>"
                   for n in range(ITEMS))
    + "<d:sync-token>http://127.0.0.1/sync/1</d:sync-token></d:multistatus>").encode()
HREF = re.compile(rb"<d:href>/cal/item-(\d+)\.ics</d:href>")


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self):
        began = time.monotonic()
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.command == "PROPFIND":
            reply = COLLECTION
        elif b"sync-collection" in body:
            reply = LISTING
        elif b"calendar-multiget" in body:
            reply = (HEAD + "".join(
                f"<d:response><d:href>/cal/item-{n}.ics</d:href><d:propstat><d:prop><d:getetag>\"e{n}\"</d:getetag>"
                f"<c:calendar-data>{escape(item(n))}</c:calendar-data></d:prop><d:status>HTTP/1.1 200 OK</d:status>"
                "</d:propstat></d:response>" for n in map(int, HREF.findall(body))) + "</d:multistatus>").encode()
        else:
            self.send_response(400)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(207)
        self.send_header("Content-Type", "application/xml; charset=utf-8")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)
        with open(os.path.join(FOLDER, "requests.log"), "a") as log:
            log.write(f"{self.command} {self.path} {time.monotonic() - began:.4f} {len(reply)}\n")

    do_PROPFIND = do_REPORT = answer


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
