#!/usr/bin/env python3
"""Compare `calwatch scan` with the Python recurring-ical-events library, occurrence by occurrence.

    pip install recurring-ical-events x-wr-timezone
    python3 scripts/compare-with-oracle.py FILE.ics 2025-01-01 2026-01-01 [ZONE]

Prints the (uid, start, end) triples only one side has. Differences are not automatically calwatch's bugs:
docs/design.md (§3, Time semantics) lists where calwatch follows the RFC and the library does not.
"""
import datetime as dt
import json
import subprocess
import sys
import zoneinfo

import icalendar
import recurring_ical_events
import x_wr_timezone


def utc(value, zone):
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=zone)
        return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return dt.datetime(value.year, value.month, value.day, tzinfo=zone).astimezone(dt.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def main() -> None:
    path, start, end = sys.argv[1:4]
    zone_name = sys.argv[4] if len(sys.argv) > 4 else "UTC"
    zone = zoneinfo.ZoneInfo(zone_name)
    with open(path, "rb") as handle:
        calendar = x_wr_timezone.to_standard(icalendar.Calendar.from_ical(handle.read()))
    begin = dt.datetime.fromisoformat(start).replace(tzinfo=zone)
    finish = dt.datetime.fromisoformat(end).replace(tzinfo=zone)
    oracle = set()
    for event in recurring_ical_events.of(calendar).between(begin, finish):
        s = event["DTSTART"].dt
        e = event["DTEND"].dt if "DTEND" in event else s
        oracle.add((str(event["UID"]), utc(s, zone), utc(e, zone)))
    run = subprocess.run([".build/debug/calwatch", "scan", path, "--from", start, "--to", end, "--tz", zone_name],
                         capture_output=True, text=True)
    ours = {(o["uid"], o["start"], o["end"]) for o in map(json.loads, run.stdout.splitlines())}
    for item in sorted(oracle - ours):
        print("only recurring-ical-events:", *item)
    for item in sorted(ours - oracle):
        print("only calwatch:             ", *item)
    print(f"{len(ours & oracle)} agree, {len(oracle - ours)} only in recurring-ical-events, {len(ours - oracle)} only in calwatch")


if __name__ == "__main__":
    main()
