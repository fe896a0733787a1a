#!/usr/bin/env python3
"""Differential check of `calwatch scan` against a second implementation of RFC 5545 (recurring-ical-events on
icalendar and python-dateutil), over generated calendars.

    python3 -m venv .build/differential && .build/differential/bin/pip install recurring-ical-events x-wr-timezone
    .build/differential/bin/python scripts/differential-check.py [--calendars N] [--seed S] [--calwatch PATH] [--json]

`DifferentialTests` runs it at test time (the packages come from PyPI into `.build/differential`, never into the
repository). Each calendar holds random series (DAILY to YEARLY, BYDAY with ordinals, BYMONTHDAY, BYSETPOS,
INTERVAL, COUNT or UNTIL, RDATEs, EXDATEs and overrides of real instances) in several zones, timed and all-day.
Some items carry one of the cases below on purpose; every item that comes out differently is put in the
category of its case, with who is right by the RFC. A difference on an item without such a case is
"unexplained", and the run fails.
"""
import argparse
import datetime as dt
import json
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
WINDOW = (dt.datetime(2024, 6, 1, tzinfo=dt.timezone.utc), dt.datetime(2025, 6, 1, tzinfo=dt.timezone.utc))

# The cases generated on purpose, with who is right when the two disagree, and why.
CASES = {
    "multiple-rrules": ("either: both should give the union", "RFC 5545 §3.8.5.3: the recurrence set is every RRULE, "
                        "RDATE and DTSTART, minus EXDATE"),
    "exdate-on-override": ("calwatch", "RFC 5545 §3.8.5.1: the EXDATE takes the instance out of the set, so the "
                           "override has no instance left to modify; clients delete a modified instance this way"),
    "count-dtstart-off-rule": ("calwatch", "RFC 5545 §3.3.10: DTSTART always counts as the first occurrence, and "
                               "COUNT includes it"),
    "date-until-on-timed-series": ("neither (invalid input)", "RFC 5545 §3.3.10: UNTIL must have DTSTART's value "
                                   "type; calwatch reads the whole day (docs/design.md §3)"),
    "wall-time-in-dst-gap": ("calwatch", "RFC 5545 §3.3.5: a nonexistent local time is read with the offset from "
                             "before the gap"),
    "exact-duration-across-dst": ("calwatch", "RFC 5545 §3.3.6: a duration in hours, minutes and seconds is exact, "
                                  "a duration in days or weeks nominal"),
    "exrule": ("calwatch (RFC 2445)", "RFC 5545 deprecates EXRULE but RFC 2445 defines it: its instances are removed, "
               "as python-dateutil's rruleset does"),
}


def rule(rng: random.Random, start: dt.date, all_day: bool, count: bool = True) -> str:
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
    # COUNT only where DTSTART is an instance of the rule: otherwise it is the `count-dtstart-off-rule` case.
    if count and synchronized and rng.random() < 0.5:
        parts.append(f"COUNT={rng.randint(1, 30)}")
    elif rng.random() < 0.5:
        until = start + dt.timedelta(days=rng.randint(10, 500))
        parts.append(f"UNTIL={until:%Y%m%d}" if all_day else f"UNTIL={until:%Y%m%d}T235959Z")
    return ";".join(parts)


def start_lines(zone: str, day: dt.date, hour: int, minute: int, all_day: bool) -> str:
    if all_day:
        return f"DTSTART;VALUE=DATE:{day:%Y%m%d}"
    tz = "" if zone == "UTC" else f";TZID={zone}"
    z = "Z" if zone == "UTC" else ""
    return f"DTSTART{tz}:{day:%Y%m%d}T{hour:02d}{minute:02d}00{z}"


