#!/bin/sh
# Fuzzes calwatch's readers of untrusted input with libFuzzer under AddressSanitizer (the package in Fuzz/).
#
#   scripts/fuzz.sh [TARGET...]     targets: FuzzCalendar FuzzCalDAV FuzzConfiguration FuzzStatusBar FuzzFleetRow (default: all)
#
# FUZZ_SECONDS (default 300) and FUZZ_RUNS (default unlimited) bound each target's run; FUZZ_JOBS (default 1) runs
# that many targets at once. Each target's corpus grows in .build/fuzz/corpus/TARGET across runs, seeded from
# samples/ and the test fixtures. An input that crashes, times out (10 s) or runs out of memory is kept in
# fuzz-failures/ and the script exits 1: once fixed, copy it into Tests/CalWatchTests/Fixtures/fuzz/calendar,
# caldav, configuration or fleet-row, where FuzzFixtureTests reads every file as its fuzz target does.
# Leaks are left to a final pass over each corpus (libFuzzer's leak check on every input is ten times slower).
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
seconds=${FUZZ_SECONDS:-300}
runs=${FUZZ_RUNS:--1}
jobs=${FUZZ_JOBS:-1}
targets=${*:-FuzzCalendar FuzzCalDAV FuzzConfiguration FuzzStatusBar FuzzFleetRow}
build="$root/.build/fuzz"

echo "== building the fuzz targets (release, -sanitize=fuzzer,address) =="
(cd Fuzz && swift build -c release --scratch-path "$build/swiftpm" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -use-ld=lld)
bin="$build/swiftpm/release"

seed() {
    target=$1
    corpus="$build/corpus/$target"
    mkdir -p "$corpus"
    case $target in
    FuzzCalendar)
        find samples Tests/CalWatchTests/Fixtures -type f -name '*.ics' -exec cp {} "$corpus/" \;
        find samples/radicale -type f ! -name '*.props' -exec cp {} "$corpus/" \; ;;
    FuzzCalDAV)
        find samples Tests/CalWatchTests/Fixtures -type f -name '*.xml' -exec cp {} "$corpus/" \; ;;
    FuzzConfiguration)
        cp config.yml "$corpus/"
        find Tests/CalWatchTests/Fixtures/fuzz -type f -name '*.yml' -exec cp {} "$corpus/" \; ;;
    FuzzFleetRow)
        cp Tests/CalWatchTests/Fixtures/fuzz/fleet-row/* "$corpus/" ;;
    FuzzStatusBar)
        # Summary, NUL, location, NUL, calendar name: the tricks that reached the bars before, and plain text.
        printf 'Standup\0https://zoom.us/j/1\0Work' >"$corpus/plain"
        printf '\330\200%%{A1:touch /tmp/x:}click%%{A}\0\330\200<span>\314\201\0%%{F#f00}' >"$corpus/prepend"
        printf 'a&b <b>x</b>\n%%%%{A}\0\0\033]52;c;x\007' >"$corpus/markup" ;;
    esac
}

mkdir -p fuzz-failures "$build/logs"
status=0
run() {
    target=$1
    seed "$target"
    log="$build/logs/$target.log"
    echo "== $target: ${seconds}s =="
    if ! "$bin/$target" "$build/corpus/$target" -max_total_time="$seconds" -runs="$runs" -timeout=10 \
        -rss_limit_mb=4096 -max_len=8192 -detect_leaks=0 -print_final_stats=1 \
        -artifact_prefix="$root/fuzz-failures/$target-" >"$log" 2>&1; then
        echo "$target FAILED: see $log and fuzz-failures/"
        return 1
    fi
    # A second pass over the whole corpus with the leak checker on.
    if ! ASAN_OPTIONS=detect_leaks=1 "$bin/$target" -runs=0 -detect_leaks=1 "$build/corpus/$target" \
        >"$build/logs/$target-leaks.log" 2>&1; then
        echo "$target LEAKS: see $build/logs/$target-leaks.log"
        return 1
    fi
    grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$log" | tr '\n' ' ' | sed "s/^/$target /"
    echo "corpus: $(ls "$build/corpus/$target" | wc -l) inputs"
}

pids=""
for target in $targets; do
    if [ "$jobs" -gt 1 ]; then
        run "$target" &
        pids="$pids $!"
        while [ "$(jobs -p | wc -l)" -ge "$jobs" ]; do sleep 5; done
    else
        run "$target" || status=1
    fi
done
for pid in $pids; do wait "$pid" || status=1; done
exit $status
