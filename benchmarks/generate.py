#!/usr/bin/env python3
"""Generate the 10,000-event benchmark calendar, as one .ics file and as a 10,000-file vdir, and a calendar of
5,000 weekly meetings.

Half the events are weekly series running two years from January 2024 (COUNT=104), the other half single
events spread evenly over 2024-2025; all in Europe/Berlin with its VTIMEZONE, in the shape Google and
vdirsyncer write. Deterministic: the same files every run.

    python3 benchmarks/generate.py [OUTPUT_DIR] [FIRST_DAY]   (default: bench-data 2024-01-01)

meetings.ics: 5,000 weekly meetings of an hour and three quarters, on weekdays from 08:00 to 17:45 (about 130 at
once), each with a join link, an organizer and three attendees: a week of it is mostly live-activity updates, one a
minute per meeting (`make bench-replay-weeks`).

The watch benchmark moves FIRST_DAY to a week from today, so the daemon holds a full horizon of occurrences.
"""
import datetime as dt
import os
import sys

VTIMEZONE = """BEGIN:VTIMEZONE\r
TZID:Europe/Berlin\r
X-LIC-LOCATION:Europe/Berlin\r
BEGIN:DAYLIGHT\r
TZOFFSETFROM:+0100\r
TZOFFSETTO:+0200\r
TZNAME:CEST\r
DTSTART:19700329T020000\r
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU\r
END:DAYLIGHT\r
BEGIN:STANDARD\r
TZOFFSETFROM:+0200\r
TZOFFSETTO:+0100\r
TZNAME:CET\r
DTSTART:19701025T030000\r
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU\r
END:STANDARD\r
END:VTIMEZONE\r
"""

SERIES = 5000
SINGLES = 5000
FIRST_DAY = dt.date.fromisoformat(sys.argv[2]) if len(sys.argv) > 2 else dt.date(2024, 1, 1)
DAYS = 731


def event(index: int) -> str:
    if index < SERIES:
        day = FIRST_DAY + dt.timedelta(days=index % 7)
        hour = 8 + index % 10
        rule = "RRULE:FREQ=WEEKLY;COUNT=104\r\n"
        summary = f"Weekly sync {index}"
    else:
        j = index - SERIES
        day = FIRST_DAY + dt.timedelta(days=j * DAYS // SINGLES)
        hour = 8 + j % 10
        rule = ""
        summary = f"Appointment {j}"
    start = f"{day:%Y%m%d}T{hour:02d}{(index * 15) % 60:02d}00"
    end_hour = hour + 1
    end = f"{day:%Y%m%d}T{end_hour:02d}{(index * 15) % 60:02d}00"
    return (
        "BEGIN:VEVENT\r\n"
        f"DTSTART;TZID=Europe/Berlin:{start}\r\n"
        f"DTEND;TZID=Europe/Berlin:{end}\r\n"
        f"{rule}"
        "DTSTAMP:20240101T000000Z\r\n"
        f"UID:bench-{index:05d}@calwatch.example\r\n"
        "CREATED:20231201T000000Z\r\n"
        f"DESCRIPTION:Generated event {index} for the calwatch benchmark\r\n"
        "LAST-MODIFIED:20231201T000000Z\r\n"
        f"LOCATION:Room {index % 40}\r\n"
        "SEQUENCE:0\r\n"
        "STATUS:CONFIRMED\r\n"
        f"SUMMARY:{summary}\r\n"
        "TRANSP:OPAQUE\r\n"
        "END:VEVENT\r\n"
    )


MEETINGS = 5000


def meeting(index: int) -> str:
    """A weekly meeting of 105 minutes: weekday `index % 5`, a quarter-hour slot from 08:00 to 17:45."""
    day = FIRST_DAY + dt.timedelta(days=index % 5)
    slot = (index // 5) % 40
    start = dt.datetime.combine(day, dt.time(8)) + dt.timedelta(minutes=15 * slot)
    end = start + dt.timedelta(minutes=105)
    return (
        "BEGIN:VEVENT\r\n"
        f"DTSTART;TZID=Europe/Berlin:{start:%Y%m%dT%H%M%S}\r\n"
        f"DTEND;TZID=Europe/Berlin:{end:%Y%m%dT%H%M%S}\r\n"
        "RRULE:FREQ=WEEKLY;COUNT=104\r\n"
        "DTSTAMP:20240101T000000Z\r\n"
        f"UID:meeting-{index:05d}@calwatch.example\r\n"
        f"SUMMARY:Team meeting {index}\r\n"
        f"LOCATION:https://meet.example.com/team-{index}\r\n"
        f"DESCRIPTION:Agenda for team {index}: status\\, blockers\\, next steps.\\n"
        f"Join: https://meet.example.com/team-{index}\r\n"
        f"ORGANIZER;CN=Lead {index % 97}:mailto:lead{index % 97}@example.org\r\n"
        + "".join(f"ATTENDEE;CN=Member {index + k};PARTSTAT=ACCEPTED:mailto:member{(index + k) % 500}@example.org\r\n"
                  for k in range(3))
        + "STATUS:CONFIRMED\r\n"
        "END:VEVENT\r\n"
    )


def calendar(body: str) -> str:
    return (
        "BEGIN:VCALENDAR\r\nPRODID:-//calwatch//benchmark//EN\r\nVERSION:2.0\r\nCALSCALE:GREGORIAN\r\n"
        "X-WR-CALNAME:Benchmark\r\nX-WR-TIMEZONE:Europe/Berlin\r\n" + VTIMEZONE + body + "END:VCALENDAR\r\n"
    )


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "bench-data"
    vdir = os.path.join(out, "vdir", "benchmark")
    os.makedirs(vdir, exist_ok=True)
    with open(os.path.join(out, "benchmark.ics"), "w", newline="") as handle:
        handle.write(calendar("".join(event(i) for i in range(SERIES + SINGLES))))
    with open(os.path.join(out, "meetings.ics"), "w", newline="") as handle:
        handle.write(calendar("".join(meeting(i) for i in range(MEETINGS))))
    for i in range(SERIES + SINGLES):
        with open(os.path.join(vdir, f"bench-{i:05d}.ics"), "w", newline="") as handle:
            handle.write(calendar(event(i)))
    with open(os.path.join(vdir, "displayname"), "w") as handle:
        handle.write("Benchmark\n")
    print(f"{out}/benchmark.ics and {vdir}/: {SERIES} weekly series and {SINGLES} single events")


if __name__ == "__main__":
    main()
