#!/bin/sh
# Checks calwatch's Debian package the way a user meets it, on a machine with no Swift: what it holds, what it
# depends on, and that the unpacked binary runs with the toolchain out of PATH and LD_LIBRARY_PATH. Then that
# `make install PREFIX=…` and `make uninstall` put the same files in place and take all of them away.
#
#   scripts/check-package.sh calwatch_<version>_<arch>.deb [reference-binary]
#
# The reference binary (the debug build the test suite ran) must print the same scan of the samples.
set -eu

deb=${1:?usage: scripts/check-package.sh PACKAGE.deb [REFERENCE-BINARY]}
reference=${2:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
failures=0
reported=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
# Ends a group of checks: "ok" when none of them failed since the last group.
pass() {
    if [ "$failures" = "$reported" ]; then echo "ok: $*"; else echo "not ok: $*"; fi
    reported=$failures
}

field() { dpkg-deb -f "$deb" "$1"; }
version=$(field Version)

# What the package holds: every file a user or the system looks for, in Debian's places.
dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./|/|' >"$work/contents"
for path in /usr/bin/calwatch /usr/libexec/calwatch/calwatch-commands /usr/lib/systemd/user/calwatch.service \
    /usr/share/bash-completion/completions/calwatch /usr/share/zsh/vendor-completions/_calwatch \
    /usr/share/fish/vendor_completions.d/calwatch.fish \
    /usr/share/man/man1/calwatch.1.gz /usr/share/man/man1/calwatch-scan.1.gz \
    /usr/share/man/man1/calwatch-explain.1.gz /usr/share/man/man1/calwatch-replay.1.gz \
    /usr/share/man/man1/calwatch-watch.1.gz /usr/share/man/man1/calwatch-check.1.gz \
    /usr/share/man/man1/calwatch-next.1.gz /usr/share/man/man1/calwatch-why.1.gz \
    /usr/share/doc/calwatch/examples/samples/statusbar/waybar.jsonc \
    /usr/share/doc/calwatch/examples/samples/statusbar/join-next.sh \
    /usr/share/doc/calwatch/copyright /usr/share/doc/calwatch/changelog.gz /usr/share/doc/calwatch/README.md \
    /usr/share/doc/calwatch/docs/design.md /usr/share/doc/calwatch/docs/commands/watch.md \
    /usr/share/doc/calwatch/examples/config.yml /usr/share/doc/calwatch/examples/samples/hooks/notify.sh \
    /usr/share/calwatch/data/manifest.json /usr/share/calwatch/data/airports.txt \
    /usr/share/calwatch/data/metro-areas.txt /usr/share/calwatch/data/airlines.txt \
    /usr/share/calwatch/data/city-names.txt /usr/share/calwatch/data/flight-words.txt \
    /usr/share/calwatch/data/flight-weights.txt /usr/share/calwatch/data/place-names.txt; do
    grep -qx "$path" "$work/contents" || fail "the package has no $path"
done
pass "$(grep -vc '/$' "$work/contents") files, in their places"

# Depends: the shared libraries the binary loads, each with a version; no Swift package, which Debian lacks.
depends=$(field Depends)
for package in libc6 libical3 libsqlite3-0 libxml2 libstdc++6 libmosquitto1 libsecret-1-0; do
    pattern=$(echo "$package" | sed 's/+/\\+/g')
    echo "$depends" | grep -Eq "(^|, )$pattern \(>= [0-9][^)]*\)" || fail "Depends names no versioned $package: $depends"
done
echo "$depends" | grep -qi swift && fail "Depends names a Swift package: $depends"
pass "Depends: $depends"

dpkg-deb -x "$deb" "$work/root"
binary=$work/root/usr/bin/calwatch
examples=$work/root/usr/share/doc/calwatch/examples

# Neither binary loads a Swift library, and every library they do load is found without the toolchain. The front
# loads only the C and C++ runtimes (that is why it starts in a few milliseconds).
program=$work/root/usr/libexec/calwatch/calwatch-commands
for executable in "$binary" "$program"; do
    ldd "$executable" >"$work/ldd"
    grep -i swift "$work/ldd" && fail "ldd names a Swift library for $executable"
    grep "not found" "$work/ldd" && fail "ldd cannot find a library for $executable"
done
front=$(ldd "$binary" | awk '{ print $1 }' | grep -v '^/' | grep -v linux-vdso | tr '\n' ' ')
case $front in *curl* | *ical* | *sqlite*) fail "the front loads the program's libraries: $front" ;; esac
pass "ldd: the front $front; the program $(awk '{ print $1 }' "$work/ldd" | grep -v '^/' | tr '\n' ' ')"

# Run it as a user without Swift would: a minimal environment, no LD_LIBRARY_PATH, no toolchain in PATH.
bare() { env -i PATH=/usr/bin:/bin HOME="$work/home" LANG=C.UTF-8 TZ=Europe/Berlin "$@"; }
mkdir -p "$work/home"

