#!/usr/bin/env python3
"""A fleet through PostgreSQL: how long calendars wait for a new watcher after one is killed or stopped, and how late
the reminders due meanwhile come.

    make bench-fleet   (or: python3 benchmarks/fleet.py [--calendars 2000] [--watchers 4] [--lease 30])

Starts a PostgreSQL server of Debian's package in bench-data/fleet, adds `--calendars` folders of one meeting each
(5-minute reminders due one after another over the run), starts `--watchers` release-built `calwatch watch
--fleet` processes with the default lease, waits until they share the calendars, then kills one with SIGKILL while
reminders come due, and later stops another with SIGTERM. Reports, from the database: when each of the killed
watcher's calendars was taken (seconds after the kill), the same after the graceful stop, and how late every
reminder was stored (recorded - time), overall and for those due while calendars changed hands. Each reminder must be
stored exactly once. The server is stopped and its folder removed at the end.
"""
import argparse
import datetime as dt
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from postgres import psql, start_server, stop_server  # noqa: E402
from run import DATA, ROOT, machine  # noqa: E402


def write_calendars(folder: str, count: int, first: dt.datetime, spacing: float) -> list[str]:
    stamp = lambda t: t.strftime("%Y%m%dT%H%M%SZ")  # noqa: E731
    paths = []
    for index in range(count):
        path = os.path.join(folder, "calendars", f"c{index:05d}")
        os.makedirs(path)
        start = first + dt.timedelta(minutes=5, seconds=index * spacing)
        with open(os.path.join(path, "event.ics"), "w") as file:
            file.write("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calwatch//benchmark//EN\r\nBEGIN:VEVENT\r\n"
                       f"UID:meeting-{index}@example.org\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{stamp(start)}\r\n"
                       f"DTEND:{stamp(start + dt.timedelta(minutes=30))}\r\nSUMMARY:Meeting {index}\r\n"
                       "END:VEVENT\r\nEND:VCALENDAR\r\n")
        paths.append(path)
    return paths


def wait_for(folder: str, sql: str, done, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while True:
        value = psql(folder, sql)
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.25)


def taken_after(folder: str, instant: float, which: str) -> str:
    """p50 / max of how long after `instant` the hand-overs `which` (an SQL condition) took their calendars."""
    return figures(folder, f"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM claimed_at) - "
                           f"{instant}), max(extract(epoch FROM claimed_at) - {instant}) FROM fleet_handovers "
                           f"WHERE {which}")


