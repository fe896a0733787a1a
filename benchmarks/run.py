#!/usr/bin/env python3
"""Time `calwatch scan` on the 10,000-event benchmark calendar against the libical floor.

    make bench         (or: python3 benchmarks/run.py [--runs N])
    make bench-replay  (or: python3 benchmarks/run.py --replay): the one-year replay through the JSONL sink
    make bench-sinks   (or: python3 benchmarks/run.py --sinks [--week]): the replay into a JSONL file and SQLite
    make bench-package (or: python3 benchmarks/run.py --package after `make deb`): the package's size, and the
                       start-up of its static binary against the toolchain-linked release build
    make bench-day     (or: python3 benchmarks/run.py --day): the week's replay with `day:` (conflicts, overruns,
                       endingSoon, invitations, the agenda, the travel zone) against the same without, in turn
    make bench-replay-weeks (or: python3 benchmarks/run.py --weeks [--against REV]): the benchmark week and a week
                       of 5,000 weekly meetings (mostly live-activity updates) to /dev/null, with and without
                       live activities: the rate the replay reports, and what an update costs against the others
    make bench-against REV=… (or: python3 benchmarks/run.py --against REV): this checkout against a revision, in
                       turn: the week's replay and the year's scan, ratios and whether the outputs are the same

Builds calwatch in release mode and the C floor, generates the data once, then runs each case N times
(default 5) and prints the median wall time, the ratios the targets are set on, the occurrence count and
the peak resident memory, as a Markdown table for BENCHMARKS.md.
"""
import argparse
import hashlib
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "bench-data")
WINDOW = ("2024-06-01", "2025-06-01")
# `day:` with all of it (conflicts, overruns, endingSoon, invitations, the agenda, the travel zone), for Anna.
DAY = """me: [anna@example.org]
day:
  agendaAt: "08:00"
  endingSoon: 5m
  conflicts: { minOverlap: 5m, include: [accepted, tentative] }
  pendingInvitations: [1d, 2h]
  travelZone: true
"""


