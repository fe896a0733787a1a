#!/usr/bin/env python3
"""Soak `calwatch watch`: a 1,000-file vdir changing every second, hostile files included, a hook on every reminder.

    make soak   (or: python3 benchmarks/soak.py [--minutes 30] [--files 1000] [--stops 10])

The release build watches a vdir of four collections:
- 900 stable items, one meeting each, starting between 6 minutes after the start and 5 minutes after the end, so
  that their reminders (30, 15 and 5 minutes before) and live activities come due all through the run;
- 100 items that change every second the way vdirsyncer writes (a temporary name, then a rename), in place, or
  are deleted and written again, their meetings and flights far enough ahead that nothing of theirs comes due;
- hostile files dropped in and removed again: a named pipe called .ics, a directory link back up the tree, a
  2 MiB property, invalid UTF-8, an RRULE that never matches, an absurd Outlook zone, binary junk, five copies of
  one UID, a file larger than 256 MiB (sparse).
A hook (a real child process per reminder) appends each reminder's id to a log.

Each minute the daemon's resident memory, open descriptors, threads and CPU time are sampled. At the end it gets
SIGTERM and the time to exit is measured. Then:
- every event of the stable items due inside the run (a minute's margin at each end) must be in the JSON Lines
  sink exactly once, and no other: they are compared, by id, with `calwatch replay` of the stable items alone
  over the same span;
- no id is in the sink twice, and every reminder in the sink ran the hook once;
- then the daemon is started again on the same journal and stopped with SIGTERM at --stops random moments while
  the changes go on: each stop must take under 2 s, and still no id may be written twice.
Prints Markdown for BENCHMARKS.md and exits 1 if any check fails.
"""
import argparse
import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import machine  # noqa: E402
from watch import cpu_ns, memory, wait_for  # noqa: E402

COLLECTIONS = ["work", "home", "team", "travel"]
STABLE_SHARE = 0.9


def stamp(t: dt.datetime) -> str:
    return t.strftime("%Y%m%dT%H%M%SZ")


def meeting(uid: str, start: dt.datetime, summary: str) -> str:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//calwatch//soak//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20260101T000000Z\r\nDTSTART:{stamp(start)}\r\n"
        f"DTEND:{stamp(start + dt.timedelta(minutes=25))}\r\nSUMMARY:{summary}\r\n"
        "END:VEVENT\r\nEND:VCALENDAR\r\n")


def hostile_files(now: dt.datetime) -> dict:
    """Name → bytes (or a special kind) of the hostile files dropped in and removed again."""
    later = now + dt.timedelta(days=3)
    long_line = meeting("hostile-long", later, "Long").replace(
        "SUMMARY:Long", "SUMMARY:Long\r\nDESCRIPTION:" + "x" * (2 << 20))
    never = meeting("hostile-never", later, "Never").replace(
        "SUMMARY:Never", "SUMMARY:Never\r\nRRULE:FREQ=MINUTELY;BYMONTH=2;BYMONTHDAY=30")
    zone = meeting("hostile-zone", later, "Zone").replace(
        f"DTSTART:{stamp(later)}", "DTSTART;TZID=\"(UTC+01:35791395) Amsterdam\":" + stamp(later)[:-1])
    copies = meeting("hostile-copy", later, "Copy")
    return {
        "hostile-long.ics": long_line.encode(),
        "hostile-never.ics": never.encode(),
        "hostile-zone.ics": zone.encode(),
        "hostile-utf8.ics": meeting("hostile-utf8", later, "Bad \xff").encode("latin-1"),
        "hostile-junk.ics": bytes(random.Random(7).randrange(256) for _ in range(4096)),
        **{f"hostile-copy{index}.ics": copies.encode() for index in range(5)},
        "hostile-pipe.ics": "fifo",
        "hostile-loop": "loop",
        "hostile-huge.ics": "sparse",
    }


def drop(path: str, content) -> None:
    if content == "fifo":
        os.mkfifo(path)
    elif content == "loop":
        os.symlink("..", path)
    elif content == "sparse":
        with open(path, "wb") as handle:
            handle.truncate(257 << 20)
    else:
        with open(path, "wb") as handle:
            handle.write(content)


def remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class Churn:
    """One change a second among the changing items, with hostile files in between."""

    def __init__(self, vdir: str, changing: list, now: dt.datetime):
        self.vdir = vdir
        self.changing = changing
        self.random = random.Random(42)
        self.hostile = hostile_files(now)
        self.dropped: list = []
        self.far = now + dt.timedelta(days=2)
        self.count = 0

    def step(self) -> None:
        self.count += 1
        choice = self.random.random()
        collection, uid = self.random.choice(self.changing)
        path = os.path.join(self.vdir, collection, uid + ".ics")
        start = self.far + dt.timedelta(minutes=self.random.randrange(0, 60 * 24 * 10))
        summary = self.random.choice(["Planning", "Flight LH 400 FRA → JFK", "Review", "1:1"])
        if choice < 0.55:  # vdirsyncer: a temporary name, then a rename
            temporary = path + f"{self.count:08x}"
            with open(temporary, "w", newline="") as handle:
                handle.write(meeting(uid, start, summary))
            os.rename(temporary, path)
        elif choice < 0.7:  # an editor writing in place
            with open(path, "w", newline="") as handle:
                handle.write(meeting(uid, start, summary))
        elif choice < 0.8:
            remove(path)
        else:  # a hostile file in, or the oldest one out
            if self.dropped and (len(self.dropped) > 3 or self.random.random() < 0.5):
                remove(self.dropped.pop(0))
            else:
                name = self.random.choice(sorted(self.hostile))
                hostile = os.path.join(self.vdir, self.random.choice(COLLECTIONS), name)
                if not os.path.lexists(hostile):
                    drop(hostile, self.hostile[name])
                    self.dropped.append(hostile)

    def clear(self) -> None:
        for path in self.dropped:
            remove(path)
        self.dropped = []


def sample(pid: int) -> dict:
    rss, peak = memory(pid)
    with open(f"/proc/{pid}/status") as handle:
        threads = next(int(line.split()[1]) for line in handle if line.startswith("Threads:"))
    return {"rss": rss, "peak": peak, "fds": len(os.listdir(f"/proc/{pid}/fd")), "threads": threads,
            "cpu_s": cpu_ns(pid) / 1e9}


def stop(daemon: subprocess.Popen) -> float:
    began = time.perf_counter()
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(timeout=30)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()
        return float("inf")
    return time.perf_counter() - began