first=$(bare "$binary" --version | head -n 1)
[ "$first" = "calwatch $version" ] || fail "--version prints '$first', the package is $version"
bare "$binary" --version | grep -q "airports .*airportsdata" || fail "--version names no airport data"
pass "--version: $(bare "$binary" --version | tr '\n' ';' | tr -s ' ')"

week="--from 2027-03-01 --to 2027-03-08 --tz Europe/Berlin"
# shellcheck disable=SC2086
bare "$binary" scan "$examples/samples/calendars" $week >"$work/scan.jsonl" || fail "scan of the samples failed"
occurrences=$(wc -l <"$work/scan.jsonl")
flights=$(grep -c '"kind":"flight".*"code":"BA987"' "$work/scan.jsonl" || true)
[ "$occurrences" -gt 0 ] && [ "$flights" = 1 ] || fail "scan of the samples: $occurrences occurrences, $flights BA987 flights"
if [ -n "$reference" ]; then
    # shellcheck disable=SC2086
    "$reference" scan "$examples/samples/calendars" $week >"$work/reference.jsonl"
    cmp -s "$work/scan.jsonl" "$work/reference.jsonl" || fail "the packaged binary's scan differs from $reference's"
fi
pass "scan of the samples: $occurrences occurrences, the BA987 flight among them"

bare "$binary" check --config "$examples/config.yml" >"$work/check.out" 2>&1 ||
    { cat "$work/check.out"; fail "check of the shipped example configuration failed"; }
grep -q "OK" "$work/check.out" || fail "check printed no OK: $(cat "$work/check.out")"
pass "check --config examples/config.yml: OK"
# The data files it uses are the package's own, each verified against its manifest.
grep -q "data ($work/root/usr/share/calwatch/data): airlines .* verified; airports .* verified; city-names .* verified; flight-weights .* verified; flight-words .* verified; metro-areas .* verified; place-names .* verified" \
    "$work/check.out" || fail "check did not verify the package's data files: $(grep 'data (' "$work/check.out")"
pass "data: $(grep -o 'data (.*' "$work/check.out" | sed "s|$work/root||")"

# The unit runs the packaged binary; the completions parse; the pages render without a groff warning.
grep -q '^ExecStart=/usr/bin/calwatch watch' "$work/root/usr/lib/systemd/user/calwatch.service" ||
    fail "the unit does not run /usr/bin/calwatch"
bash -n "$work/root/usr/share/bash-completion/completions/calwatch" || fail "the bash completion does not parse"
! command -v zsh >/dev/null || zsh -n "$work/root/usr/share/zsh/vendor-completions/_calwatch" || fail "zsh completion"
! command -v fish >/dev/null || fish -n "$work/root/usr/share/fish/vendor_completions.d/calwatch.fish" || fail "fish"
for page in "$work"/root/usr/share/man/man1/*.1.gz; do
    warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
    [ -z "$warnings" ] || fail "$(basename "$page"): $warnings"
done
pass "unit, completions and $(ls "$work"/root/usr/share/man/man1 | wc -l) manual pages"

# make install and make uninstall under a prefix: the same files, the unit pointing at them, nothing left after.
prefix=$work/prefix
make --no-print-directory -s install PREFIX="$prefix" >"$work/install.out" 2>&1 || { cat "$work/install.out"; fail "make install"; }
[ "$(bare "$prefix/bin/calwatch" --version | head -n 1)" = "calwatch $version" ] || fail "the installed binary"
grep -q "^ExecStart=$prefix/bin/calwatch watch" "$prefix/share/systemd/user/calwatch.service" ||
    fail "the installed unit does not run $prefix/bin/calwatch"
# The zsh completion and the unit have other folders under a prefix than in Debian; the rest maps /usr to PREFIX.
(cd "$prefix" && find . -type f) | sed 's|^\./share/zsh/site-functions/|ZSH/|; s|^\./share/systemd/user/|UNIT/|; s|^\./|/usr/|' |
    sort >"$work/installed"
grep -v '/$' "$work/contents" | grep -v -e /copyright -e /changelog.gz -e /lintian/ |
    sed 's|^/usr/share/zsh/vendor-completions/|ZSH/|; s|^/usr/lib/systemd/user/|UNIT/|' | sort >"$work/packaged"
diff "$work/packaged" "$work/installed" || fail "make install (>) and the package (<) hold different files"
make --no-print-directory -s uninstall PREFIX="$prefix" >/dev/null
left=$(find "$prefix" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
pass "make install PREFIX=… holds the package's files; make uninstall removes all of them"

if [ "$failures" -gt 0 ]; then
    echo "$deb: $failures checks failed" >&2
    exit 1
fi
echo "$deb: every check passed ($(du -k "$deb" | cut -f1) KiB)"
