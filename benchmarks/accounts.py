#!/usr/bin/env python3
"""A Microsoft 365 account's first sync and an incremental one, against the stand-in (scripts/microsoft-server.py):
N events in one calendar (default 10,000), signed in by device code, then `calwatch scan --config` timed three ways:
the first sync (the window read whole in pages of 100, every item written) with the scan of what it wrote; a scan
with one event moved (one delta request); and the same scan with --no-fetch's equivalent, a fresh copy read without
asking (the reading alone, to subtract).

Usage: python3 benchmarks/accounts.py [--events N] [--calwatch PATH]   (make bench-accounts)
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def event(index, hour_shift=0):
    day, hour = 1 + (index // 400) % 28, 8 + (index % 10) + hour_shift
    return {
        "id": f"AAMkAGI2T{index:05d}", "iCalUId": f"040000008200E00074C5B7101A82E008{index:05d}",
        "subject": f"Meeting {index}", "bodyPreview": "Let's kick-start this event planning!",
        "start": {"dateTime": f"2027-01-{day:02d}T{hour:02d}:00:00.0000000", "timeZone": "UTC"},
        "end": {"dateTime": f"2027-01-{day:02d}T{hour:02d}:30:00.0000000", "timeZone": "UTC"},
        "isAllDay": False, "isCancelled": False, "showAs": "busy", "type": "occurrence",
        "location": {"displayName": "Conf Room 3"}, "onlineMeetingProvider": "teamsForBusiness",
        "onlineMeeting": {"joinUrl": f"https://teams.microsoft.com/l/meetup-join/19%3ameeting_{index}%40thread.v2/0"},
        "responseStatus": {"response": "accepted"}, "isReminderOn": True, "reminderMinutesBeforeStart": 15,
        "organizer": {"emailAddress": {"name": "Dana Swope", "address": "DanaS@contoso.com"}},
        "lastModifiedDateTime": "2026-11-20T10:00:00.0000000Z",
    }


def serve(folder, events):
    data = {"user": {"id": "1", "mail": "MeganB@contoso.com", "userPrincipalName": "MeganB@contoso.com"},
            "calendars": [{"id": "CAL1", "name": "Calendar", "events": events}]}
    with open(os.path.join(folder, "calendars.json.partial"), "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(os.path.join(folder, "calendars.json.partial"), os.path.join(folder, "calendars.json"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--calwatch", default=os.path.join(ROOT, ".build/release/calwatch"))
    options = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="calwatch-accounts-")
    events = [event(index) for index in range(options.events)]
    serve(folder, events)
    open(os.path.join(folder, "approve"), "w").close()
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts/microsoft-server.py"), folder],
                              stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        config = os.path.join(folder, "config.yml")
        with open(config, "w", encoding="utf-8") as handle:
            handle.write(f"accounts:\n  - name: work\n    provider: microsoft\n    clientId: bench\n"
                         f"    endpoints: {{ login: \"http://127.0.0.1:{port}\", graph: \"http://127.0.0.1:{port}\" }}\n")
        environment = dict(os.environ, XDG_STATE_HOME=folder + "/state", XDG_CACHE_HOME=folder + "/cache")
        subprocess.run([options.calwatch, "account", "add", "work", "--device-code", "--config", config],
                       env=environment, check=True, stderr=subprocess.DEVNULL)
        scan = [options.calwatch, "scan", "--config", config, "--from", "2026-12-25", "--to", "2027-02-01",
                "--tz", "UTC"]

        def timed(label):
            start = time.monotonic()
            result = subprocess.run(scan, env=environment, capture_output=True, text=True)
            elapsed = time.monotonic() - start
            lines = result.stdout.count("\n")
            print(f"{label}: {elapsed:.2f} s, {lines} occurrences, exit {result.returncode}")
            return elapsed

        timed(f"first sync of {options.events} events and the scan")
        asked = os.path.join(folder, "cache/calwatch/accounts/work.asked")
        events[0] = event(0, hour_shift=1)
        serve(folder, events)
        os.utime(asked, (0, 0))  # the copy is older than `every`: the next scan asks
        timed("one event moved: a delta poll and the scan")
        timed("the copy fresh, not asked: the scan alone")
        with open(os.path.join(folder, "requests.log"), encoding="utf-8") as log:
            requests = log.read().splitlines()
        print(f"requests to the stand-in: {len(requests)} "
              f"({sum('calendarView/delta' in line for line in requests)} of them delta pages)")
    finally:
        server.kill()


if __name__ == "__main__":
    main()
