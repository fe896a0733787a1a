#!/usr/bin/env python3
"""An account's first sync and an incremental one, against a stand-in (scripts/microsoft-server.py for Microsoft,
scripts/google-server.py for Google): N events in one calendar (default 10,000), signed in, then
`calwatch scan --config` timed three ways: the first sync (every page read, every item written) with the scan of
what it wrote; a scan with one event moved (one incremental request); and a scan of the fresh copy, not asked (the
reading alone, to subtract).

With --to-sink (Microsoft), then `calwatch watch` on the account (every: 1m) with a JSON Lines sink: an event added
on the service, starting in ten minutes, is found by the next poll and its live activity starts at once; what is
timed is from the stand-in's answer to that poll to the event's `recordedtime` (the journal's commit), for
--samples events in turn (each waits for a poll, up to a minute).

Usage: python3 benchmarks/accounts.py [--provider microsoft|google] [--events N] [--calwatch PATH]
                                      [--to-sink] [--samples N]
(make bench-accounts runs both, and --to-sink for Microsoft)
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


def google_event(index, hour_shift=0):
    day, hour = 1 + (index // 400) % 28, 8 + (index % 10) + hour_shift
    return {
        "kind": "calendar#event", "id": f"event{index:05d}", "status": "confirmed",
        "iCalUID": f"event{index:05d}@google.com", "summary": f"Meeting {index}",
        "start": {"dateTime": f"2027-01-{day:02d}T{hour:02d}:00:00Z", "timeZone": "Europe/Berlin"},
        "end": {"dateTime": f"2027-01-{day:02d}T{hour:02d}:30:00Z", "timeZone": "Europe/Berlin"},
        "hangoutLink": f"https://meet.google.com/abc-defg-{index:05d}",
        "organizer": {"email": "dana@example.com"},
        "attendees": [{"email": "megan@example.com", "self": True, "responseStatus": "accepted"}],
        "reminders": {"useDefault": True}, "updated": "2026-11-20T10:00:00.000Z",
    }


def serve_google(folder, events):
    data = {"user": "megan@example.com",
            "calendars": [{"id": "megan@example.com", "summary": "Megan", "primary": True, "selected": True,
                           "defaultReminders": [{"method": "popup", "minutes": 10}], "events": events}]}
    with open(os.path.join(folder, "calendars.json.partial"), "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(os.path.join(folder, "calendars.json.partial"), os.path.join(folder, "calendars.json"))


def serve(folder, events):
    data = {"user": {"id": "1", "mail": "MeganB@contoso.com", "userPrincipalName": "MeganB@contoso.com"},
            "calendars": [{"id": "CAL1", "name": "Calendar", "events": events}]}
    with open(os.path.join(folder, "calendars.json.partial"), "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(os.path.join(folder, "calendars.json.partial"), os.path.join(folder, "calendars.json"))


def sign_in_through_browser(calwatch, config, environment):
    """`account add` as a user with a browser: the address it prints opened, the redirect followed home."""
    import urllib.request
    child = subprocess.Popen([calwatch, "account", "add", "work", "--config", config], env=environment,
                             stderr=subprocess.PIPE, text=True)
    for line in child.stderr:
        if "code_challenge_method=S256" in line:
            urllib.request.urlopen(line.strip(), timeout=30).read()
            break
    child.stderr.read()
    if child.wait() != 0:
        raise SystemExit("the sign-in failed")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--provider", choices=["microsoft", "google"], default="microsoft")
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--calwatch", default=os.path.join(ROOT, ".build/release/calwatch"))
    parser.add_argument("--to-sink", action="store_true")
    parser.add_argument("--samples", type=int, default=3)
    options = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="calwatch-accounts-")
    google = options.provider == "google"
    make, publish = (google_event, serve_google) if google else (event, serve)
    events = [make(index) for index in range(options.events)]
    publish(folder, events)
    open(os.path.join(folder, "approve"), "w").close()
    script = "scripts/google-server.py" if google else "scripts/microsoft-server.py"
    server = subprocess.Popen([sys.executable, os.path.join(ROOT, script), folder], stdout=subprocess.PIPE, text=True)
    try:
        port = int(server.stdout.readline())
        base = f"http://127.0.0.1:{port}"
        config = os.path.join(folder, "config.yml")
        with open(config, "w", encoding="utf-8") as handle:
            if google:
                with open(os.path.join(folder, "secret"), "w", encoding="utf-8") as secret:
                    secret.write("GOCSPX-stand-in-secret\n")
                handle.write(f"accounts:\n  - name: work\n    provider: google\n    clientId: bench\n"
                             f"    clientSecretFile: secret\n    endpoints: {{ auth: \"{base}/o/oauth2/v2/auth\", "
                             f"token: \"{base}/token\", api: \"{base}\" }}\n")
            else:
                handle.write(f"accounts:\n  - name: work\n    provider: microsoft\n    clientId: bench\n"
                             f"    endpoints: {{ login: \"{base}\", graph: \"{base}\" }}\n")
        environment = dict(os.environ, XDG_STATE_HOME=folder + "/state", XDG_CACHE_HOME=folder + "/cache")
        if google:
            sign_in_through_browser(options.calwatch, config, environment)
        else:
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
        events[0] = make(0, hour_shift=1)
        publish(folder, events)
        os.utime(asked, (0, 0))  # the copy is older than `every`: the next scan asks
        timed("one event moved: a delta poll and the scan")
        timed("the copy fresh, not asked: the scan alone")
        with open(os.path.join(folder, "requests.log"), encoding="utf-8") as log:
            requests = log.read().splitlines()
        print(f"requests to the stand-in: {len(requests)} "
              f"({sum('/delta' in line or '/events' in line for line in requests)} of them pages of events)")
        if options.to_sink and not google:
            to_sink(options, folder, base, events, environment)
    finally:
        server.kill()


def to_sink(options, folder, base, events, environment):
    """One change on the service through `calwatch watch` to a sink: from the poll's answer to the commit."""
    import datetime
    config = os.path.join(folder, "watch.yml")
    with open(config, "w", encoding="utf-8") as handle:
        handle.write(f"accounts:\n  - name: work\n    provider: microsoft\n    clientId: bench\n    every: 1m\n"
                     f"    endpoints: {{ login: \"{base}\", graph: \"{base}\" }}\n"
                     f"timezone: UTC\nstate: {folder}/watch.db\nliveActivity: {{ lead: 30m }}\n"
                     f"sinks:\n  - {{ type: jsonl, path: {folder}/events.jsonl }}\n")
    log_path = os.path.join(folder, "watch.log")
    with open(log_path, "w") as log:
        watch = subprocess.Popen([options.calwatch, "watch", "--config", config], env=environment, stderr=log,
                                 stdout=subprocess.DEVNULL)
    requests_path = os.path.join(folder, "requests.log")

    def polls():
        with open(requests_path, encoding="utf-8") as log:
            return sum("/delta" in line for line in log)

    def lines():
        try:
            with open(os.path.join(folder, "events.jsonl"), encoding="utf-8") as handle:
                return [json.loads(line) for line in handle if line.strip()]
        except FileNotFoundError:
            return []

    def until(condition, limit):
        end = time.monotonic() + limit
        while not condition():
            if time.monotonic() > end:
                raise SystemExit("waited too long; see " + log_path)
            time.sleep(0.005)

    try:
        until(lambda: "watching" in open(log_path, encoding="utf-8").read(), 120)
        latencies = []
        for sample in range(options.samples):
            start = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=10)
            added = event(options.events + sample)
            added["id"] = f"AAMkAdded{sample}"
            added["iCalUId"] = f"added-{sample}"
            added["start"] = {"dateTime": start.strftime("%Y-%m-%dT%H:%M:%S.0000000"), "timeZone": "UTC"}
            added["end"] = {"dateTime": (start + datetime.timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M:%S.0000000"),
                            "timeZone": "UTC"}
            events.append(added)
            before = polls()
            serve(folder, events)
            until(lambda: polls() > before, 90)
            answered = time.time()
            found = lambda: [line for line in lines() if line["type"] == "calwatch.liveActivityStart"
                             and line["subject"].startswith(f"added-{sample}/")]
            until(lambda: found(), 30)
            recorded = datetime.datetime.fromisoformat(found()[0]["recordedtime"].replace("Z", "+00:00")).timestamp()
            latencies.append(recorded - answered)
            print(f"change {sample + 1}: committed {1000 * (recorded - answered):.0f} ms after the poll's answer")
        print(f"one change to a sink after the poll that sees it: worst {1000 * max(latencies):.0f} ms "
              f"of {len(latencies)}")
    finally:
        watch.terminate()
        watch.wait()


if __name__ == "__main__":
    main()
