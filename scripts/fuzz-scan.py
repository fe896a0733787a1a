#!/usr/bin/env python3
"""Mutation fuzzing of `calwatch scan`: every calendar is a stranger's, so no input may crash or hang it.

    python3 scripts/fuzz-scan.py [ITERATIONS] [SEED]     (uses .build/release/calwatch; swift build -c release)

Mutates the test fixtures and samples (deleted, repeated and swapped lines, flipped bytes, hostile values in
known properties) and runs a scan of each mutant with a time limit. Any exit other than 0 or 65 (a signal, a
crash, a hang) is saved under fuzz-failures/ and reported, and so is any line on standard error that is not in
calwatch's `FILE:LINE: error|warning: …` shape (a library's own debug output). CALWATCH=path picks the binary.
"""
import glob
import os
import random
import re
import subprocess
import sys

HOSTILE_VALUES = [
    "DTSTART:99991231T235959Z", "DTSTART:00000101T000000", "DTSTART;TZID=Nowhere/Land:20250101T090000",
    "DTSTART;VALUE=DATE:20250230", "DTEND:19000101T000000Z", "DURATION:P99999999W", "DURATION:-P1D",
    "RRULE:FREQ=SECONDLY", "RRULE:FREQ=YEARLY;BYYEARDAY=366;BYWEEKNO=53;BYSETPOS=-1", "RRULE:FREQ=DAILY;COUNT=2147483647",
    "RRULE:FREQ=MINUTELY;INTERVAL=0", "RRULE:FREQ=WEEKLY;BYDAY=1MO,-53SU", "RRULE:FREQ=MONTHLY;BYMONTHDAY=-31,0,32",
    "RRULE:;;;", "RRULE:FREQ=WEEKLY;UNTIL=1", "EXDATE:garbage", "RDATE;VALUE=PERIOD:20250101T000000Z/",
    "RECURRENCE-ID;RANGE=THISANDFUTURE:20250101T090000Z", "TRIGGER:-P9999999D", "REPEAT:2147483647",
    "TZOFFSETFROM:+9999", "X-WR-TIMEZONE:../../etc/passwd", "SUMMARY:$(touch /tmp/calwatch-pwned)",
    "BEGIN:VEVENT", "END:VCALENDAR", "END;X-A=1:VEVENT", "BEGIN;X-A=\"b:c\":VALARM", "END;X=1:VALARM", "END",
    "BEGIN", "End:vtodo", "BEGIN:VTIMEZONE", "UID:", "\x00\x01\x02", "SUMMARY:\xff\xfe\xfd",
]


def mutate(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 6)):
        if not lines:
            break
        choice = rng.random()
        index = rng.randrange(len(lines))
        if choice < 0.25:
            del lines[index]
        elif choice < 0.45:
            lines.insert(index, lines[rng.randrange(len(lines))])
        elif choice < 0.65:
            lines.insert(index, rng.choice(HOSTILE_VALUES).encode("latin-1") + b"\r")
        elif choice < 0.8:
            other = rng.randrange(len(lines))
            lines[index], lines[other] = lines[other], lines[index]
        else:
            line = bytearray(lines[index])
            if line:
                line[rng.randrange(len(line))] = rng.randrange(256)
            lines[index] = bytes(line)
    return b"\n".join(lines)


def main() -> None:
    iterations = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    seeds = [open(p, "rb").read() for p in sorted(glob.glob("Tests/CalWatchTests/Fixtures/*.ics") +
                                                   glob.glob("samples/calendars/*/*.ics"))]
    binary = os.environ.get("CALWATCH", ".build/release/calwatch")
    shape = re.compile(rb"^-(:\d+)?: (error|warning): ")
    failures = 0
    os.makedirs("fuzz-failures", exist_ok=True)
    for iteration in range(iterations):
        data = mutate(rng.choice(seeds), rng)
        try:
            run = subprocess.run([binary, "scan", "-", "--from", "2024-01-01", "--to", "2026-01-01", "--tz",
                                  "Europe/Berlin"], input=data, capture_output=True, timeout=20)
            stray = [line for line in run.stderr.split(b"\n") if line and not shape.match(line)]
            bad = run.returncode not in (0, 65) or bool(stray)
            reason = f"exit {run.returncode}: {(stray[0] if stray else run.stderr[-300:]).decode(errors='replace')}"
        except subprocess.TimeoutExpired:
            bad, reason = True, "timeout after 20 s"
        if bad:
            failures += 1
            path = f"fuzz-failures/case-{iteration}.ics"
            with open(path, "wb") as handle:
                handle.write(data)
            print(f"{path}: {reason}")
    print(f"{iterations} mutants, {failures} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
