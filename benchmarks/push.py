#!/usr/bin/env python3
"""10,000 events through a webhook sink and an MQTT sink side by side with JSON Lines (issue: events into the
tools people already run).

    make bench-push   (or: python3 benchmarks/push.py [--runs N])

Builds calwatch in release mode, writes a calendar whose replay makes about 10,000 events, starts the test
receiver (scripts/webhook-server.py: Python's http.server, which checks every signature) and Debian's mosquitto on
loopback in a temporary folder, then replays the same window N times (default 3) round-robin: JSON Lines alone,
JSON Lines and the webhook (one request per event, then `mode: batch`), JSON Lines and MQTT (QoS 1, each batch
acknowledged). After each run it compares the ids each receiver got with those the JSON Lines sink wrote: the same
ids, none lost; repeats (at least once) are counted. Prints a Markdown table for BENCHMARKS.md.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, machine  # noqa: E402

SECRET = "whsec_" + "Y2Fsd2F0Y2gtYmVuY2gtc2VjcmV0LWtleS0xMjM0NTY3OA=="


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def calendar(folder: str) -> None:
    """27 meetings a weekday for four weeks, each with two reminders and live updates every minute."""
    os.makedirs(os.path.join(folder, "cal"), exist_ok=True)
    items = []
    for meeting in range(27):
        hour, minute = 8 + meeting // 3, (meeting % 3) * 20
        items.append(
            f"BEGIN:VEVENT\r\nUID:bench-{meeting}\r\nDTSTAMP:20270101T000000Z\r\n"
            f"DTSTART:20270301T{hour:02d}{minute:02d}00Z\r\nDURATION:PT15M\r\n"
            f"RRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\r\nSUMMARY:Meeting {meeting}\r\n"
            f"LOCATION:https://meet.google.com/abc-defg-{meeting:03d}\r\nEND:VEVENT\r\n")
    with open(os.path.join(folder, "cal", "items.ics"), "w") as file:
        file.write("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n" + "".join(items) + "END:VCALENDAR\r\n")


def replay(calwatch: str, folder: str, sinks: str) -> tuple:
    """One replay with `sinks` besides JSON Lines; returns (seconds, events, the JSON Lines ids)."""
    for name in ("events.jsonl",):
        if os.path.exists(os.path.join(folder, name)):
            os.remove(os.path.join(folder, name))
    with open(os.path.join(folder, "config.yml"), "w") as file:
        file.write("calendars: [cal]\ntimezone: UTC\ninstance: bench\nreminders: { offsets: [15m, 5m] }\n"
                   "liveActivity: { lead: 5m, updateEvery: 1m }\nsinks:\n"
                   "  - { type: jsonl, path: events.jsonl }\n" + sinks)
    started = time.perf_counter()
    done = subprocess.run([calwatch, "replay", "--config", "config.yml", "--from", "2027-03-01", "--to",
                           "2027-03-29"], cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"replay failed: {done.stderr}")
    with open(os.path.join(folder, "events.jsonl")) as file:
        ids = [json.loads(line)["id"] for line in file]
    return elapsed, len(ids), ids


def webhook_ids(folder: str) -> list:
    ids = []
    path = os.path.join(folder, "requests.jsonl")
    with open(path) as file:
        for line in file:
            request = json.loads(line)
            if not request.get("verified"):
                sys.exit("a request's signature did not verify")
            body = json.loads(request["body"])
            ids += [event["id"] for event in (body if isinstance(body, list) else [body])]
    os.remove(path)
    return ids


def mqtt_ids(path: str, expected: int) -> list:
    deadline = time.time() + 30
    while True:
        with open(path) as file:
            ids = [json.loads(line.split("\t", 1)[1])["id"] for line in file if line.startswith("calwatch/bench/")
                   and line.split("\t", 1)[0].split("/")[-1] not in ("status", "live", "next", "leave_by")]
        if len(set(ids)) >= expected or time.time() > deadline:
            open(path, "w").close()
            return ids
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    runs = parser.parse_args().runs
    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)
    calwatch = os.path.join(ROOT, ".build", "release", "calwatch")
    folder = tempfile.mkdtemp(prefix="calwatch-bench-push-")
    children = []
    try:
        calendar(folder)
        hook_folder = os.path.join(folder, "receiver")
        os.makedirs(hook_folder)
        receiver = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "webhook-server.py"),
                                     hook_folder, SECRET], stdout=subprocess.PIPE, text=True)
        children.append(receiver)
        hook_port = int(receiver.stdout.readline())
        with open(os.path.join(folder, "secret"), "w") as file:
            file.write(SECRET + "\n")
        broker_port = free_port()
        with open(os.path.join(folder, "mosquitto.conf"), "w") as file:
            file.write(f"user {os.environ.get('USER') or 'root'}\nlistener {broker_port} 127.0.0.1\n"
                       "allow_anonymous true\npersistence false\n")
        broker = subprocess.Popen(["mosquitto", "-c", os.path.join(folder, "mosquitto.conf")],
                                  stderr=subprocess.DEVNULL)
        children.append(broker)
        time.sleep(0.5)
        received = os.path.join(folder, "mqtt.txt")
        subscriber = subprocess.Popen(["mosquitto_sub", "-h", "127.0.0.1", "-p", str(broker_port), "-q", "1",
                                       "-t", "calwatch/bench/#", "-F", "%t\t%p"], stdout=open(received, "w"))
        children.append(subscriber)
        time.sleep(0.5)
        secret = os.path.join(folder, "secret")
        cases = [
            ("JSON Lines alone", "", None),
            ("JSON Lines + webhook (a request per event)",
             f"  - {{ type: webhook, url: 'http://127.0.0.1:{hook_port}/hook', secretFile: {secret} }}\n",
             lambda: webhook_ids(hook_folder)),
            ("JSON Lines + webhook (mode: batch, 100 a request)",
             f"  - {{ type: webhook, url: 'http://127.0.0.1:{hook_port}/hook', mode: batch, secretFile: {secret} }}\n",
             lambda: webhook_ids(hook_folder)),
            ("JSON Lines + MQTT (QoS 1)",
             f"  - {{ type: mqtt, url: 'mqtt://127.0.0.1:{broker_port}', discovery: false }}\n",
             None),
        ]
        times = {name: [] for name, _, _ in cases}
        notes = {}
        events = 0
        for _ in range(runs):
            for name, sinks, ids_of in cases:
                elapsed, events, written = replay(calwatch, folder, sinks)
                times[name].append(elapsed)
                got = (ids_of() if ids_of else mqtt_ids(received, len(written)) if "MQTT" in name else None)
                if got is not None:
                    missing = set(written) - set(got)
                    if missing or set(got) - set(written):
                        sys.exit(f"{name}: {len(missing)} ids missing, {len(set(got) - set(written))} unknown")
                    notes[name] = f"same {len(set(got)):,} ids, {len(got) - len(set(got))} repeats"
        print()
        print(f"{machine()}; {events:,} events a replay, {runs} runs each round-robin, medians.")
        print()
        print("| sinks | time | events/s | what the receiver got |")
        print("|---|---:|---:|---|")
        for name, _, _ in cases:
            median = statistics.median(times[name])
            print(f"| {name} | {median:.2f} s | {events / median:,.0f} | {notes.get(name, '(the file itself)')} |")
    finally:
        for child in children:
            child.send_signal(signal.SIGKILL)
            child.wait()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
