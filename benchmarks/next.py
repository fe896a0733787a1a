#!/usr/bin/env python3
"""`calwatch next` for status bars: one run's time, and `--follow` left alone and changed.

    make bench-next   (or: python3 benchmarks/next.py [--idle SECONDS] [--runs N])

Builds calwatch in release mode, generates the benchmark vdir (benchmarks/generate.py: 5,000 weekly series and
5,000 single events) with its first day a week ago, so that about two thousand occurrences lie around now, then
measures:
- one `calwatch next` (what a bar that runs a command each minute pays) on the sample calendars and on that vdir,
  and on both again while `calwatch watch` follows them (answered by the daemon through the `calwatch` front),
  compared with `--no-daemon`;
- `calwatch next --follow` through a pipe, left alone for --idle seconds (default 130): the lines it printed (one
  at each whole minute is right), its CPU time and its resident memory;
- the time from an item renamed into a watched folder to the changed line (median of 10 items), and the same
  while the 10,000-file vdir is followed too.

Prints a Markdown table for BENCHMARKS.md.
"""
import argparse
import datetime as dt
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALWATCH = os.path.join(ROOT, ".build", "release", "calwatch")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import machine  # noqa: E402


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def one_shot(paths, runs, env=None, extra=(), tz=("--tz", "UTC")):
    """Median seconds of `calwatch next` over `runs`, and what the last run printed (JSON, to compare answers)."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        output = subprocess.run([CALWATCH, "next", *paths, *tz, "--format", "json", *extra], check=True,
                                stdout=subprocess.PIPE, env=env).stdout
        times.append(time.perf_counter() - started)
    return statistics.median(times), output


def with_daemon(calendars, runs):
    """`calwatch next --config FILE` while `calwatch watch --config FILE` follows the same calendars (journal and
    runtime folder in a home of their own): the median answered by the daemon (the `calwatch` front asks it over the
    link in $XDG_RUNTIME_DIR), the median of `--no-daemon` beside it, and whether the answers are the same."""
    home = tempfile.mkdtemp(prefix="calwatch-next-home-")
    config = os.path.join(home, "config.yml")
    with open(config, "w") as file:
        file.write(f"calendars: [{calendars}]\ntimezone: UTC\nstate: {home}/journal.db\n"
                   "sinks:\n  - type: jsonl\n    path: /dev/null\n")
    runtime = os.path.join(home, "run")
    os.mkdir(runtime, 0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=runtime)
    daemon = subprocess.Popen([CALWATCH, "watch", "--config", config], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env=env)
    try:
        deadline = time.time() + 120
        while b"watching" not in (line := daemon.stderr.readline()):
            if not line or time.time() > deadline:
                sys.exit("calwatch watch did not start")
        if not os.listdir(os.path.join(runtime, "calwatch")):
            sys.exit(f"no link to the daemon's socket in {runtime}/calwatch")
        through, answer = one_shot([], runs, env=env, extra=["--config", config], tz=())
        alone, own = one_shot([], max(3, runs // 3), env=env, extra=["--config", config, "--no-daemon"], tz=())
        # Both say "now" in their answer: compared without it.
        same = strip_now(answer) == strip_now(own)
        return through, alone, same
    finally:
        daemon.terminate()
        daemon.wait()
        shutil.rmtree(home)


def strip_now(answer: bytes) -> bytes:
    import json
    status = json.loads(answer)
    status.pop("now", None)
    for item in [status.get("countdown") or {}] + [i.get("countdown") or {} for i in status.get("today", [])]:
        item.pop("seconds", None)
        item.pop("progress", None)
        item.pop("text", None)
    status.pop("text", None)
    return json.dumps(status, sort_keys=True).encode()


def read_line(process, timeout):
    ready, _, _ = select.select([process.stdout], [], [], timeout)
    return process.stdout.readline().decode() if ready else None


def item(uid: str, start: float) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(start))
    end = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(start + 1800))
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calwatch bench//EN\r\nBEGIN:VEVENT\r\n"
            f"UID:{uid}\r\nDTSTAMP:20270101T000000Z\r\nDTSTART:{stamp}\r\nDTEND:{end}\r\n"
            f"SUMMARY:Bench {uid}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


def change_latency(folder: str, also=(), items: int = 10):
    """Median and worst seconds from an item renamed into `folder` to the line naming it; `also` are more
    calendars followed at the same time."""
    # Only the folder's items are shown (the vdir's are read all the same): one of its meetings running now would
    # otherwise be the line whatever is written.
    process = subprocess.Popen([CALWATCH, "next", "--follow", folder, *also, "--tz", "UTC", "--within", "1h",
                                "--calendars", os.path.basename(folder)], stdout=subprocess.PIPE)
    try:
        if read_line(process, 120) is None:
            sys.exit("no first line from calwatch next --follow")
        latencies = []
        for number in range(items):
            uid = f"bench-{os.getpid()}-{number}"
            # Each new item comes before the last, so each changes the line.
            start = time.time() + 1800 - number * 60
            temporary = os.path.join(folder, f".{uid}.tmp")
            with open(temporary, "w") as file:
                file.write(item(uid, start))
            written = time.perf_counter()
            os.rename(temporary, os.path.join(folder, f"{uid}.ics"))
            while True:
                line = read_line(process, 30)
                if line is None:
                    sys.exit(f"no line after writing {uid}")
                if f"Bench {uid}" in line:
                    latencies.append(time.perf_counter() - written)
                    break
        return statistics.median(latencies), max(latencies)
    finally:
        process.terminate()
        process.wait()


def idle(seconds: float):
    folder = tempfile.mkdtemp(prefix="calwatch-next-bench-")
    shutil.copytree(os.path.join(ROOT, "samples", "calendars"), os.path.join(folder, "calendars"))
    process = subprocess.Popen([CALWATCH, "next", "--follow", os.path.join(folder, "calendars"), "--tz", "UTC"],
                               stdout=subprocess.PIPE)
    try:
        started = time.time()
        lines = []
        first = read_line(process, 120)
        if first is None:
            sys.exit("no first line from calwatch next --follow")
        lines.append((time.time(), first))
        cpu_start = cpu_seconds(process.pid)
        while time.time() - started < seconds:
            line = read_line(process, max(0.1, seconds - (time.time() - started)))
            if line is not None:
                lines.append((time.time(), line))
        cpu = cpu_seconds(process.pid) - cpu_start
        rss = rss_mb(process.pid)
        ended = time.time()
    finally:
        process.terminate()
        process.wait()
        shutil.rmtree(folder)
    minutes = int(ended // 60) - int(started // 60)
    seconds_off = [min(at % 60, 60 - at % 60) for at, _ in lines[1:]]
    return len(lines), 1 + minutes, cpu, rss, max(seconds_off, default=0), ended - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--idle", type=float, default=130, help="seconds to leave --follow alone (default 130)")
    parser.add_argument("--runs", type=int, default=10, help="runs of the one-shot command (default 10)")
    args = parser.parse_args()
    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)
    work = tempfile.mkdtemp(prefix="calwatch-next-bench-")
    first_day = (dt.date.today() - dt.timedelta(days=7)).isoformat()
    subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "generate.py"), work, first_day], check=True,
                   stdout=subprocess.DEVNULL)
    samples = os.path.join(ROOT, "samples", "calendars")
    vdir = os.path.join(work, "vdir")
    once_samples, _ = one_shot([samples], args.runs)
    once_vdir, _ = one_shot([vdir], max(3, args.runs // 3))
    daemon_samples, alone_samples, same_samples = with_daemon(samples, args.runs)
    daemon_vdir, alone_vdir, same = with_daemon(vdir, args.runs)
    folder = tempfile.mkdtemp(prefix="calwatch-next-bench-")
    try:
        latency, worst = change_latency(folder)
    finally:
        shutil.rmtree(folder)
    folder = tempfile.mkdtemp(prefix="calwatch-next-bench-")
    try:
        big_latency, big_worst = change_latency(folder, also=[vdir])
    finally:
        shutil.rmtree(folder)
    # What `next` expands: from two days back to its horizon (a day) ahead.
    window = [(dt.date.today() - dt.timedelta(days=2)).isoformat(), (dt.date.today() + dt.timedelta(days=2)).isoformat()]
    occurrences = subprocess.run([CALWATCH, "scan", vdir, "--from", window[0], "--to", window[1], "--tz", "UTC"],
                                 check=True, capture_output=True).stdout.count(b"\n")
    shutil.rmtree(work)
    lines, expected, cpu, rss, off, span = idle(args.idle)

    print()
    print(f"{machine()}; release build.")
    print()
    print("| case | figure |")
    print("|---|---:|")
    print(f"| `next` once, samples/calendars (median of {args.runs}) | {once_samples * 1000:.0f} ms |")
    print(f"| `next` once, 10,000-file vdir ({occurrences} occurrences in the 4 days around now) | {once_vdir * 1000:.0f} ms |")
    print(f"| `next` once, samples/calendars while `calwatch watch` follows them (median of {args.runs}) | "
          f"{daemon_samples * 1000:.1f} ms; `--no-daemon` beside it {alone_samples * 1000:.0f} ms; "
          f"{'the same answer' if same_samples else 'ANSWERS DIFFER'} |")
    print(f"| `next` once, the same vdir while `calwatch watch` follows it (median of {args.runs}) | "
          f"{daemon_vdir * 1000:.1f} ms; `--no-daemon` beside it {alone_vdir * 1000:.0f} ms; "
          f"{'the same answer' if same else 'ANSWERS DIFFER'} |")
    print(f"| `--follow`: item renamed into a folder → changed line (median / worst of 10) | "
          f"{latency * 1000:.1f} ms / {worst * 1000:.1f} ms |")
    print(f"| the same while following the 10,000-file vdir too | {big_latency * 1000:.1f} ms / {big_worst * 1000:.1f} ms |")
    print(f"| `--follow` left alone {span:.0f} s: lines (one per whole minute + the first) | {lines} ({expected} "
          f"expected), each within {off:.2f} s of the minute |")
    print(f"| `--follow` left alone: CPU | {cpu:.2f} s |")
    print(f"| `--follow` left alone: resident memory | {rss:.0f} MB |")


if __name__ == "__main__":
    main()
