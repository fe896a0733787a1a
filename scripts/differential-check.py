#!/usr/bin/env python3
"""Differential check of `calwatch scan` against recurring-ical-events on generated calendars.

    pip install recurring-ical-events x-wr-timezone
    python3 scripts/differential-check.py [CALENDARS] [SEED]      (uses .build/debug/calwatch)

Each calendar holds random series (DAILY to YEARLY, BYDAY with ordinals, BYMONTHDAY, BYSETPOS, INTERVAL,
COUNT or UNTIL), overrides, EXDATEs and RDATEs, in several zones, timed and all-day. The generator avoids only
the cases where calwatch deliberately differs (README, "Time semantics"): COUNT with a DTSTART the rule does not
produce, a DATE UNTIL on a timed series, and timed events that cross a DST change (the library adds exact
durations in wall-clock time). Any other difference is printed with the calendar that shows it.
"""
import datetime as dt
import os
import random
import subprocess
import sys
import tempfile

import icalendar
import recurring_ical_events
import x_wr_timezone

ZONES = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "Australia/Sydney", "America/Sao_Paulo", "UTC"]
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]


def rule(rng: random.Random, start: dt.date, all_day: bool) -> str:
    freq = rng.choice(["DAILY", "WEEKLY", "WEEKLY", "MONTHLY", "MONTHLY", "YEARLY"])
    parts = [f"FREQ={freq}"]
    if rng.random() < 0.4:
        parts.append(f"INTERVAL={rng.randint(2, 4)}")
    synchronized = True
    if freq == "WEEKLY" and rng.random() < 0.6:
        parts.append("BYDAY=" + ",".join(sorted(set(rng.sample(DAYS, rng.randint(1, 3))), key=DAYS.index)))
        synchronized = False
    if freq == "MONTHLY":
        choice = rng.random()
        if choice < 0.4:
            parts.append(f"BYDAY={rng.choice(['1', '2', '3', '-1'])}{rng.choice(DAYS)}")
            synchronized = False
        elif choice < 0.7:
            parts.append(f"BYMONTHDAY={rng.choice([1, 15, 28, -1])}")
            synchronized = False
        elif choice < 0.85:
            parts.append("BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1")
            synchronized = False
    if freq == "YEARLY" and rng.random() < 0.5:
        parts.append(f"BYMONTH={start.month};BYDAY={rng.choice(['1', '-1'])}{rng.choice(DAYS)}")
        synchronized = False
    if synchronized and rng.random() < 0.5:
        parts.append(f"COUNT={rng.randint(1, 30)}")
    elif rng.random() < 0.5:
        until = start + dt.timedelta(days=rng.randint(10, 500))
        parts.append(f"UNTIL={until:%Y%m%d}" if all_day else f"UNTIL={until:%Y%m%d}T235959Z")
    return ";".join(parts)


def calendar(rng: random.Random) -> str:
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch//differential//EN"]
    for index in range(rng.randint(3, 12)):
        zone = rng.choice(ZONES)
        all_day = rng.random() < 0.2
        day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 600))
        hour = rng.randint(6, 20)
        uid = f"e{index}"
        if all_day:
            start = f"DTSTART;VALUE=DATE:{day:%Y%m%d}"
            end = f"DTEND;VALUE=DATE:{day + dt.timedelta(days=rng.randint(1, 3)):%Y%m%d}"
        else:
            tz = "" if zone == "UTC" else f";TZID={zone}"
            z = "Z" if zone == "UTC" else ""
            start = f"DTSTART{tz}:{day:%Y%m%d}T{hour:02d}{rng.choice([0, 15, 30, 45]):02d}00{z}"
            end = f"DURATION:PT{rng.choice([15, 30, 60, 90, 120])}M"
        lines += ["BEGIN:VEVENT", f"UID:{uid}", "DTSTAMP:20240101T000000Z", start, end, f"SUMMARY:{uid}"]
        recurring = rng.random() < 0.8
        if recurring:
            lines.append("RRULE:" + rule(rng, day, all_day))
            if rng.random() < 0.3 and not all_day:
                tz = "" if zone == "UTC" else f";TZID={zone}"
                z = "Z" if zone == "UTC" else ""
                extra = day + dt.timedelta(days=rng.randint(1, 200))
                lines.append(f"RDATE{tz}:{extra:%Y%m%d}T{hour:02d}0000{z}")
        lines.append("END:VEVENT")
        # Overrides and exceptions target real instances: take them from the library's own expansion below.
        lines.append(f"X-CALWATCH-PLACEHOLDER:{uid}:{1 if recurring else 0}:{zone}:{int(all_day)}")
    lines.append("END:VCALENDAR")
    return "\r\n".join(lines) + "\r\n"


