#!/usr/bin/env python3
"""The local server under hostile load: are answers quick and reminders on time while clients misbehave?

    make bench-server   (or: python3 benchmarks/server.py [--seconds 240] [--idle 200] [--streams 50])

Starts the release build's `calwatch watch` (serve: on loopback TCP, a JSON Lines sink) on the benchmark vdir (its
first day a week from today) and a calendar of meetings whose 5-minute reminders fall due 2 s apart, then for
SECONDS keeps up at once:

- IDLE connections that send half a request's head and wait (one that the server closes is opened again);
- STREAMS event-stream clients that read GET /v1/events for 0.3 to 1.2 s, hang up and connect again;
- one client that asks GET /v1/next and posts an answer (a dismissal of an occurrence that does not exist, which
  the daemon refuses: the whole round trip through the journal) in turn, each timed;
- 10,000 requests with a wrong token, then the log's growth measured.

Prints, as Markdown for BENCHMARKS.md: the answers' and next's latency percentiles, the reminders' lateness, the
stream reconnections made, the daemon's resident memory before and after them, and the log's lines about refusals.
"""
import argparse
import datetime as dt
import http.client
import json
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lateness import meeting, percentile, reminder_lateness  # noqa: E402
from run import machine  # noqa: E402
from watch import memory, release_and_vdir, wait_for  # noqa: E402


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=300, help="about how long the load lasts")
    parser.add_argument("--idle", type=int, default=200)
    parser.add_argument("--streams", type=int, default=50)
    parser.add_argument("--items", type=int, default=2000, help="files of the benchmark vdir kept")
    parser.add_argument("--calwatch", help="this binary instead of the checkout's release build")
    args = parser.parse_args()

    calwatch, work, vdir = release_and_vdir("calwatch-bench-server-", build=args.calwatch is None)
    calwatch = os.path.abspath(args.calwatch) if args.calwatch else calwatch
    collection = os.path.join(vdir, "benchmark")
    for name in sorted(os.listdir(collection))[args.items:]:
        os.remove(os.path.join(collection, name))
    reminders = os.path.join(vdir, "reminders")
    os.mkdir(reminders)
    port = free_port()
    sink = os.path.join(work, "events.jsonl")
    with open(os.path.join(work, "config.yml"), "w") as handle:
        handle.write(f"calendars: [{vdir}]\ntimezone: Europe/Berlin\nstate: {work}/journal.db\n"
                     f"reminders: {{ offsets: [5m] }}\nserve: {{ listen: 127.0.0.1:{port} }}\n"
                     f"sinks:\n  - type: jsonl\n    path: {sink}\n")
    log = os.path.join(work, "log.txt")
    with open(log, "w") as log_handle:
        daemon = subprocess.Popen([calwatch, "watch", "--config", os.path.join(work, "config.yml")],
                                  stdout=subprocess.DEVNULL, stderr=log_handle)
    stop = threading.Event()
    threads = []
    try:
        wait_for(log, "watching", 120)
        token = open(os.path.join(work, "journal.db.token")).read().strip()
        auth = {"Authorization": f"Bearer {token}"}
        count = int(args.seconds / 2) - 40
        first = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(minutes=5, seconds=30)
        for index in range(count):
            with open(os.path.join(reminders, f"on-time-{index:04d}.ics"), "w", newline="") as handle:
                handle.write(meeting(f"on-time-{index:04d}@calwatch.example", first + dt.timedelta(seconds=2 * index)))
        memory_before = memory(daemon.pid)[0]

        def idle() -> None:
            held = []
            while not stop.is_set():
                held = [connection for connection in held if connection.fileno() >= 0]
                while len(held) < args.idle // 4 and not stop.is_set():
                    connection = socket.create_connection(("127.0.0.1", port))
                    connection.sendall(b"GET /v1/next HTTP/1.1\r\nHost: x\r\n")
                    held.append(connection)
                for connection in list(held):
                    connection.setblocking(False)
                    try:
                        if connection.recv(1) == b"":
                            connection.close()
                    except BlockingIOError:
                        pass
                    except OSError:
                        connection.close()
                time.sleep(1)
            for connection in held:
                connection.close()

        reconnections = [0]

        def stream() -> None:
            last = None
            while not stop.is_set():
                try:
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    headers = dict(auth)
                    if last:
                        headers["Last-Event-ID"] = last
                    connection.request("GET", "/v1/events", headers=headers)
                    response = connection.getresponse()
                    until = time.monotonic() + random.uniform(0.3, 1.2)
                    while time.monotonic() < until and not stop.is_set():
                        connection.sock.settimeout(max(0.05, until - time.monotonic()))
                        try:
                            line = response.fp.readline()
                        except (socket.timeout, TimeoutError):
                            break
                        if line.startswith(b"id: "):
                            last = line[4:].strip().decode()
                    connection.close()
                    reconnections[0] += 1
                except OSError:
                    time.sleep(0.1)

        timings = {"next": [], "answer": []}

        def asker() -> None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            turn = 0
            while not stop.is_set():
                turn += 1
                began = time.perf_counter()
                if turn % 2:
                    connection.request("GET", "/v1/next", headers=auth)
                    kind = "next"
                else:
                    body = json.dumps({"event": f"nobody-{turn}@calwatch.example/2027-01-01T00:00:00Z"})
                    connection.request("POST", "/v1/answers/dismiss", body=body,
                                       headers={**auth, "Content-Type": "application/json"})
                    kind = "answer"
                response = connection.getresponse()
                response.read()
                timings[kind].append((time.perf_counter() - began) * 1000)
                time.sleep(0.1)

        for target in [idle] * 4 + [stream] * args.streams + [asker]:
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            threads.append(thread)
        samples = []

        def sampler() -> None:
            while not stop.is_set():
                samples.append((reconnections[0], memory(daemon.pid)[0]))
                stop.wait(15)

        thread = threading.Thread(target=sampler, daemon=True)
        thread.start()
        threads.append(thread)
        log_before = os.path.getsize(log)
        bad = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        for _ in range(10_000):
            bad.request("GET", "/v1/day", headers={"Authorization": "Bearer wrong"})
            bad.getresponse().read()
        log_after_bad = os.path.getsize(log)
        deadline = first + dt.timedelta(seconds=2 * count) - dt.timedelta(minutes=5) + dt.timedelta(seconds=5)
        while dt.datetime.now(dt.timezone.utc) < deadline:
            time.sleep(1)
        stop.set()
        for thread in threads:
            thread.join(timeout=15)
        memory_after = memory(daemon.pid)[0]
    finally:
        stop.set()
        daemon.terminate()
        daemon.wait(timeout=60)

    lateness = reminder_lateness(sink)
    refusal_lines = sum(1 for line in open(log) if "refused requests" in line)
    print()
    print(f"{machine()}; release build; {args.items} files of the benchmark vdir and {count} meetings; for the "
          f"reminders' span: {args.idle} idle connections (half a head each), {args.streams} event-stream clients "
          f"reconnecting every 0.3–1.2 s, next and an answer asked in turn every 100 ms; 10,000 wrong-token requests "
          f"first.")
    print()
    print("| measure | n | p50 | p90 | p99 | max |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, values in [("GET /v1/next", timings["next"]), ("POST /v1/answers/dismiss (refused by the daemon)",
                                                               timings["answer"]), ("reminder lateness", lateness)]:
        if values:
            print(f"| {name} | {len(values)} | {percentile(values, 0.5):.0f} ms | {percentile(values, 0.9):.0f} ms | "
                  f"{percentile(values, 0.99):.0f} ms | {max(values):.0f} ms |")
    print()
    print(f"event-stream reconnections: {reconnections[0]}; the daemon's resident memory {memory_before:.0f} MB "
          f"before, {memory_after:.0f} MB after; 10,000 wrong tokens grew the log by {log_after_bad - log_before} "
          f"bytes ({refusal_lines} lines about refusals over the whole run)")
    if timings["answer"]:
        print(f"mean answer {statistics.mean(timings['answer']):.1f} ms")
    print("resident memory (MB) by event-stream reconnections so far: " +
          ", ".join(f"{count}: {resident:.0f}" for count, resident in samples))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
