#!/usr/bin/env python3
"""Compares calwatch's HOURLY, MINUTELY and SECONDLY expansion with python-dateutil on generated rules.

    pip install python-dateutil
    python3 scripts/compare-sub-daily.py [RULES] [SEED]      (uses .build/debug/calwatch)

Each rule mixes INTERVAL with the day limits (BYDAY, BYMONTH, BYMONTHDAY) and the time parts (BYHOUR, BYMINUTE,
BYSECOND, BYSETPOS) RFC 5545 allows for these frequencies, from a random DTSTART in UTC. The first 40 instances
are compared; calwatch always shows DTSTART, so it is left out unless the rule produces it. A rule dateutil
refuses ("generates an empty set": every INTERVAL misses the limits) must give calwatch no instance either.
libical 3.0.16 disagrees with both on many of these (it reads limits as expansions when INTERVAL > 1, skips the
first hour of a MINUTELY;BYMINUTE rule, ignores BYSETPOS on HOURLY), which is why calwatch steps them itself.
"""
import datetime as dt
import json
import os
import random
import subprocess
import sys

from dateutil.rrule import rrulestr

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALWATCH = os.path.join(ROOT, ".build", "debug", "calwatch")
DAYS = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]


def some(rng: random.Random, low: int, high: int, most: int) -> str:
    return ",".join(str(v) for v in sorted({rng.randint(low, high) for _ in range(rng.randint(1, most))}))


def rule(rng: random.Random) -> str:
    freq = rng.choice(["HOURLY", "MINUTELY", "SECONDLY"])
    parts = [f"FREQ={freq}"]
    if rng.random() < 0.5:
        parts.append(f"INTERVAL={rng.randint(1, 7)}")
    if rng.random() < 0.3:
        parts.append("BYDAY=" + ",".join(d for d in DAYS if rng.random() < 0.6) or "MO")
    if rng.random() < 0.25:
        parts.append("BYMONTH=" + some(rng, 1, 12, 6))
    if rng.random() < 0.25:
        parts.append("BYMONTHDAY=" + some(rng, 1, 28, 8))
    if rng.random() < 0.35:
        parts.append("BYHOUR=" + some(rng, 0, 23, 6))
    if rng.random() < 0.35:
        parts.append("BYMINUTE=" + some(rng, 0, 59, 5))
    if rng.random() < 0.35:
        parts.append("BYSECOND=" + some(rng, 0, 59, 3))
    if freq == "HOURLY" and rng.random() < 0.25:
        parts.append("BYSETPOS=" + rng.choice(["1", "-1", "2"]))
    return ";".join(p for p in parts if not p.endswith("="))


def calwatch(text: str, start: dt.datetime, end: dt.datetime) -> list:
    stamp = start.strftime("%Y%m%dT%H%M%SZ")
    ics = "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch compare//EN", "BEGIN:VEVENT",
                       "UID:rule", "DTSTAMP:20200101T000000Z", f"DTSTART:{stamp}", f"RRULE:{text}", "SUMMARY:x",
                       "END:VEVENT", "END:VCALENDAR", ""])
    output = subprocess.run([CALWATCH, "scan", "-", "--from", start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                             "--to", end.strftime("%Y-%m-%dT%H:%M:%SZ"), "--tz", "UTC"],
                            input=ics.encode(), capture_output=True, check=True).stdout.decode()
    return [json.loads(line)["start"].rstrip("Z") for line in output.splitlines()]


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 20261123)
    differences = refused = 0
    for _ in range(count):
        text = rule(rng)
        start = dt.datetime(rng.randint(2020, 2030), rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23),
                            rng.randint(0, 59), rng.randint(0, 59))
        try:
            expected = [d.isoformat() for d, _ in zip(rrulestr(text, dtstart=start), range(40))]
        except ValueError:
            expected = []
            refused += 1
        end = dt.datetime.fromisoformat(expected[-1]) + dt.timedelta(seconds=1) if expected else start + dt.timedelta(days=30)
        got = [g for g in calwatch(text, start, end) if g != start.isoformat() or start.isoformat() in expected]
        if got[:40] != expected:
            differences += 1
            print(f"DIFFERENT {text} from {start.isoformat()}\n  calwatch {got[:5]}\n  dateutil {expected[:5]}")
    print(f"{count} rules: {count - differences} agree, {differences} differ "
          f"({refused} that dateutil calls empty, which calwatch must leave empty too)")
    sys.exit(1 if differences else 0)


if __name__ == "__main__":
    main()
