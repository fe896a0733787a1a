#!/usr/bin/env python3
"""Measure `calwatch watch` on the 10,000-file vdir: change latency, CPU per change, idle CPU, memory.

    make bench-watch   (or: python3 benchmarks/watch.py [--changes N] [--idle SECONDS])
    python3 benchmarks/watch.py --startup RUNS [--against REVISION]

Generates the benchmark vdir with its first day a week from today (5,000 weekly series and 5,000 single events,
so the daemon holds a full 60-day horizon and nothing is due while it is measured), starts the release build's
`calwatch watch` on it with a JSON Lines sink, then:
- rewrites one item at a time the way vdirsyncer does (a temporary name, then a rename over the item), each a
  flight with a new number ten days ahead, and times the rename until its `flightDetected` line is in the sink's
  file (debounce included);
- reads the daemon's CPU time (/proc/PID/stat) around the changes, around an idle span, and around one rescan
  (a new folder), and its resident memory.
Prints a Markdown table for BENCHMARKS.md.

`--startup`: the time until `watch` is ready (its first plan committed, the `watching` line), on the vdir with its
first day a week ago (about 45,000 occurrences in the window, meetings running and reminders due), restarted RUNS
times on its journal; with `--against`, in turn with the release build of REVISION, the median of the pairs' ratios.
"""
import argparse
import datetime as dt
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import build_revision, machine  # noqa: E402


