#!/usr/bin/env python3
"""`make test` as CI runs it: a fresh clone of this checkout's HEAD, then `make test`, timed.

    make bench-suite   (or: python3 benchmarks/suite.py [--busy])

With --busy, one CPU hog per core runs beside it (scripts/busy.sh), as on a shared laptop. Prints one Markdown row
for the table in BENCHMARKS.md ("The test suite on a quiet and on a busy machine"): the date, the machine, the wall
time of the whole run and of `swift test` alone, and the counts that Swift Testing reported. The full output is
kept in a temporary folder, whose path is printed on standard error; the clone itself is removed.
"""
import argparse
import datetime as dt
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def machine():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} cores"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", action="store_true", help="one CPU hog per core beside the run")
    arguments = parser.parse_args()

    folder = tempfile.mkdtemp(prefix="calwatch-suite-")
    clone = os.path.join(folder, "calwatch")
    subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
    log_path = os.path.join(folder, "make-test.log")
    command = ["make", "test"]
    if arguments.busy:
        command = ["scripts/busy.sh"] + command
    print(f"running {' '.join(command)} in {clone}; output in {log_path}", file=sys.stderr)
    started = time.monotonic()
    with open(log_path, "w") as log:
        result = subprocess.run(command, cwd=clone, stdout=log, stderr=subprocess.STDOUT)
    wall = time.monotonic() - started
    output = open(log_path, errors="replace").read()
    # The clone and its build (about 1 GB) go; the log stays for reading.
    shutil.rmtree(clone, ignore_errors=True)

    # Swift Testing's closing line, and the `swift test` step's own length (its first and last test lines).
    counts = re.findall(r"Test run with (\d+) tests? in \d+ suites? (passed|failed)[^\n]*after ([\d.]+) seconds", output)
    tests, verdict, test_seconds = counts[-1] if counts else ("?", "did not finish", "?")
    outcome = f"{tests} {verdict}"
    outcome += ", package checks passed" if result.returncode == 0 else f", make exited {result.returncode}"
    run = "`make test-busy`, 2 CPU hogs" if arguments.busy else "`make test`, from a fresh clone"
    seconds = f"{float(test_seconds):.0f} s" if test_seconds != "?" else "?"
    print(f"| {dt.date.today()}, {machine()} | {run} | {wall:.0f} s | {seconds} | {outcome} |")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