def add_exceptions(text: str, rng: random.Random) -> str:
    """Replaces placeholders with EXDATEs and overrides of instances that really exist."""
    base = icalendar.Calendar.from_ical(text.replace("X-CALWATCH-PLACEHOLDER", "X-P"))
    result = []
    for line in text.split("\r\n"):
        if not line.startswith("X-CALWATCH-PLACEHOLDER:"):
            result.append(line)
            continue
        _, uid, recurring, zone, all_day = line.split(":")
        if recurring != "1":
            continue
        instances = [e for e in recurring_ical_events.of(base).between((2024, 1, 1), (2026, 1, 1))
                     if str(e["UID"]) == uid]
        if len(instances) < 3:
            continue
        picked = rng.sample(instances, 2)
        for kind, event in zip(["EXDATE", "OVERRIDE"], picked):
            value = event["DTSTART"].dt
            if all_day == "1":
                text_value = f";VALUE=DATE:{value:%Y%m%d}"
            elif zone == "UTC":
                text_value = f":{value.astimezone(dt.timezone.utc):%Y%m%dT%H%M%SZ}"
            else:
                text_value = f";TZID={zone}:{value:%Y%m%dT%H%M%S}"
            if kind == "EXDATE":
                index = max(i for i, l in enumerate(result) if l == f"UID:{uid}")
                result.insert(index + 1, "EXDATE" + text_value)
            elif all_day != "1":
                moved = value + dt.timedelta(hours=rng.choice([-2, 1, 3]))
                moved_text = (f":{moved.astimezone(dt.timezone.utc):%Y%m%dT%H%M%SZ}" if zone == "UTC"
                              else f";TZID={zone}:{moved:%Y%m%dT%H%M%S}")
                result[-1:-1] = ["BEGIN:VEVENT", f"UID:{uid}", "DTSTAMP:20240101T000000Z",
                                 "RECURRENCE-ID" + text_value, "DTSTART" + moved_text, "DURATION:PT45M",
                                 f"SUMMARY:{uid} moved", "END:VEVENT"]
    return "\r\n".join(result)


def occurrences_of_library(text: str) -> set:
    calendar = x_wr_timezone.to_standard(icalendar.Calendar.from_ical(text))
    zone = dt.timezone.utc
    found = set()
    for event in recurring_ical_events.of(calendar).between(dt.datetime(2024, 6, 1, tzinfo=dt.timezone.utc), dt.datetime(2025, 6, 1, tzinfo=dt.timezone.utc)):
        start, end = event["DTSTART"].dt, event["DTEND"].dt if "DTEND" in event else event["DTSTART"].dt
        def utc(value):
            if not isinstance(value, dt.datetime):
                value = dt.datetime(value.year, value.month, value.day, tzinfo=zone)
            return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        found.add((str(event["UID"]), utc(start), utc(end)))
    return found


def occurrences_of_calwatch(path: str) -> set:
    run = subprocess.run([".build/debug/calwatch", "scan", path, "--from", "2024-06-01", "--to", "2025-06-01",
                          "--tz", "UTC"], capture_output=True, text=True)
    import json
    return {(o["uid"], o["start"], o["end"]) for o in map(json.loads, run.stdout.splitlines())}


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    differing = 0
    with tempfile.TemporaryDirectory() as folder:
        for number in range(count):
            text = add_exceptions(calendar(rng), rng)
            path = os.path.join(folder, f"calendar-{number}.ics")
            with open(path, "w", newline="") as handle:
                handle.write(text)
            library, ours = occurrences_of_library(text), occurrences_of_calwatch(path)
            if library != ours:
                differing += 1
                print(f"--- calendar {number}: {len(library - ours)} only in the library, {len(ours - library)} only in calwatch")
                for item in sorted(library - ours)[:5]:
                    print("  library:", *item)
                for item in sorted(ours - library)[:5]:
                    print("  calwatch:", *item)
                with open(f"differential-{number}.ics", "w", newline="") as handle:
                    handle.write(text)
    print(f"{count} calendars, {differing} with differences")


if __name__ == "__main__":
    main()
