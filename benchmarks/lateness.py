#!/usr/bin/env python3
"""Are reminders on time while the daemon reads? Lateness of reminders due during full rewrites of a vdir.

    make bench-lateness   (or: python3 benchmarks/lateness.py [--items 5000] [--every 20] [--reminders 100])

Generates the benchmark vdir (its first day a week from today) and keeps ITEMS of its files; adds a calendar of
REMINDERS meetings whose 5-minute reminders fall due 3 s apart, starting a minute after the daemon is ready; starts
the release build's `calwatch watch` with a JSON Lines sink and one CPU hog per core, then rewrites every file of
the vdir the way vdirsyncer does (a temporary name, then a rename over the item, the content changed) every EVERY
seconds until the last reminder is due. Each reminder's lateness is its `recordedtime` (when the daemon committed
it) less its `time`. Prints the percentiles as a Markdown table for BENCHMARKS.md.
"""
import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import machine  # noqa: E402
from watch import cpu_ns, release_and_vdir, wait_for  # noqa: E402

STAMP = "%Y%m%dT%H%M%SZ"


def meeting(uid: str, start: dt.datetime) -> str:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calwatch//benchmark//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{start.strftime(STAMP)}\r\n"
        f"DTEND:{(start + dt.timedelta(minutes=30)).strftime(STAMP)}\r\nSUMMARY:On time {uid}\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n")


def percentile(values: list, share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000, help="files of the vdir rewritten each time")
    parser.add_argument("--every", type=float, default=20.0, help="seconds between full rewrites")
    parser.add_argument("--reminders", type=int, default=100)
    args = parser.parse_args()

    calwatch, work, vdir = release_and_vdir("calwatch-bench-lateness-")
    collection = os.path.join(vdir, "benchmark")
    names = sorted(os.listdir(collection))
    for name in names[args.items:]:
        os.remove(os.path.join(collection, name))
    names = names[:args.items]
    contents = {name: open(os.path.join(collection, name), newline="").read() for name in names}
    reminders = os.path.join(vdir, "reminders")
    os.mkdir(reminders)
    sink = os.path.join(work, "events.jsonl")
    with open(os.path.join(work, "config.yml"), "w") as handle:
        handle.write(f"calendars: [{vdir}]\ntimezone: Europe/Berlin\nstate: {work}/journal.db\n"
                     f"reminders: {{ offsets: [5m] }}\nsinks:\n  - type: jsonl\n    path: {sink}\n")
    log = os.path.join(work, "log.txt")
    with open(log, "w") as log_handle:
        daemon = subprocess.Popen([calwatch, "watch", "--config", os.path.join(work, "config.yml")],
                                  stdout=subprocess.DEVNULL, stderr=log_handle)
    hogs = []
    try:
        wait_for(log, "watching", 120)
        # The meetings, written once the daemon is ready: their reminders come a minute from now, 3 s apart.
        first = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(minutes=6)
        for index in range(args.reminders):
            start = first + dt.timedelta(seconds=3 * index)
            with open(os.path.join(reminders, f"on-time-{index:04d}.ics"), "w", newline="") as handle:
                handle.write(meeting(f"on-time-{index:04d}@calwatch.example", start))
        last_due = first + dt.timedelta(seconds=3 * args.reminders) - dt.timedelta(minutes=5)
        hogs = [subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) for _ in range(os.cpu_count() or 1)]
        cpu_before = cpu_ns(daemon.pid)
        rewrites = []
        round_number = 0
        while dt.datetime.now(dt.timezone.utc) < last_due + dt.timedelta(seconds=5):
            began = time.perf_counter()
            round_number += 1
            for name in names:
                path = os.path.join(collection, name)
                temporary = os.path.join(collection, f".{name}.{round_number}.tmp")
                text = contents[name].replace("END:VEVENT", f"X-SYNC-ROUND:{round_number}\r\nEND:VEVENT", 1)
                with open(temporary, "w", newline="") as handle:
                    handle.write(text)
                os.rename(temporary, path)
            rewrites.append(time.perf_counter() - began)
            time.sleep(max(0.0, args.every - (time.perf_counter() - began)))
        time.sleep(3)
        # The daemon's own CPU time over the rewrites: that it read them, not only that reminders came.
        cpu_seconds = (cpu_ns(daemon.pid) - cpu_before) / 1e9
    finally:
        for hog in hogs:
            hog.terminate()
        daemon.terminate()
        daemon.wait(timeout=60)

    lateness = []
    with open(sink) as handle:
        for line in handle:
            event = json.loads(line)
            if event["type"] != "calwatch.reminderDue" or not event["subject"].startswith("on-time-"):
                continue
            due = dt.datetime.strptime(event["time"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.timezone.utc)
            recorded = dt.datetime.strptime(event["recordedtime"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                tzinfo=dt.timezone.utc)
            lateness.append((recorded - due).total_seconds() * 1000)
    print()
    print(f"{machine()}; {len(names)} files rewritten every {args.every:.0f} s ({len(rewrites)} rewrites, "
          f"each written in {statistics.median(rewrites):.1f} s), {len(hogs)} CPU hogs, release build; the daemon "
          f"used {cpu_seconds:.1f} s of CPU reading them.")
    print()
    print("| reminders due | delivered | p50 | p90 | p99 | max |")
    print("|---:|---:|---:|---:|---:|---:|")
    if lateness:
        print(f"| {args.reminders} | {len(lateness)} | {percentile(lateness, 0.5):.0f} ms | "
              f"{percentile(lateness, 0.9):.0f} ms | {percentile(lateness, 0.99):.0f} ms | {max(lateness):.0f} ms |")
    else:
        print(f"| {args.reminders} | 0 | | | | |")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