def cpu_ns(pid: int) -> int:
    """CPU time of the process (user + system, every thread, those ended too), in nanoseconds; the kernel counts
    it in clock ticks (10 ms), so it is read around many changes or a long idle span."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks * 1_000_000_000 // os.sysconf("SC_CLK_TCK")


def memory(pid: int) -> tuple[float, float]:
    """(resident, peak resident) in MB."""
    values = {}
    with open(f"/proc/{pid}/status") as handle:
        for line in handle:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0]) / 1024
    return values["VmRSS"], values["VmHWM"]


def wait_for(path: str, text: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with open(path, errors="replace") as handle:
            if text in handle.read():
                return
        time.sleep(0.05)
    sys.exit(f"timed out waiting for {text!r} in {path}")


def flight(uid: str, number: int, start: dt.datetime) -> str:
    stamp = lambda t: t.strftime("%Y%m%dT%H%M%SZ")  # noqa: E731
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calwatch//benchmark//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{stamp(start)}\r\n"
        f"DTEND:{stamp(start + dt.timedelta(hours=2))}\r\nSUMMARY:Flight LH {number} FRA → LHR\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n")


def release_and_vdir(prefix: str, days: int = 7, build: bool = True) -> tuple[str, str, str]:
    """Builds the release calwatch (unless `build` is false) and generates the benchmark vdir, its first day `days`
    from today, in a new folder: returns the binary, the folder and the vdir."""
    if build:
        subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix=prefix)
    first_day = (dt.date.today() + dt.timedelta(days=days)).isoformat()
    subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "generate.py"), work, first_day],
                   check=True, stdout=subprocess.DEVNULL)
    os.remove(os.path.join(work, "benchmark.ics"))
    return os.path.join(ROOT, ".build", "release", "calwatch"), work, os.path.join(work, "vdir")


def start(calwatch: str, work: str) -> tuple[subprocess.Popen, float]:
    """`watch` on WORK/config.yml, its log in WORK/log.txt: the daemon, and the seconds until its `watching` line."""
    started = time.perf_counter()
    with open(os.path.join(work, "log.txt"), "w") as log_handle:
        daemon = subprocess.Popen([calwatch, "watch", "--config", os.path.join(work, "config.yml")],
                                  stdout=subprocess.DEVNULL, stderr=log_handle)
    try:
        wait_for(os.path.join(work, "log.txt"), "watching", 120)
    except BaseException:
        daemon.terminate()
        daemon.wait(timeout=60)
        raise
    return daemon, time.perf_counter() - started


def ready(calwatch: str, work: str) -> tuple[float, str]:
    """One start of `watch` until its `watching` line, then stopped: the seconds, and the line."""
    daemon, seconds = start(calwatch, work)
    daemon.terminate()
    daemon.wait(timeout=60)
    line = next(line for line in open(os.path.join(work, "log.txt")) if "watching" in line)
    return seconds, line


def startups(runs: int, revision: str | None) -> None:
    calwatch, work, vdir = release_and_vdir("calwatch-bench-startup-", days=-7)
    other = build_revision(revision) if revision else None
    with open(os.path.join(work, "config.yml"), "w") as handle:
        handle.write(f"calendars: [{vdir}]\ntimezone: Europe/Berlin\nstate: {work}/journal.db\n"
                     "sinks:\n  - type: jsonl\n    path: /dev/null\n")
    ready(calwatch, work)  # the first start journals what was due; each start after continues from it
    mine, theirs = [], []
    for _ in range(runs):
        mine.append(ready(calwatch, work)[0])
        if other:
            theirs.append(ready(other, work)[0])
    occurrences = ready(calwatch, work)[1].split("calendar.occurrences=")[1].split()[0]
    print()
    print(f"{machine()}; {runs} starts each{' in turn with ' + revision if revision else ''}.")
    print()
    print(f"| `watch` ready on the 10,000-file vdir ({int(occurrences):,} occurrences) | median | best |"
          + (" ratio (median of pairs) |" if other else ""))
    print("|---|---:|---:|" + ("---:|" if other else ""))
    print(f"| this build | {statistics.median(mine):.3f} s | {min(mine):.3f} s |"
          + (f" {statistics.median([a / b for a, b in zip(mine, theirs)]):.3f} |" if other else ""))
    if other:
        print(f"| {revision} | {statistics.median(theirs):.3f} s | {min(theirs):.3f} s | |")
    subprocess.run(["rm", "-rf", work])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=30)
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of idle to measure")
    parser.add_argument("--startup", type=int, metavar="RUNS", help="time only the start, RUNS times")
    parser.add_argument("--against", metavar="REVISION", help="with --startup: in turn with this revision's build")
    args = parser.parse_args()
    if args.startup:
        return startups(args.startup, args.against)

    calwatch, work, vdir = release_and_vdir("calwatch-bench-watch-")
    collection = os.path.join(vdir, "benchmark")
    sink = os.path.join(work, "events.jsonl")
    with open(os.path.join(work, "config.yml"), "w") as handle:
        handle.write(f"calendars: [{vdir}]\ntimezone: Europe/Berlin\nstate: {work}/journal.db\n"
                     f"sinks:\n  - type: jsonl\n    path: {sink}\n")
    log = os.path.join(work, "log.txt")
    daemon, startup = start(calwatch, work)
    try:
        after_start = memory(daemon.pid)

        # Changes, one at a time.
        latencies = []
        cpu_before = cpu_ns(daemon.pid)
        departure = dt.datetime.now(dt.timezone.utc).replace(microsecond=0) + dt.timedelta(days=10)
        for change in range(args.changes):
            index = (change * 337) % 10_000
            item = os.path.join(collection, f"bench-{index:05d}.ics")
            size = os.path.getsize(sink) if os.path.exists(sink) else 0
            temporary = item + f"{change:08x}"
            with open(temporary, "w", newline="") as handle:
                handle.write(flight(f"bench-{index:05d}@calwatch.example", 1000 + change, departure))
            begin = time.perf_counter()
            os.rename(temporary, item)
            marker = f"LH{1000 + change}".encode()
            while True:
                with open(sink, "rb") as handle:
                    handle.seek(size)
                    if marker in handle.read():
                        break
                time.sleep(0.0005)
            latencies.append((time.perf_counter() - begin) * 1000)
            time.sleep(0.2)  # separate changes, as a sync writes them
        change_cpu_ms = (cpu_ns(daemon.pid) - cpu_before) / 1e6 / args.changes
        after_changes = memory(daemon.pid)

        # Idle.
        time.sleep(1)
        cpu_before = cpu_ns(daemon.pid)
        time.sleep(args.idle)
        idle_cpu_ms = (cpu_ns(daemon.pid) - cpu_before) / 1e6

        # One rescan of everything, as a new folder or a lost inotify queue causes (and the safety net does).
        cpu_before = cpu_ns(daemon.pid)
        rescans = open(log).read().count("rescan")
        os.mkdir(os.path.join(vdir, "new-collection"))
        deadline = time.monotonic() + 30
        while open(log).read().count("rescan") == rescans and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        rescan_cpu_ms = (cpu_ns(daemon.pid) - cpu_before) / 1e6
        final = memory(daemon.pid)
    finally:
        daemon.terminate()
        daemon.wait(timeout=60)

    latencies.sort()
    p95 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.95))]
    print()
    print(machine())
    print()
    print("| measure | value | target |")
    print("|---|---:|---:|")
    print(f"| start: read and plan 10,000 files | {startup:.2f} s | |")
    print(f"| change → its event in the JSONL file (median of {args.changes}) | {statistics.median(latencies):.0f} ms"
          f" | < 300 ms |")
    print(f"| change → event, p95 / max | {p95:.0f} / {latencies[-1]:.0f} ms | |")
    print(f"| CPU per change (one file parsed, planned, journaled, written) | {change_cpu_ms:.1f} ms | |")
    print(f"| CPU while idle over {args.idle:.0f} s | {idle_cpu_ms:.1f} ms | none beyond the rescan |")
    print(f"| CPU for one rescan of 10,000 files (none parsed) | {rescan_cpu_ms:.0f} ms | |")
    print(f"| resident memory after start / after changes / end | {after_start[0]:.0f} / {after_changes[0]:.0f} / "
          f"{final[0]:.0f} MB | < 100 MB |")
    print(f"| peak resident memory | {final[1]:.0f} MB | < 100 MB |")
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
