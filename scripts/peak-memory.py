#!/usr/bin/env python3
"""Runs a command and prints, as one JSON line, its exit status, its peak resident memory in KiB (the kernel's
ru_maxrss of the child) and its error output's last 4 KB. For tests that bound what a command may hold.

    python3 scripts/peak-memory.py COMMAND [ARG ...]
"""
import json
import resource
import subprocess
import sys

run = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"status": run.returncode, "peakKiB": peak, "errors": run.stderr[-4096:].decode("utf-8", "replace")}))