def run(command, stdout=subprocess.DEVNULL):
    """Runs a command once; returns (seconds, peak RSS of that child in MB, its standard output)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE, cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    output = process.stdout.read().decode() if process.stdout else ""
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(command)} failed: {process.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024, output


def measure(cases, runs):
    """Runs the cases round-robin, so that load from elsewhere on a shared machine falls on all of them alike."""
    samples = {name: ([], [], "") for name, _, _ in cases}
    for _ in range(runs):
        for name, command, stdout in cases:
            seconds, peak, output = run(command, stdout)
            times, peaks, _ = samples[name]
            times.append(seconds)
            peaks.append(peak)
            samples[name] = (times, peaks, output)
    return [{"name": name, "median": statistics.median(samples[name][0]), "min": min(samples[name][0]),
             "peak": max(samples[name][1]), "output": samples[name][2]} for name, _, _ in cases]


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"Machine: {cpu}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}"


def timed_replay(command) -> tuple:
    """Runs `calwatch replay` (Europe/Berlin); returns (events, seconds, peak RSS in MB) from its summary."""
    started = time.perf_counter()
    process = subprocess.Popen(command + ["--tz", "Europe/Berlin"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, cwd=ROOT)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - started
    summary = process.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"replay failed: {summary}")
    return int(summary.split(": ", 1)[1].split(" events", 1)[0]), elapsed, usage.ru_maxrss / 1024


def replay(calwatch: str, calendar: str) -> None:
    """A week and the whole year through the JSON Lines sink to /dev/null: events per second and peak memory.

    Memory is bounded when the year (52 times the events) peaks about where the week does; what grows with the
    window is the calendar's occurrences, held for the whole replay.
    """
    print()
    print(f"{machine()}; one run each.")
    print()
    print("| window | events | time | events/s | peak RSS |")
    print("|---|---:|---:|---:|---:|")
    for label, start, end in (("one week", "2024-06-03", "2024-06-10"), ("one year", *WINDOW)):
        events, elapsed, peak = timed_replay([calwatch, "replay", calendar, "--from", start, "--to", end])
        print(f"| {label} ({start}..{end}) | {events:,} | {elapsed:.1f} s | {events / elapsed:,.0f} | {peak:.0f} MB |")


def sinks(calwatch: str, calendar: str, week_only: bool) -> None:
    """The replay into each file sink alone (a JSON Lines file, then the SQLite database), end to end: events per
    second as a user sees them, with the size of what was written. Needs about 35 GB free for the year."""
    out = os.path.join(DATA, "sinks")
    os.makedirs(out, exist_ok=True)
    print()
    print(f"{machine()}; one run each.")
    print()
    print("| sink | window | events | time | events/s | written | peak RSS |")
    print("|---|---|---:|---:|---:|---:|---:|")
    windows = [("one week", "2024-06-03", "2024-06-10")] + ([] if week_only else [("one year", *WINDOW)])
    for label, start, end in windows:
        for sink, target in (("jsonl", "events.jsonl"), ("sqlite", "events.db")):
            for name in os.listdir(out):
                os.remove(os.path.join(out, name))
            config = os.path.join(out, "config.yml")
            with open(config, "w") as file:
                file.write(f"sinks:\n  - type: {sink}\n    path: {target}\n")
            events, elapsed, peak = timed_replay(
                [calwatch, "replay", calendar, "--from", start, "--to", end, "--config", config])
            size = sum(os.path.getsize(os.path.join(out, name)) for name in os.listdir(out) if name != "config.yml")
            print(f"| {sink} | {label} | {events:,} | {elapsed:.1f} s | {events / elapsed:,.0f} | "
                  f"{size / 1e9:.2f} GB | {peak:.0f} MB |", flush=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))


def package(calwatch: str, runs: int) -> None:
    """The Debian package: its size, and how long its static binary takes to start (`--help`: argument parsing
    and nothing else) and to scan the samples, against the release build linked to the toolchain's shared Swift
    libraries, round-robin."""
    import glob
    import shutil
    import tempfile
    debs = sorted(glob.glob(os.path.join(ROOT, "calwatch_*.deb")), key=os.path.getmtime)
    if not debs:
        sys.exit("no calwatch_*.deb here: run `make deb` first (make bench-package does)")
    deb = debs[-1]
    root = tempfile.mkdtemp()
    try:
        subprocess.run(["dpkg-deb", "-x", deb, root], check=True)
        static = os.path.join(root, "usr", "bin", "calwatch")
        stripped = os.path.join(root, "calwatch-release-stripped")
        subprocess.run(["strip", "-o", stripped, calwatch], check=True)
        installed = int(subprocess.run(["dpkg-deb", "-f", deb, "Installed-Size"], capture_output=True, text=True,
                                       check=True).stdout)
        samples = ["scan", os.path.join(ROOT, "samples", "calendars"), "--from", "2027-03-01", "--to", "2027-03-08",
                   "--tz", "Europe/Berlin"]
        results = measure([
            ("static (package) --help", [static, "--help"], subprocess.DEVNULL),
            ("shared Swift libraries (release build) --help", [calwatch, "--help"], subprocess.DEVNULL),
            ("static (package) scan samples/calendars, one week", [static, *samples], subprocess.DEVNULL),
            ("shared Swift libraries (release build) scan samples/calendars", [calwatch, *samples],
             subprocess.DEVNULL),
        ], runs)
        print()
        print(f"{machine()}; {runs} runs each, round-robin, median.")
        print()
        print(f"- {os.path.basename(deb)}: **{os.path.getsize(deb) / 1e6:.1f} MB** (xz); installed "
              f"{installed / 1024:.1f} MiB; the stripped static binary {os.path.getsize(static) / 1e6:.1f} MB, the "
              f"stripped release build {os.path.getsize(stripped) / 1e6:.1f} MB plus the toolchain's shared libraries")
        print()
        print("| case | median | best | peak RSS |")
        print("|---|---:|---:|---:|")
        for r in results:
            print(f"| {r['name']} | {r['median'] * 1000:.1f} ms | {r['min'] * 1000:.1f} ms | {r['peak']:.0f} MB |")
        print()
        print(f"- start-up, static / shared: **{results[0]['median'] / results[1]['median']:.2f}x**; "
              f"scan of the samples: **{results[2]['median'] / results[3]['median']:.2f}x**")
    finally:
        shutil.rmtree(root)


def digest(path: str) -> str:
    """SHA-256 of a file of JSON lines with each event's `recordedtime` taken out."""
    sha = hashlib.sha256()
    with open(path, "rb") as lines:
        for line in lines:
            sha.update(re.sub(rb'"recordedtime":"[^"]*"', b"", line))
    return sha.hexdigest()


