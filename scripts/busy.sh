#!/usr/bin/env bash
# Runs a command while one CPU hog per core keeps the machine busy, the way a user's laptop or a shared CI runner
# is: `scripts/busy.sh make test`. Prints the command's wall time; the hogs stop with the command, however it ends.
set -u
cores=$(nproc)
hogs=()
for _ in $(seq "$cores"); do
    yes > /dev/null &
    hogs+=($!)
done
trap 'kill "${hogs[@]}" 2>/dev/null' EXIT
echo "busy.sh: $cores CPU hogs running (pids ${hogs[*]}); running: $*"
start=$(date +%s)
"$@"
status=$?
echo "busy.sh: '$*' exited $status after $(( $(date +%s) - start )) s with $cores CPU hogs"
exit $status
