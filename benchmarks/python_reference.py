#!/usr/bin/env python3
"""The Python reference for docs/design.md §10: recurring-ical-events over the benchmark file and window.

    pip install recurring-ical-events
    python3 benchmarks/python_reference.py bench-data/benchmark.ics 2024-06-01 2025-06-01

Prints the number of occurrences; `benchmarks/run.py --python` times it beside calwatch.
"""
import datetime as dt
import sys
import zoneinfo

import icalendar
import recurring_ical_events

path, start, end = sys.argv[1:4]
zone = zoneinfo.ZoneInfo("Europe/Berlin")
with open(path, "rb") as handle:
    calendar = icalendar.Calendar.from_ical(handle.read())
begin = dt.datetime.fromisoformat(start).replace(tzinfo=zone)
finish = dt.datetime.fromisoformat(end).replace(tzinfo=zone)
print(sum(1 for _ in recurring_ical_events.of(calendar).between(begin, finish)))
