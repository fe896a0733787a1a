#!/usr/bin/env python3
"""Several watchers replaying into one PostgreSQL database at once: events per second in total, and where the time
goes (calwatch's CPU against the server's).

    make bench-postgres   (or: python3 benchmarks/postgres.py [--watchers 8] [--days 2])

Starts a PostgreSQL server of Debian's package in bench-data/postgres (initdb, a Unix socket only, the package's
default settings: fsync and synchronous commit on), then runs, each case once:
  - the watchers' replays into JSON Lines on /dev/null, the ceiling the replays themselves set;
  - one replay into PostgreSQL alone;
  - all the watchers' replays into PostgreSQL at the same time.
Each watcher replays its own days of the 10,000-event benchmark calendar under its own `instance:` name (watcher k
starts k days later), so no two store the same event. The server is stopped and its folder removed at the end.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import DATA, ROOT, machine  # noqa: E402

AS_POSTGRES = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
FIRST_DAY = 3  # 2024-06-03


def binaries() -> str:
    root = "/usr/lib/postgresql"
    return os.path.join(root, str(max(int(v) for v in os.listdir(root) if v.isdigit())), "bin")


def server_cpu(folder: str) -> float:
    """Seconds of CPU the server used so far: the postmaster's own and that of its ended children (backends)."""
    with open(os.path.join(folder, "data", "postmaster.pid")) as pid_file:
        pid = pid_file.readline().strip()
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    # utime, stime, cutime, cstime are fields 14-17 of stat, 12-15 after the command name.
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def start_server(folder: str, settings: str = "") -> None:
    """A new server in `folder` (removed first), listening on a Unix socket there, with a `calwatch` database."""
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    if AS_POSTGRES:
        shutil.chown(folder, "postgres")
    data = os.path.join(folder, "data")
    subprocess.run(AS_POSTGRES + [os.path.join(binaries(), "initdb"), "-D", data, "-A", "trust", "-U", "postgres",
                                  "-E", "UTF8", "--locale=C.UTF-8"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(AS_POSTGRES + [os.path.join(binaries(), "pg_ctl"), "-D", data, "-o",
                                  f"-k {folder} -c listen_addresses= {settings}", "-l",
                                  os.path.join(folder, "log"), "-w", "start"], check=True, stdout=subprocess.DEVNULL,
                   close_fds=True)
    subprocess.run(["psql", "-X", "-q", "-h", folder, "-U", "postgres", "-d", "postgres", "-c",
                    "CREATE DATABASE calwatch"], check=True)


def stop_server(folder: str) -> None:
    """Stops the server of `start_server` and removes its folder."""
    subprocess.run(AS_POSTGRES + [os.path.join(binaries(), "pg_ctl"), "-D", os.path.join(folder, "data"), "-m",
                                  "fast", "-w", "stop"], stdout=subprocess.DEVNULL)
    shutil.rmtree(folder, ignore_errors=True)


def psql(folder: str, sql: str) -> str:
    return subprocess.run(["psql", "-X", "-q", "-A", "-t", "-h", folder, "-U", "postgres", "-d", "calwatch", "-c", sql],
                          capture_output=True, text=True, check=True).stdout.strip()


def replays(calwatch: str, calendar: str, folder: str, watchers: int, days: int, sink: str) -> dict:
    """Runs the watchers' replays at once; returns events, wall seconds, calwatch's CPU seconds."""
    processes = []
    for index in range(watchers):
        work = os.path.join(folder, f"watcher-{index}")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        with open(os.path.join(work, "config.yml"), "w") as config:
            config.write(f"instance: watcher-{index}\nsinks:\n")
            if sink == "postgres":
                config.write(f"  - type: postgres\n    url: \"postgres:///calwatch?host={folder}&user=postgres\"\n")
            else:
                config.write("  - type: jsonl\n    path: /dev/null\n")
        start = f"2024-06-{FIRST_DAY + index:02d}"
        end = f"2024-06-{FIRST_DAY + index + days:02d}"
        processes.append(subprocess.Popen(
            [calwatch, "replay", calendar, "--from", start, "--to", end, "--tz", "Europe/Berlin",
             "--config", os.path.join(work, "config.yml"), "--state", os.path.join(work, "journal.db")],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT))
    started = time.perf_counter()
    events, cpu = 0, 0.0
    for process in processes:
        _, status, usage = os.wait4(process.pid, 0)
        summary = process.stderr.read().decode()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"replay failed: {summary}")
        events += int(summary.split(": ", 1)[1].split(" events", 1)[0])
        cpu += usage.ru_utime + usage.ru_stime
    return {"events": events, "seconds": time.perf_counter() - started, "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--watchers", type=int, default=8)
    parser.add_argument("--days", type=int, default=2, help="days each watcher replays (57,000 events a day)")
    args = parser.parse_args()

    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)
    if not os.path.exists(os.path.join(DATA, "benchmark.ics")):
        subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "generate.py"), DATA], check=True)
    calwatch = os.path.join(ROOT, ".build", "release", "calwatch")
    calendar = os.path.join(DATA, "benchmark.ics")

    folder = os.path.join(DATA, "postgres")
    start_server(folder, "-c max_wal_size=4GB")
    try:
        version = psql(folder, "SHOW server_version")
        ceiling = replays(calwatch, calendar, folder, args.watchers, args.days, "jsonl")
        cpu_before = server_cpu(folder)
        one = replays(calwatch, calendar, folder, 1, args.days, "postgres")
        cpu_one = server_cpu(folder) - cpu_before
        psql(folder, "TRUNCATE event_log, occurrences, watchers")
        cpu_before = server_cpu(folder)
        many = replays(calwatch, calendar, folder, args.watchers, args.days, "postgres")
        cpu_many = server_cpu(folder) - cpu_before
        stored = int(psql(folder, "SELECT count(*) FROM event_log"))
        distinct = int(psql(folder, "SELECT count(*) FROM (SELECT DISTINCT watcher, id FROM event_log) AS e"))
        size = int(psql(folder, "SELECT pg_database_size('calwatch')"))
        occurrences = int(psql(folder, "SELECT count(*) FROM occurrences"))
        # What a consumer's query of each view costs on this database (psql's own start-up included, ~10 ms).
        views = []
        for view in ("upcoming_reminders", "flights", "current_live_activities"):
            started = time.perf_counter()
            rows = psql(folder, f"SELECT count(*) FROM {view}")
            views.append(f"{view} {(time.perf_counter() - started) * 1000:.0f} ms ({rows} rows)")
        started = time.perf_counter()
        psql(folder, "SELECT count(*) FROM events WHERE watcher = 'watcher-0' AND time >= '2024-06-03T12:00:00Z' "
                     "AND time < '2024-06-03T13:00:00Z'")
        views.append(f"one watcher's hour of events {(time.perf_counter() - started) * 1000:.0f} ms")

        print()
        print(f"{machine()}; PostgreSQL {version} (Debian's package, default settings, fsync on), one run each; "
              f"each watcher replays {args.days} days of the benchmark calendar.")
        print()
        print("| case | events | time | events/s | calwatch CPU | server CPU |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, result, server in (
                (f"{args.watchers} replays into JSON Lines (/dev/null): the ceiling", ceiling, None),
                ("1 replay into PostgreSQL", one, cpu_one),
                (f"{args.watchers} replays into PostgreSQL at once", many, cpu_many)):
            print(f"| {label} | {result['events']:,} | {result['seconds']:.1f} s | "
                  f"{result['events'] / result['seconds']:,.0f} | {result['cpu']:.1f} s | "
                  + (f"{server:.1f} s |" if server is not None else "- |"))
        print()
        print(f"- stored: {stored:,} events ({distinct:,} distinct watcher and id; the replays emitted "
              f"{many['events']:,}), {occurrences:,} occurrence rows; database {size / 1e6:.0f} MB, "
              f"{size / max(stored, 1):.0f} bytes per event with indexes")
        print("- a query of each view over all of it: " + "; ".join(views))
        print(f"- CPU per event: calwatch {many['cpu'] / many['events'] * 1e6:.1f} µs, "
              f"server {cpu_many / many['events'] * 1e6:.1f} µs")
    finally:
        stop_server(folder)


if __name__ == "__main__":
    main()