def build_revision(revision: str) -> str:
    """The release calwatch of `revision`, built in a clone of this checkout (`.build-against`): its path."""
    folder = os.path.join(ROOT, ".build-against")
    if not os.path.exists(os.path.join(folder, ".git")):
        subprocess.run(["git", "clone", "-q", ROOT, folder], check=True)
    subprocess.run(["git", "-C", folder, "fetch", "-q", ROOT], check=True)
    subprocess.run(["git", "-C", folder, "checkout", "-q", "--detach", revision], check=True)
    subprocess.run(["swift", "build", "-c", "release"], cwd=folder, check=True)
    return os.path.join(folder, ".build", "release", "calwatch")


def against(calwatch: str, revision: str, calendar: str, runs: int) -> None:
    """This build and one of `revision`, run in turn on the same cases (so a busy machine slows both alike): the
    median time of each, the median of the per-pair ratios, peak memory, and whether the outputs are the same byte
    for byte apart from `recordedtime`."""
    other = build_revision(revision)
    folder = os.path.dirname(os.path.dirname(os.path.dirname(other)))
    cases = {
        "replay, the week (JSON Lines to a file)": ["replay", calendar, "--from", "2024-06-03", "--to", "2024-06-10",
                                                    "--tz", "Europe/Berlin"],
        "scan, the year": ["scan", calendar, "--from", WINDOW[0], "--to", WINDOW[1], "--tz", "Europe/Berlin"],
    }
    print()
    print(f"{machine()}; this checkout against {revision}, {runs} runs each in turn.")
    print()
    print("| case | this (median) | " + revision + " (median) | this / that (median of pairs) | peak MB | same output |")
    print("|---|---:|---:|---:|---:|---|")
    for name, arguments in cases.items():
        mine, theirs, ratios, peaks = [], [], [], [0.0, 0.0]
        outputs = [os.path.join(folder, f"output-{index}") for index in (0, 1)]
        for _ in range(runs):
            for index, binary in enumerate((calwatch, other)):
                with open(outputs[index], "wb") as output:
                    seconds, peak, _ = run([binary, *arguments], stdout=output)
                (mine if index == 0 else theirs).append(seconds)
                peaks[index] = max(peaks[index], peak)
            ratios.append(mine[-1] / theirs[-1])
        same = digest(outputs[0]) == digest(outputs[1])
        print(f"| {name} | {statistics.median(mine):.2f} s | {statistics.median(theirs):.2f} s | "
              f"{statistics.median(ratios):.3f} | {peaks[0]:.0f} / {peaks[1]:.0f} | "
              f"{'yes' if same else 'NO'} |")


def replay_rate(command: list) -> tuple:
    """Runs `calwatch replay` to /dev/null; returns (events, the replay's own seconds) from its summary."""
    summary = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                             check=True).stderr
    found = re.search(r": (\d+) events;.*; ([\d.]+) s \(", summary)
    return int(found.group(1)), float(found.group(2))


