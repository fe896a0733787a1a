#!/usr/bin/env python3
"""Calendars on servers followed by `calwatch watch`: what a poll of an unchanged calendar costs, how soon a change
is planned, and the daemon's memory with 20 feeds of 5,000 events each.

    make bench-feeds   (or: python3 benchmarks/feeds.py [--feeds 20] [--events 5000] [--every 5])
    make bench-first-sync   (or: python3 benchmarks/feeds.py --first-sync 100000)

ICS feeds: FEEDS calendars of EVENTS single events each (the next 50 days, one every 15 minutes, in the shape
Google exports), served by scripts/feed-server.py on loopback (ETag, 304, gzip), followed by one daemon polling each
every EVERY seconds (a loopback server may be polled that often). Measured: start-up until "watching", memory
(VmRSS and its peak VmHWM), the requests, statuses and body bytes of the polls while nothing changes (from the
server's log) and the files parsed meanwhile (from the metrics file), then one feed changed: the time until the
daemon has planned it again.

CalDAV: Debian's Radicale on loopback with one collection of EVENTS items (written into its storage folder before
it starts), followed the same way: start-up, the requests and bytes of an unchanged poll (calwatch's debug log),
and one item PUT: the requests of that poll and the time until it is planned.

`--first-sync ITEMS`: the first sync of one CalDAV collection of ITEMS items, from scripts/caldav-server.py (which
answers at once, so the time is calwatch's: the requests, writing the items into the cache, reading and planning
them), until the daemon has read every item; the server's own time is summed from its log. Memory: VmRSS and VmHWM.
"""
import argparse
import base64
import datetime as dt
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import DATA, ROOT, machine  # noqa: E402

STAMP = "%Y%m%dT%H%M%SZ"


def event(uid: str, start: dt.datetime, summary: str) -> str:
    return (f"BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{start.strftime(STAMP)}\r\n"
            f"DTEND:{(start + dt.timedelta(minutes=30)).strftime(STAMP)}\r\nSUMMARY:{summary}\r\n"
            f"LOCATION:Room {hash(uid) % 40}\r\nEND:VEVENT\r\n")


def calendar(events: str, name: str) -> str:
    return (f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calwatch benchmarks//EN\r\nX-WR-CALNAME:{name}\r\n"
            f"{events}END:VCALENDAR\r\n")