def special(case: str, uid: str, rng: random.Random) -> list:
    """An item built around one case."""
    head = ["BEGIN:VEVENT", f"UID:{uid}", "DTSTAMP:20240101T000000Z", f"SUMMARY:{uid}"]
    day = dt.date(2024, 7, 1) + dt.timedelta(days=rng.randint(0, 200))
    if case == "multiple-rrules":
        # DTSTART an instance of both rules, so that COUNT means the same to both readers.
        return head + [start_lines("Europe/Berlin", day, 9, 0, False), "DURATION:PT30M",
                       f"RRULE:FREQ=WEEKLY;BYDAY={DAYS[day.weekday()]};COUNT={rng.randint(3, 12)}",
                       f"RRULE:FREQ=MONTHLY;BYMONTHDAY={day.day};COUNT={rng.randint(2, 6)}", "END:VEVENT"]
    if case == "exdate-on-override":
        moved = day + dt.timedelta(days=7)
        return head + [start_lines("Europe/Berlin", day, 10, 0, False), "DURATION:PT1H", "RRULE:FREQ=WEEKLY;COUNT=6",
                       f"EXDATE;TZID=Europe/Berlin:{moved:%Y%m%d}T100000", "END:VEVENT",
                       "BEGIN:VEVENT", f"UID:{uid}", "DTSTAMP:20240101T000000Z",
                       f"RECURRENCE-ID;TZID=Europe/Berlin:{moved:%Y%m%d}T100000",
                       f"DTSTART;TZID=Europe/Berlin:{moved:%Y%m%d}T140000", "DURATION:PT1H", f"SUMMARY:{uid} moved",
                       "END:VEVENT"]
    if case == "count-dtstart-off-rule":
        weekday = DAYS[(day.weekday() + rng.randint(1, 6)) % 7]
        return head + [start_lines("America/New_York", day, 8, 30, False), "DURATION:PT45M",
                       f"RRULE:FREQ=WEEKLY;BYDAY={weekday};COUNT={rng.randint(2, 8)}", "END:VEVENT"]
    if case == "date-until-on-timed-series":
        return head + [start_lines("Europe/Berlin", day, 18, 0, False), "DURATION:PT1H",
                       f"RRULE:FREQ=DAILY;UNTIL={day + dt.timedelta(days=rng.randint(3, 20)):%Y%m%d}", "END:VEVENT"]
    if case == "wall-time-in-dst-gap":
        # 02:30 does not exist in Berlin on 30 March 2025.
        first = dt.date(2025, 3, 30) - dt.timedelta(days=rng.randint(0, 3))
        return head + [f"DTSTART;TZID=Europe/Berlin:{first:%Y%m%d}T023000", "DURATION:PT30M",
                       "RRULE:FREQ=DAILY;COUNT=6", "END:VEVENT"]
    if case == "exact-duration-across-dst":
        # Berlin leaves summer time on 27 October 2024: PT24H from noon the day before ends at 11:00.
        first = dt.date(2024, 10, 26) - dt.timedelta(days=7 * rng.randint(0, 2))
        return head + [f"DTSTART;TZID=Europe/Berlin:{first:%Y%m%d}T120000", "DURATION:PT24H",
                       "RRULE:FREQ=WEEKLY;COUNT=4", "END:VEVENT"]
    if case == "exrule":
        return head + [start_lines("UTC", day, 7, 0, False), "DURATION:PT15M", "RRULE:FREQ=DAILY;COUNT=20",
                       "EXRULE:FREQ=WEEKLY;BYDAY=SA,SU", "END:VEVENT"]
    raise ValueError(case)