def weeks(calwatch: str, revision: str | None, runs: int) -> None:
    """Both weeks through JSON Lines to /dev/null, with live activities (the default) and without (a rule turns them
    off), this build and `revision`'s in turn: events per second as the replay reports them, and what the updates
    cost: (time with - time without) / (events with - events without), against the others' time per event."""
    builds = {"this": calwatch}
    if revision:
        builds[revision] = build_revision(revision)
    out = os.path.join(DATA, "weeks")
    os.makedirs(out, exist_ok=True)
    configs = {}
    for name, extra in (("with", ""), ("without", "rules:\n  - liveActivity: false\n")):
        configs[name] = os.path.join(out, f"config-{name}.yml")
        with open(configs[name], "w") as file:
            file.write("sinks:\n  - type: jsonl\n    path: \"-\"\n" + extra)
    week = ["--from", "2024-06-03", "--to", "2024-06-10", "--tz", "Europe/Berlin"]
    calendars = {"the benchmark week": os.path.join(DATA, "benchmark.ics"),
                 "5,000 weekly meetings": os.path.join(DATA, "meetings.ics")}
    samples = {}
    for _ in range(runs):
        for calendar_name, calendar in calendars.items():
            for build, binary in builds.items():
                for config_name, config in configs.items():
                    key = (calendar_name, build, config_name)
                    events, seconds = replay_rate([binary, "replay", calendar, *week, "--config", config])
                    samples.setdefault(key, ([], []))[0].append(seconds)
                    samples[key][1].append(events)
    print()
    print(f"{machine()}; {runs} runs each, in turn; medians of the replay's own time.")
    print()
    print("| week | build | events | events/s | without live activities: events, events/s | an update | another "
          "event | / " + (revision or "-") + " (with) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for calendar_name in calendars:
        for build in builds:
            with_times, with_events = samples[(calendar_name, build, "with")]
            without_times, without_events = samples[(calendar_name, build, "without")]
            t_with, t_without = statistics.median(with_times), statistics.median(without_times)
            n_with, n_without = with_events[0], without_events[0]
            update = (t_with - t_without) / max(1, n_with - n_without) * 1e6
            other = t_without / max(1, n_without) * 1e6
            ratio = ""
            if revision and build == "this":
                theirs = samples[(calendar_name, revision, "with")][0]
                ratio = f"{statistics.median(m / t for m, t in zip(with_times, theirs)):.3f}"
            print(f"| {calendar_name} | {build} | {n_with:,} | {n_with / t_with:,.0f} | {n_without:,}, "
                  f"{n_without / t_without:,.0f} | {update:.2f} µs | {other:.2f} µs | {ratio} |")


def day(calwatch: str, calendar: str, runs: int) -> None:
    """The week's replay through JSON Lines to /dev/null without `day:` and with all of it, in turn: what the day's
    planning costs on a busy calendar, and how many of its events it found."""
    out = os.path.join(DATA, "day")
    os.makedirs(out, exist_ok=True)
    configs = {}
    for name, extra in (("without day:", ""), ("with day: (all of it)", DAY)):
        configs[name] = os.path.join(out, f"config-{len(configs)}.yml")
        with open(configs[name], "w") as file:
            file.write("sinks:\n  - type: jsonl\n    path: \"-\"\n" + extra)
    week = ["--from", "2024-06-03", "--to", "2024-06-10", "--tz", "Europe/Berlin"]
    cases = [(name, [calwatch, "replay", calendar, *week, "--config", config], subprocess.DEVNULL)
             for name, config in configs.items()]
    results = measure(cases, runs)
    counts = subprocess.run([calwatch, "replay", calendar, *week, "--config", configs["with day: (all of it)"]],
                            capture_output=True, text=True, cwd=ROOT).stderr.strip().splitlines()[0]
    print()
    print(f"{machine()}; {runs} runs each, in turn.")
    print()
    print("| case | median | min | peak RSS | / without |")
    print("|---|---:|---:|---:|---:|")
    base = results[0]["median"]
    for result in results:
        print(f"| {result['name']} | {result['median']:.2f} s | {result['min']:.2f} s | {result['peak']:.0f} MB | "
              f"{result['median'] / base:.2f} |")
    print()
    print(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--python", action="store_true",
                        help="also time recurring-ical-events once (pip install recurring-ical-events; ~30 s)")
    parser.add_argument("--replay", action="store_true",
                        help="time `calwatch replay` over a week and over the year instead (~5 minutes)")
    parser.add_argument("--sinks", action="store_true",
                        help="time the replay into a JSONL file and into SQLite instead (~10 minutes, ~35 GB)")
    parser.add_argument("--week", action="store_true", help="with --sinks: the week only (~30 s)")
    parser.add_argument("--package", action="store_true",
                        help="the Debian package's size and its static binary's start-up instead (after make deb)")
    parser.add_argument("--day", action="store_true",
                        help="the week's replay with day: against the same without, in turn (~1 minute)")
    parser.add_argument("--weeks", action="store_true",
                        help="both weeks' replays with and without live activities, this build (and --against REV's) "
                             "in turn (~3 minutes)")
    parser.add_argument("--against", metavar="REV",
                        help="this checkout against revision REV (built in .build-against/), run in turn: the "
                             "week's replay and the year's scan, their medians, ratios and outputs compared (~5 minutes)")
    args = parser.parse_args()

    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)
    libical = subprocess.run(["pkg-config", "--cflags", "--libs", "libical"], capture_output=True, text=True,
                             check=True).stdout.split()
    floor = os.path.join(DATA, "floor")
    os.makedirs(DATA, exist_ok=True)
    subprocess.run(["cc", "-O2", os.path.join(ROOT, "benchmarks", "floor.c"), *libical, "-o", floor], check=True)
    if not os.path.exists(os.path.join(DATA, "meetings.ics")):
        subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "generate.py"), DATA], check=True)

    calwatch = os.path.join(ROOT, ".build", "release", "calwatch")
    if args.weeks:
        weeks(calwatch, args.against, args.runs)
        return
    if args.against:
        against(calwatch, args.against, os.path.join(DATA, "benchmark.ics"), args.runs)
        return
    if args.package:
        package(calwatch, max(args.runs, 20))
        return
    if args.day:
        day(calwatch, os.path.join(DATA, "benchmark.ics"), args.runs)
        return
    if args.replay:
        replay(calwatch, os.path.join(DATA, "benchmark.ics"))
        return
    if args.sinks:
        sinks(calwatch, os.path.join(DATA, "benchmark.ics"), args.week)
        return
    scan = [calwatch, "scan", "--from", WINDOW[0], "--to", WINDOW[1], "--tz", "Europe/Berlin"]
    single = os.path.join(DATA, "benchmark.ics")
    vdir = os.path.join(DATA, "vdir")
    results = measure([
        ("libical floor (C: parse + iterate)", [floor, single, "20240601T000000", "20250601T000000"],
         subprocess.PIPE),
        ("calwatch scan benchmark.ics > /dev/null", scan[:2] + [single] + scan[2:], subprocess.DEVNULL),
        ("calwatch scan vdir/ (10,000 files) > /dev/null", scan[:2] + [vdir] + scan[2:], subprocess.DEVNULL),
        ("calwatch scan benchmark.ics --no-classify > /dev/null", scan[:2] + [single] + scan[2:] + ["--no-classify"],
         subprocess.DEVNULL),
    ], args.runs)
    count = subprocess.run(scan[:2] + [single] + scan[2:], capture_output=True, cwd=ROOT).stdout.count(b"\n")
    vdir_count = subprocess.run(scan[:2] + [vdir] + scan[2:], capture_output=True, cwd=ROOT).stdout.count(b"\n")
    floor_time, single_time, vdir_time, unclassified_time = (r["median"] for r in results)

    print()
    print(f"{machine()}; {args.runs} runs each, median.")
    print(f"Window {WINDOW[0]}..{WINDOW[1]} (Europe/Berlin): calwatch prints {count} occurrences "
          f"(vdir: {vdir_count}); the floor counts {results[0]['output'].strip()}.")
    print()
    print("| case | median | best | peak RSS |")
    print("|---|---:|---:|---:|")
    for r in results:
        print(f"| {r['name']} | {r['median'] * 1000:.0f} ms | {r['min'] * 1000:.0f} ms | {r['peak']:.0f} MB |")
    print()
    print(f"- single file / floor: **{single_time / floor_time:.2f}x** (target <= 1.5x)")
    print(f"- vdir / single file: **{vdir_time / single_time:.2f}x** (target <= 2x)")
    print(f"- classification (flights, meetings) adds **{(single_time / unclassified_time - 1) * 100:.0f}%** "
          f"to the scan (target < 25%)")
    print(f"- peak memory: **{max(r['peak'] for r in results[1:]):.0f} MB** (target < 100 MB)")
    if args.python:
        reference = measure([("recurring-ical-events (Python)", [sys.executable, os.path.join(ROOT, "benchmarks",
                             "python_reference.py"), single, *WINDOW], subprocess.PIPE)], 1)[0]
        print(f"- recurring-ical-events: {reference['median']:.1f} s, {reference['peak']:.0f} MB, "
              f"{reference['output'].strip()} occurrences: calwatch is **{reference['median'] / single_time:.0f}x** "
              "faster (target >= 20x)")


if __name__ == "__main__":
    main()