def first_start() -> dt.datetime:
    now = dt.datetime.now(dt.timezone.utc).replace(second=0, microsecond=0)
    return now + dt.timedelta(hours=2)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Daemon:
    """`calwatch watch` on a configuration, its log (debug) in FOLDER/log.txt and its metrics in FOLDER/metrics.prom."""

    def __init__(self, calwatch: str, folder: str, calendars: str, every: int):
        self.folder = folder
        with open(os.path.join(folder, "config.yml"), "w") as config:
            config.write(f"calendars:\n{calendars}timezone: UTC\nstate: state/journal.db\n"
                         f"metrics: {{ textfile: metrics.prom, every: 1s }}\n"
                         f"sinks:\n  - type: jsonl\n    path: events.jsonl\n")
        self.log_path = os.path.join(folder, "log.txt")
        environment = dict(os.environ, XDG_CACHE_HOME=os.path.join(folder, "cache"))
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [calwatch, "watch", "--config", os.path.join(folder, "config.yml"), "--log-level", "debug"],
            cwd=folder, env=environment, stdout=subprocess.DEVNULL, stderr=open(self.log_path, "w"))

    def log(self) -> str:
        with open(self.log_path, errors="replace") as log:
            return log.read()

    def wait_for(self, pattern: str, after: int = 0, seconds: float = 300, count: int = 1) -> float:
        """Seconds (monotonic) when `pattern` has appeared `count` times in the log past offset `after`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if len(re.findall(pattern, self.log()[after:], re.M)) >= count:
                return time.monotonic()
            if self.process.poll() is not None:
                sys.exit(f"calwatch watch ended:\n{self.log()[-3000:]}")
            time.sleep(0.02)
        sys.exit(f"no '{pattern}' in {seconds} s:\n{self.log()[-3000:]}")

    def parsed(self, after: int = 0) -> int:
        """Calendar files the daemon has read since offset `after` of its log."""
        return sum(int(n) for n in re.findall(r"calendar\.parsed=(\d+) .*\] (?:change|rescan|start)$",
                                              self.log()[after:], re.M))

    def wait_until_parsed(self, files: int, after: int = 0, seconds: float = 600) -> float:
        deadline = time.monotonic() + seconds
        while self.parsed(after) < files:
            if time.monotonic() > deadline or self.process.poll() is not None:
                sys.exit(f"{files} files not read:\n{self.log()[-3000:]}")
            time.sleep(0.02)
        return time.monotonic()

    def memory(self) -> dict:
        values = {}
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith(("VmRSS", "VmHWM")):
                    name, value = line.split(":")
                    values[name] = int(value.split()[0]) / 1024
        return values

    def metric(self, name: str) -> float:
        total = 0.0
        with open(os.path.join(self.folder, "metrics.prom")) as metrics:
            for line in metrics:
                if line.startswith(name):
                    total += float(line.split()[-1])
        return total

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=60)


def feeds_case(calwatch: str, root: str, feeds: int, events: int, every: int) -> list:
    folder = os.path.join(root, "feeds")
    served = os.path.join(folder, "served")
    os.makedirs(served)
    start = first_start()
    for index in range(feeds):
        body = "".join(event(f"feed{index}-{number}@bench", start + dt.timedelta(minutes=15 * number),
                             f"Meeting {number}") for number in range(events))
        with open(os.path.join(served, f"team{index}.ics"), "w", newline="") as file:
            file.write(calendar(body, f"Team {index}"))
    size = os.path.getsize(os.path.join(served, "team0.ics"))
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "feed-server.py"), served],
                              stdout=subprocess.PIPE, text=True)
    port = int(server.stdout.readline())
    stops = []
    try:
        entries = "".join(f"  - url: http://127.0.0.1:{port}/f/team{index}.ics\n    every: {every}s\n"
                          for index in range(feeds))
        daemon = Daemon(calwatch, folder, entries, every)
        stops.append(daemon.stop)
        watching = daemon.wait_until_parsed(feeds) - daemon.started
        # Settled: every feed fetched once more (a poll each after start).
        memory = daemon.memory()
        time.sleep(every * 1.5)
        requests_log = os.path.join(served, "requests.log")
        seen = len(open(requests_log).readlines())
        parsed = daemon.metric("calwatch_calendar_files_parsed_total")
        time.sleep(every * 3)
        polls = [line.split() for line in open(requests_log).readlines()[seen:]]
        parsed_quiet = daemon.metric("calwatch_calendar_files_parsed_total") - parsed
        statuses = sorted({poll[2] for poll in polls})
        body_bytes = sum(int(poll[3]) for poll in polls)

        # One feed changes: an event two hours ahead gets a new time.
        offset = len(daemon.log())
        path = os.path.join(served, f"team{feeds // 2}.ics")
        text = open(path, newline="").read().replace(f"SUMMARY:Meeting 0\r\n", "SUMMARY:Meeting 0 (moved)\r\n")
        changed_at = time.monotonic()
        with open(path + ".new", "w", newline="") as file:
            file.write(text)
        os.rename(path + ".new", path)
        fetched = daemon.wait_for(r"feed changed", offset) - changed_at
        planned = daemon.wait_until_parsed(1, offset) - changed_at
        daemon.stop()
    finally:
        for stop in stops:
            stop()
        server.kill()
    per_poll = len(polls) / feeds
    return [
        f"| ICS feeds | {feeds} × {events:,} events ({size / 1e6:.1f} MB each), every {every} s "
        f"| start-up {watching:.1f} s | {memory['VmRSS']:.0f} MB RSS ({memory['VmHWM']:.0f} MB peak) |",
        f"| ICS, unchanged | {len(polls)} requests in {every * 3} s ({per_poll:.1f} per feed), status "
        f"{'/'.join(statuses)}, {body_bytes} body bytes | files parsed meanwhile: {parsed_quiet:.0f} | |",
        f"| ICS, one feed changed | fetched {fetched:.1f} s after the change, planned {planned:.1f} s after "
        f"(the poll's wait is up to {every * 1.1:.1f} s) | | |",
    ]


def caldav_case(calwatch: str, root: str, events: int, every: int) -> list:
    folder = os.path.join(root, "caldav")
    storage = os.path.join(folder, "radicale", "collections", "collection-root", "anna", "work")
    os.makedirs(storage)
    with open(os.path.join(storage, ".Radicale.props"), "w") as props:
        json.dump({"D:displayname": "Work", "tag": "VCALENDAR"}, props)
    start = first_start()
    for number in range(events):
        uid = f"dav-{number}@bench"
        with open(os.path.join(storage, f"{uid}.ics"), "w", newline="") as item:
            item.write(calendar(event(uid, start + dt.timedelta(minutes=15 * number), f"Meeting {number}"), "Work"))
    with open(os.path.join(folder, "users"), "w") as users:
        users.write("anna:secret\n")
    port = free_port()
    server = subprocess.Popen(
        ["/usr/bin/radicale", f"--storage-filesystem-folder={folder}/radicale/collections",
         f"--server-hosts=127.0.0.1:{port}", "--auth-type=htpasswd", f"--auth-htpasswd-filename={folder}/users",
         "--auth-htpasswd-encryption=plain", "--logging-level=warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    stops = []
    try:
        time.sleep(1)
        entry = (f"  - caldav: http://127.0.0.1:{port}/\n    username: anna\n"
                 f"    passwordCommand: [/bin/echo, secret]\n    every: {every}s\n")
        daemon = Daemon(calwatch, folder, entry, every)
        stops.append(daemon.stop)
        watching = daemon.wait_until_parsed(events) - daemon.started
        daemon.wait_for(r"polled: changed")
        first = re.search(r"^.*polled: changed$", daemon.log(), re.M).group(0)
        time.sleep(every * 1.5)
        memory = daemon.memory()
        offset = len(daemon.log())
        daemon.wait_for(r"polled: unchanged", offset)
        quiet = re.search(r"^.*polled: unchanged$", daemon.log()[offset:], re.M).group(0)

        offset = len(daemon.log())
        item = calendar(event("dav-new@bench", start + dt.timedelta(minutes=5), "New meeting"), "Work")
        request = urllib.request.Request(f"http://127.0.0.1:{port}/anna/work/dav-new.ics", data=item.encode(),
                                         method="PUT", headers={"Content-Type": "text/calendar"})
        request.add_header("Authorization", "Basic " + base64.b64encode(b"anna:secret").decode())
        put_at = time.monotonic()
        urllib.request.urlopen(request).read()
        fetched = daemon.wait_for(r"polled: changed", offset) - put_at
        planned = daemon.wait_until_parsed(1, offset) - put_at
        changed = re.search(r"^.*polled: changed$", daemon.log()[offset:], re.M).group(0)
        daemon.stop()
    finally:
        for stop in stops:
            stop()
        server.kill()

    def traffic(line: str) -> str:
        fields = dict(re.findall(r"feed\.(\w+)=(\S+)", line))
        return f"{fields.get('requests')} requests, {int(fields.get('bytes', 0)):,} bytes, {fields.get('milliseconds')} ms"

    return [
        f"| CalDAV (Radicale 3.1.8) | 1 collection × {events:,} items, every {every} s | start-up {watching:.1f} s "
        f"(first sync: {traffic(first)}) | {memory['VmRSS']:.0f} MB RSS ({memory['VmHWM']:.0f} MB peak) |",
        f"| CalDAV, unchanged | {traffic(quiet)} | | |",
        f"| CalDAV, one item PUT | fetched {fetched:.1f} s after the PUT ({traffic(changed)}), planned "
        f"{planned:.1f} s after | | |",
    ]


def first_sync_case(calwatch: str, root: str, items: int) -> list:
    folder = os.path.join(root, "first-sync")
    os.makedirs(folder)
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "caldav-server.py"), folder, str(items)],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        entry = (f"  - caldav: http://127.0.0.1:{port}/cal/\n    username: anna\n"
                 "    passwordCommand: [/bin/echo, secret]\n    every: 1h\n")
        daemon = Daemon(calwatch, folder, entry, 3600)
        try:
            polled = daemon.wait_for(r"polled: changed", seconds=900) - daemon.started
            read = daemon.wait_until_parsed(items, seconds=900) - daemon.started
            memory = daemon.memory()
            # What it keeps once the files stop changing (a quiet second gives freed memory back).
            time.sleep(3)
            settled = daemon.memory()
            line = re.search(r"^.*polled: changed$", daemon.log(), re.M).group(0)
        finally:
            daemon.stop()
    finally:
        server.kill()
    fields = dict(re.findall(r"feed\.(\w+)=(\S+)", line))
    with open(os.path.join(folder, "requests.log")) as log:
        served = [line.split() for line in log]
    server_seconds = sum(float(request[2]) for request in served)
    return [
        f"| CalDAV first sync (scripts/caldav-server.py) | 1 collection × {items:,} items | items written "
        f"{polled:.1f} s, all read and planned {read:.1f} s after the start ({fields.get('requests')} requests, "
        f"{int(fields.get('bytes', 0)):,} bytes; the server's own time {server_seconds:.1f} s) | "
        f"{memory['VmRSS']:.0f} MB RSS when read, {settled['VmRSS']:.0f} MB 3 s later ({settled['VmHWM']:.0f} MB peak) |",
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--feeds", type=int, default=20)
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--first-sync", type=int, metavar="ITEMS", help="only the first sync of ITEMS CalDAV items")
    arguments = parser.parse_args()
    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    calwatch = os.path.join(ROOT, ".build", "release", "calwatch")
    root = os.path.join(DATA, "feeds")
    shutil.rmtree(root, ignore_errors=True)
    os.makedirs(root)
    rows = ["| case | what | time | memory |", "|---|---|---|---|"]
    if arguments.first_sync:
        rows += first_sync_case(calwatch, root, arguments.first_sync)
    else:
        rows += feeds_case(calwatch, root, arguments.feeds, arguments.events, arguments.every)
        rows += caldav_case(calwatch, root, arguments.events, arguments.every)
    print(f"{machine()}, {dt.date.today()}")
    print("\n".join(rows))
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