def sink_lines(path: str) -> list:
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=30)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--stops", type=int, default=10)
    parser.add_argument("--keep", action="store_true", help="keep the working folder")
    args = parser.parse_args()

    subprocess.run(["swift", "build", "-c", "release"], cwd=ROOT, check=True)
    calwatch = os.path.join(ROOT, ".build", "release", "calwatch")
    work = tempfile.mkdtemp(prefix="calwatch-soak-")
    vdir = os.path.join(work, "vdir")
    for collection in COLLECTIONS:
        os.makedirs(os.path.join(vdir, collection))
    stable_dir = os.path.join(work, "stable")
    now = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)
    span = dt.timedelta(minutes=args.minutes)
    stable_count = int(args.files * STABLE_SHARE)
    changing = []
    for index in range(args.files):
        collection = COLLECTIONS[index % len(COLLECTIONS)]
        uid = f"soak-{index:04d}"
        if index < stable_count:
            start = now + dt.timedelta(minutes=6) + (span - dt.timedelta(minutes=1)) * index / stable_count
            text = meeting(uid, start.replace(microsecond=0), f"Meeting {index}")
            for folder in (vdir, stable_dir):
                os.makedirs(os.path.join(folder, collection), exist_ok=True)
                with open(os.path.join(folder, collection, uid + ".ics"), "w", newline="") as handle:
                    handle.write(text)
        else:
            changing.append((collection, uid))
            with open(os.path.join(vdir, collection, uid + ".ics"), "w", newline="") as handle:
                handle.write(meeting(uid, now + dt.timedelta(days=3), "Planning"))

    sink = os.path.join(work, "events.jsonl")
    hook_log = os.path.join(work, "hooks.log")
    hook = os.path.join(work, "hook.sh")
    with open(hook, "w") as handle:
        handle.write('#!/bin/sh\nprintf "%s\\n" "$CE_ID" >> "$1"\n')
    os.chmod(hook, 0o755)
    config = os.path.join(work, "config.yml")
    with open(config, "w") as handle:
        handle.write(
            f"calendars: [{vdir}]\ntimezone: UTC\nstate: {work}/journal.db\nsinks:\n"
            f"  - {{ type: jsonl, path: {sink} }}\n"
            f"  - {{ type: hook, run: [{hook}, {hook_log}], on: [reminderDue], timeout: 10s }}\n")

    churn = Churn(vdir, changing, now)
    log = os.path.join(work, "daemon.log")
    failures = []
    samples = []
    with open(log, "w") as log_handle:
        daemon = subprocess.Popen([calwatch, "watch", "--config", config], stdout=subprocess.DEVNULL,
                                  stderr=log_handle)
    try:
        wait_for(log, "watching", 120)
        began = dt.datetime.now(dt.timezone.utc)
        samples.append((0, sample(daemon.pid)))
        deadline = time.monotonic() + args.minutes * 60
        next_sample = time.monotonic() + 60
        while time.monotonic() < deadline:
            churn.step()
            if daemon.poll() is not None:
                failures.append(f"the daemon exited with {daemon.returncode} during the soak")
                break
            if time.monotonic() >= next_sample:
                samples.append((len(samples), sample(daemon.pid)))
                print(f"minute {len(samples) - 1}: {samples[-1][1]}", file=sys.stderr, flush=True)
                next_sample += 60
            time.sleep(1)
        ended = dt.datetime.now(dt.timezone.utc)
        final_stop = stop(daemon)
    finally:
        if daemon.poll() is None:
            daemon.kill()
    churn.clear()
    if final_stop > 2:
        failures.append(f"SIGTERM took {final_stop:.2f} s")

    # The stable items' events inside the run, compared with a replay of those items alone.
    lines = sink_lines(sink)
    ids = [line["id"] for line in lines]
    repeated = len(ids) - len(set(ids))
    if repeated:
        failures.append(f"{repeated} ids are in the sink twice")
    low, high = began + dt.timedelta(minutes=1), ended - dt.timedelta(minutes=1)

    def inside(line: dict) -> bool:
        time_ = dt.datetime.fromisoformat(line["time"].replace("Z", "+00:00"))
        return low <= time_ < high and line["subject"].split("/")[0].startswith("soak-") and \
            int(line["subject"].split("/")[0][5:9]) < stable_count

    watched = {line["id"] for line in lines if inside(line)}
    replayed_path = os.path.join(work, "replay.jsonl")
    replay_config = os.path.join(work, "replay.yml")
    with open(replay_config, "w") as handle:
        handle.write("timezone: UTC\nsinks: [{ type: jsonl, path: \"-\" }]\n")
    with open(replayed_path, "w") as handle:
        subprocess.run([calwatch, "replay", "--config", replay_config, stable_dir, "--tz", "UTC",
                        "--from", began.strftime("%Y-%m-%dT%H:%M:%SZ"),
                        "--to", ended.strftime("%Y-%m-%dT%H:%M:%SZ")], stdout=handle, stderr=subprocess.DEVNULL,
                       check=True)
    replayed = {line["id"] for line in sink_lines(replayed_path) if inside(line)}
    missing, extra = replayed - watched, watched - replayed
    if missing or extra:
        failures.append(f"against the replay: {len(missing)} events missing, {len(extra)} extra")
    reminders = [line["id"] for line in lines if line["type"] == "calwatch.reminderDue"]
    with open(hook_log) as handle:
        hooked = handle.read().split()
    if sorted(hooked) != sorted(reminders):
        failures.append(f"hook ran {len(hooked)} times for {len(reminders)} reminders "
                        f"({len(set(reminders) - set(hooked))} never, {len(hooked) - len(set(hooked))} twice)")

    # SIGTERM at random moments while the changes go on.
    stops = []
    randomness = random.Random(3)
    for _ in range(args.stops):
        with open(log, "a") as log_handle:
            daemon = subprocess.Popen([calwatch, "watch", "--config", config], stdout=subprocess.DEVNULL,
                                      stderr=log_handle)
        until = time.monotonic() + randomness.uniform(0.2, 8)
        while time.monotonic() < until:
            churn.step()
            time.sleep(0.1)
        stops.append(stop(daemon))
    churn.clear()
    if stops and max(stops) > 2:
        failures.append(f"a SIGTERM at a random moment took {max(stops):.2f} s")
    ids = [line["id"] for line in sink_lines(sink)]
    if len(ids) != len(set(ids)):
        failures.append(f"after the stops, {len(ids) - len(set(ids))} ids are in the sink twice")

    print()
    print(machine())
    print()
    print(f"{args.minutes:g} minutes, {args.files} files ({stable_count} stable), {churn.count} changes "
          f"({len(churn.hostile)} kinds of hostile file among them), {len(lines)} events in the JSON Lines sink, "
          f"{len(reminders)} reminders, {len(hooked)} hook runs.")
    print()
    print("| minute | resident MB | peak MB | descriptors | threads | CPU s |")
    print("|---:|---:|---:|---:|---:|---:|")
    for minute, values in samples:
        print(f"| {minute} | {values['rss']:.1f} | {values['peak']:.1f} | {values['fds']} | {values['threads']} | "
              f"{values['cpu_s']:.1f} |")
    print()
    print(f"- stable items' events inside the run: {len(watched)} in the sink, {len(replayed)} in the replay, "
          f"{len(replayed - watched)} missing, {len(watched - replayed)} extra")
    print(f"- ids in the sink twice: {repeated}; reminders without their hook run: "
          f"{len(set(reminders) - set(hooked))}")
    print(f"- SIGTERM at the end: {final_stop:.2f} s; at {len(stops)} random moments: max "
          f"{max(stops) if stops else 0:.2f} s, median {sorted(stops)[len(stops) // 2] if stops else 0:.2f} s")
    print(f"- result: {'PASS' if not failures else 'FAIL: ' + '; '.join(failures)}")
    if not args.keep:
        subprocess.run(["rm", "-rf", work])
    else:
        print(f"- kept: {work}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