def figures(folder: str, sql: str) -> str:
    row = psql(folder, sql).split("|")
    return " / ".join(f"{float(value):.1f}" if value else "-" for value in row)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calendars", type=int, default=2000)
    parser.add_argument("--watchers", type=int, default=4)
    parser.add_argument("--lease", type=int, default=30, help="seconds (calwatch's default: 30)")
    args = parser.parse_args()

    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)
    calwatch = os.path.join(ROOT, ".build", "release", "calwatch")
    folder = os.path.join(DATA, "fleet")
    start_server(folder)
    watchers: dict[str, subprocess.Popen] = {}
    try:
        database = f"postgres:///calwatch?host={folder}&user=postgres"
        with open(os.path.join(folder, "config.yml"), "w") as config:
            config.write("reminders:\n  offsets: [5m]\n")
        # Reminders due from a minute and a half from now until the end of the run, one after another.
        run_seconds = 5 * args.lease + 60
        first = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(seconds=90)
        paths = write_calendars(folder, args.calendars, first, run_seconds / args.calendars)
        subprocess.run([calwatch, "fleet", "add", "--database", database] + paths, check=True,
                       stdout=subprocess.DEVNULL)

        def start(name: str) -> None:
            with open(os.path.join(folder, f"{name}.log"), "w") as log:
                watchers[name] = subprocess.Popen(
                    [calwatch, "watch", "--fleet", database, "--instance", name, "--config",
                     os.path.join(folder, "config.yml"), "--state", os.path.join(folder, f"{name}.db"),
                     "--lease", f"{args.lease}s"], stdout=subprocess.DEVNULL, stderr=log)

        for index in range(args.watchers):
            start(f"w{index + 1}")
        share = -(-args.calendars // args.watchers)
        wait_for(folder, "SELECT count(*) FROM (SELECT watcher FROM calendars GROUP BY watcher "
                         f"HAVING count(*) >= {share - 1}) AS w", lambda v: v == str(args.watchers), 300)
        while dt.datetime.now(dt.timezone.utc) < first + dt.timedelta(seconds=20):
            time.sleep(0.1)

        killed = time.time()
        watchers["w1"].send_signal(signal.SIGKILL)
        watchers["w1"].wait()
        wait_for(folder, "SELECT count(*) FROM calendars WHERE watcher = 'w1'", lambda v: v == "0", 3 * args.lease)
        taken_after_kill = taken_after(folder, killed, "previous = 'w1' AND reason = 'expired'")
        taken_at = float(psql(folder, "SELECT extract(epoch FROM max(claimed_at)) FROM fleet_handovers "
                                      "WHERE previous = 'w1' AND reason = 'expired'"))

        time.sleep(args.lease / 3 * 2)
        stopped = time.time()
        watchers["w2"].send_signal(signal.SIGTERM)
        watchers["w2"].wait()
        wait_for(folder, "SELECT count(*) FROM calendars WHERE watcher IS NULL", lambda v: v == "0", 3 * args.lease)
        taken_after_stop = taken_after(
            folder, stopped, f"reason = 'released' AND claimed_at > to_timestamp({stopped})")

        end = first + dt.timedelta(seconds=run_seconds)
        while dt.datetime.now(dt.timezone.utc) < end + dt.timedelta(seconds=5):
            time.sleep(0.5)
        wait_for(folder, "SELECT count(*) FROM event_log WHERE type = 'reminderDue'",
                 lambda v: int(v) >= args.calendars, 60)
        for process in watchers.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in watchers.values():
            process.wait()

        stored, distinct = psql(folder, "SELECT count(*), count(DISTINCT (watcher, id)) FROM event_log "
                                        "WHERE type = 'reminderDue'").split("|")
        lateness = "percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM recorded - time)), " \
                   "percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM recorded - time)), " \
                   "max(extract(epoch FROM recorded - time))"
        overall = figures(folder, f"SELECT {lateness} FROM event_log WHERE type = 'reminderDue'")
        meanwhile = figures(folder, f"SELECT {lateness} FROM event_log WHERE type = 'reminderDue' "
                                    f"AND time BETWEEN to_timestamp({killed}) AND to_timestamp({taken_at})")
        count_meanwhile = psql(folder, "SELECT count(*) FROM event_log WHERE type = 'reminderDue' "
                                       f"AND time BETWEEN to_timestamp({killed}) AND to_timestamp({taken_at})")
        print()
        print(f"{machine()}; PostgreSQL {psql(folder, 'SHOW server_version')}; {args.calendars} calendars, "
              f"{args.watchers} watchers (release build), lease {args.lease} s, one run.")
        print()
        print("| | p50 | p99 | max |")
        print("|---|---:|---:|---:|")
        print(f"| the killed watcher's calendars taken, s after SIGKILL | {taken_after_kill.split(' / ')[0]} | | "
              f"{taken_after_kill.split(' / ')[1]} |")
        print(f"| the stopped watcher's calendars taken, s after SIGTERM | {taken_after_stop.split(' / ')[0]} | | "
              f"{taken_after_stop.split(' / ')[1]} |")
        print(f"| lateness of the {count_meanwhile} reminders due between the kill and the last take-over, s | "
              + " | ".join(meanwhile.split(" / ")) + " |")
        print(f"| lateness of all {stored} reminders, s | " + " | ".join(overall.split(" / ")) + " |")
        print()
        print(f"reminders stored: {stored}, distinct: {distinct}, calendars: {args.calendars}"
              + ("" if stored == distinct == str(args.calendars) else "  <-- NOT exactly once"))
    finally:
        for process in watchers.values():
            if process.poll() is None:
                process.kill()
        stop_server(folder)


if __name__ == "__main__":
    main()