def calendar(rng: random.Random) -> tuple:
    """A calendar's text and the case of each item (None for an ordinary one)."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch//differential//EN"]
    cases = {}
    for index in range(rng.randint(3, 12)):
        uid = f"e{index}"
        if rng.random() < 0.3:
            case = rng.choice(sorted(CASES))
            cases[uid] = case
            lines += special(case, uid, rng)
            continue
        cases[uid] = None
        zone = rng.choice(ZONES)
        all_day = rng.random() < 0.2
        day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 600))
        hour = rng.randint(6, 20)
        lines += ["BEGIN:VEVENT", f"UID:{uid}", "DTSTAMP:20240101T000000Z",
                  start_lines(zone, day, hour, rng.choice([0, 15, 30, 45]), all_day)]
        if all_day:
            lines.append(f"DTEND;VALUE=DATE:{day + dt.timedelta(days=rng.randint(1, 3)):%Y%m%d}")
        else:
            # Short enough never to cross a DST change (that is the `exact-duration-across-dst` case).
            lines.append(f"DURATION:PT{rng.choice([15, 30, 60, 90, 120])}M")
            if hour >= 1 and hour <= 3:
                hour = 9
        lines.append(f"SUMMARY:{uid}")
        recurring = rng.random() < 0.8
        if recurring:
            lines.append("RRULE:" + rule(rng, day, all_day))
            if rng.random() < 0.3 and not all_day:
                tz = "" if zone == "UTC" else f";TZID={zone}"
                z = "Z" if zone == "UTC" else ""
                extra = day + dt.timedelta(days=rng.randint(1, 200))
                lines.append(f"RDATE{tz}:{extra:%Y%m%d}T{hour:02d}0000{z}")
        lines.append("END:VEVENT")
        # Overrides and exceptions target real instances: taken from the library's own expansion below.
        lines.append(f"X-CALWATCH-PLACEHOLDER:{uid}:{1 if recurring else 0}:{zone}:{int(all_day)}")
    lines.append("END:VCALENDAR")
    return "\r\n".join(lines) + "\r\n", cases


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


def utc(value) -> str:
    if not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def occurrences_of_library(text: str) -> set:
    calendar = x_wr_timezone.to_standard(icalendar.Calendar.from_ical(text))
    found = set()
    for event in recurring_ical_events.of(calendar).between(*WINDOW):
        start = event["DTSTART"].dt
        end = event["DTEND"].dt if "DTEND" in event else start
        found.add((str(event["UID"]), utc(start), utc(end)))
    return found


def occurrences_of_calwatch(binary: str, path: str) -> set:
    run = subprocess.run([binary, "scan", path, "--from", "2024-06-01", "--to", "2025-06-01", "--tz", "UTC",
                          "--no-classify"], capture_output=True, text=True)
    if run.returncode not in (0,):
        raise SystemExit(f"calwatch scan {path} exited {run.returncode}: {run.stderr[-500:]}")
    return {(o["uid"], o["start"], o["end"]) for o in map(json.loads, run.stdout.splitlines())}


def main() -> None:
    arguments = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    arguments.add_argument("--calendars", type=int, default=100)
    arguments.add_argument("--seed", type=int, default=1)
    arguments.add_argument("--calwatch", default=os.environ.get("CALWATCH", ".build/debug/calwatch"))
    arguments.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    arguments.add_argument("--keep", help="a folder to keep the calendars that differ in")
    options = arguments.parse_args()
    rng = random.Random(options.seed)
    items = agreeing = 0
    categories = {case: {"items": 0, "differing": 0, "right": right, "why": why, "examples": []}
                  for case, (right, why) in CASES.items()}
    unexplained = []
    with tempfile.TemporaryDirectory() as folder:
        for number in range(options.calendars):
            text, cases = calendar(rng)
            text = add_exceptions(text, rng)
            path = os.path.join(folder, f"calendar-{number}.ics")
            with open(path, "w", newline="") as handle:
                handle.write(text)
            library, ours = occurrences_of_library(text), occurrences_of_calwatch(options.calwatch, path)
            for uid, case in cases.items():
                items += 1
                theirs = {o for o in library if o[0] == uid}
                mine = {o for o in ours if o[0] == uid}
                if case:
                    categories[case]["items"] += 1
                if theirs == mine:
                    agreeing += 1
                    continue
                difference = {"calendar": number, "uid": uid, "library only": sorted(theirs - mine)[:3],
                              "calwatch only": sorted(mine - theirs)[:3]}
                if case:
                    categories[case]["differing"] += 1
                    if len(categories[case]["examples"]) < 2:
                        categories[case]["examples"].append(difference)
                else:
                    unexplained.append(difference)
                if options.keep:
                    os.makedirs(options.keep, exist_ok=True)
                    with open(os.path.join(options.keep, f"differential-{number}.ics"), "w", newline="") as handle:
                        handle.write(text)
    summary = {"calendars": options.calendars, "seed": options.seed, "items": items, "agreeing": agreeing,
               "categories": categories, "unexplained": unexplained}
    if options.json:
        print(json.dumps(summary))
    else:
        print(f"{options.calendars} calendars, {items} items, {agreeing} agree")
        for case, category in categories.items():
            print(f"  {case}: {category['differing']} of {category['items']} differ; right: {category['right']} "
                  f"({category['why']})")
        for difference in unexplained:
            print("  unexplained:", json.dumps(difference))
    sys.exit(1 if unexplained else 0)


if __name__ == "__main__":
    main()
