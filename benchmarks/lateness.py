#!/usr/bin/env python3
"""Are reminders on time while the daemon reads? Lateness of reminders due during full rewrites of a vdir.

    make bench-lateness   (or: python3 benchmarks/lateness.py [--items 5000] [--every 20] [--reminders 100])

Generates the benchmark vdir (its first day a week from today) and keeps ITEMS of its files; adds a calendar of
REMINDERS meetings whose 5-minute reminders fall due 3 s apart, starting a minute after the daemon is ready; starts
the release build's `calwatch watch` with a JSON Lines sink and one CPU hog per core, then rewrites every file of
the vdir the way vdirsyncer does (a temporary name, then a rename over the item, the content changed) every EVERY
seconds until the last reminder is due. Each reminder's lateness is its `recordedtime` (when the daemon committed
it) less its `time`. Prints the percentiles as a Markdown table for BENCHMARKS.md, and the daemon's own account of
its latest wake (what held it: `WakeLateness`).

    --burst     each rewrite's temporaries written first, then renamed over the items all in a row (a sync that
                commits a batch at once: thousands of renames in a fraction of a second)
    --day       with `day:` on (conflicts, overruns, the agenda, invitations, the travel zone)
    --fleet     as a watcher of a fleet (a PostgreSQL server of Debian's package, both calendars added to it)
    --calwatch  another build instead of this checkout's release build (`make bench-against` builds one)
"""
import argparse
import datetime as dt
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import DATA, DAY, machine  # noqa: E402
from watch import cpu_ns, release_and_vdir, wait_for  # noqa: E402
from postgres import start_server, stop_server  # noqa: E402

STAMP = "%Y%m%dT%H%M%SZ"


def meeting(uid: str, start: dt.datetime) -> str:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calwatch//benchmark//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{start.strftime(STAMP)}\r\n"
        f"DTEND:{(start + dt.timedelta(minutes=30)).strftime(STAMP)}\r\nSUMMARY:On time {uid}\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n")


def reminder_lateness(sink: str) -> list:
    """Each `on-time-` meeting's reminder in the JSON Lines file `sink`: when it was committed (`recordedtime`) less
    when it was due (`time`), in milliseconds."""
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
    return lateness


def percentile(values: list, share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5000, help="files of the vdir rewritten each time")
    parser.add_argument("--every", type=float, default=20.0, help="seconds between full rewrites")
    parser.add_argument("--reminders", type=int, default=100)
    parser.add_argument("--burst", action="store_true", help="renames all in a row after the writes")
    parser.add_argument("--day", action="store_true", help="with day: on")
    parser.add_argument("--fleet", action="store_true", help="as a watcher of a fleet through PostgreSQL")
    parser.add_argument("--calwatch", help="this binary instead of the checkout's release build")
    args = parser.parse_args()

    calwatch, work, vdir = release_and_vdir("calwatch-bench-lateness-", build=args.calwatch is None)
    calwatch = os.path.abspath(args.calwatch) if args.calwatch else calwatch
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
        handle.write(("" if args.fleet else f"calendars: [{vdir}]\n") +
                     f"timezone: Europe/Berlin\nstate: {work}/journal.db\nreminders: {{ offsets: [5m] }}\n"
                     f"sinks:\n  - type: jsonl\n    path: {sink}\n" + (DAY if args.day else "") +
                     (f"fleet:\n  roots: [{vdir}]\n" if args.fleet else ""))
    command = [calwatch, "watch", "--config", os.path.join(work, "config.yml")]
    # Under bench-data, not the private temporary folder: the server runs as the postgres user when root starts it.
    database = os.path.join(DATA, "lateness-fleet")
    if args.fleet:
        start_server(database)
        url = f"postgres:///calwatch?host={database}&user=postgres"
        subprocess.run([calwatch, "fleet", "add", "--database", url, collection, reminders], check=True,
                       stdout=subprocess.DEVNULL)
        command += ["--fleet", url, "--instance", "w1"]
    log = os.path.join(work, "log.txt")
    with open(log, "w") as log_handle:
        daemon = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log_handle)
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
            renames = []
            for name in names:
                path = os.path.join(collection, name)
                temporary = os.path.join(collection, f".{name}.{round_number}.tmp")
                text = contents[name].replace("END:VEVENT", f"X-SYNC-ROUND:{round_number}\r\nEND:VEVENT", 1)
                with open(temporary, "w", newline="") as handle:
                    handle.write(text)
                if args.burst:
                    renames.append((temporary, path))
                else:
                    os.rename(temporary, path)
            for temporary, path in renames:
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
        if args.fleet:
            stop_server(database)

    lateness = reminder_lateness(sink)
    print()
    print(f"{machine()}; {len(names)} files rewritten every {args.every:.0f} s ({len(rewrites)} rewrites, "
          f"each written in {statistics.median(rewrites):.1f} s), {len(hogs)} CPU hogs, "
          f"{'renamed in a burst, ' if args.burst else ''}{'day: on, ' if args.day else ''}{'a watcher of a fleet, ' if args.fleet else ''}release build; the daemon "
          f"used {cpu_seconds:.1f} s of CPU reading them.")
    print()
    print("| reminders due | delivered | p50 | p90 | p99 | max |")
    print("|---:|---:|---:|---:|---:|---:|")
    if lateness:
        print(f"| {args.reminders} | {len(lateness)} | {percentile(lateness, 0.5):.0f} ms | "
              f"{percentile(lateness, 0.9):.0f} ms | {percentile(lateness, 0.99):.0f} ms | {max(lateness):.0f} ms |")
    else:
        print(f"| {args.reminders} | 0 | | | | |")
    # The daemon's own account: every wake it served, and what held the latest (none before this account existed);
    # and the files it parsed, that it read every rewrite.
    print()
    parsed = 0
    for line in open(log):
        if "wakes served" in line or "a wake came late" in line:
            print(line.strip())
        found = re.search(r"calendar\.parsed=(\d+)", line)
        if found and line.rstrip().endswith(("change", "rescan")):
            parsed += int(found.group(1))
    print(f"files parsed after the start: {parsed} ({len(rewrites)} rewrites of {len(names)}: "
          f"{len(rewrites) * len(names)}, and {args.reminders} reminders' files)")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
