#!/usr/bin/env python3
"""A hostile server against calwatch: what each attack costs it in time and memory, and how soon `watch` stops at
SIGTERM in the middle of one.

    make bench-hostile   (or: python3 benchmarks/hostile.py [--runs 3])

scripts/hostile-server.py on loopback. For each route, `calwatch scan URL` (release build) runs RUNS times under
scripts/peak-memory.py: the median wall time, the largest peak resident memory (ru_maxrss), and what calwatch said.
Then, for the routes that would otherwise hold a transfer open for minutes, `calwatch watch` follows the route as a
feed, gets SIGTERM 2 s after the request reached the server, and the time until it has exited is taken (median and
largest of RUNS).
"""
import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, machine  # noqa: E402

ROUTES = ["/trickle", "/slow-headers", "/endless", "/huge", "/bomb", "/lying", "/headers-forever", "/html-calendar",
          "/not-modified"]
HOLDING = ["/trickle", "/slow-headers", "/endless"]


def server(folder):
    process = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts/hostile-server.py"), folder],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return process, int(process.stdout.readline())


def scan(calwatch, url, cache):
    started = time.perf_counter()
    output = subprocess.run(
        [sys.executable, os.path.join(ROOT, "scripts/peak-memory.py"), calwatch, "scan", url, "--from", "2027-03-01",
         "--to", "2027-03-02", "--tz", "UTC"], capture_output=True, text=True, env={**os.environ, "XDG_CACHE_HOME": cache})
    took = time.perf_counter() - started
    run = json.loads(output.stdout)
    said = run["errors"].strip().splitlines()[-1] if run["errors"].strip() else ""
    return took, run["peakKiB"] / 1024, said.split(": ", 2)[-1][:90]


def stop_time(calwatch, url, folder, log):
    with open(os.path.join(folder, "config.yml"), "w") as config:
        config.write(f"calendars:\n  - url: {url}\nstate: journal.db\n")
    before = sum(1 for _ in open(log)) if os.path.exists(log) else 0
    watch = subprocess.Popen([calwatch, "watch", "--config", os.path.join(folder, "config.yml")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             env={**os.environ, "XDG_CACHE_HOME": os.path.join(folder, "cache")})
    deadline = time.time() + 60
    while time.time() < deadline and (sum(1 for _ in open(log)) if os.path.exists(log) else 0) <= before:
        time.sleep(0.05)
    time.sleep(2)
    started = time.perf_counter()
    watch.send_signal(signal.SIGTERM)
    watch.wait(timeout=120)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)
    calwatch = os.path.join(ROOT, ".build/release/calwatch")
    print(machine())
    with tempfile.TemporaryDirectory() as folder:
        process, port = server(folder)
        try:
            print(f"\n| route | wall (median of {arguments.runs}) | peak memory (largest) | calwatch said |")
            print("|---|---:|---:|---|")
            for route in ROUTES:
                results = [scan(calwatch, f"http://127.0.0.1:{port}{route}", os.path.join(folder, f"cache{n}"))
                           for n in range(arguments.runs)]
                print(f"| `{route}` | {statistics.median(r[0] for r in results):.2f} s | "
                      f"{max(r[1] for r in results):.1f} MB | {results[0][2]} |")
            print(f"\n| SIGTERM to `watch` during | median | largest ({arguments.runs} runs) |")
            print("|---|---:|---:|")
            for route in HOLDING:
                times = [stop_time(calwatch, f"http://127.0.0.1:{port}{route}", folder,
                                   os.path.join(folder, "requests.log")) for _ in range(arguments.runs)]
                print(f"| `{route}` | {statistics.median(times):.2f} s | {max(times):.2f} s |")
        finally:
            process.kill()


if __name__ == "__main__":
    main()
