# calwatch: `make demo` shows it working on the samples, `make test` runs every test, `make bench` measures.
# Both install the Debian packages calwatch needs when they are missing (as root), or print the command.

# What building calwatch needs (the C libraries it links, and sqlite3, which the demo reads its database with); what
# the tests need besides: the servers and tools they start on loopback in a temporary folder (PostgreSQL, Radicale,
# promtool, vdirsyncer, openssl for a test certificate, a private session bus with dunst on Xvfb for desktop
# notifications, curl for the event stream, headless Chromium driven by Selenium for the page) and python3 with
# venv for the differential check.
SYSTEM_PACKAGES := pkg-config libical-dev libsqlite3-dev libxml2-dev libpq-dev libcurl4-openssl-dev libsystemd-dev libmosquitto-dev libsecret-1-dev zlib1g-dev sqlite3
TEST_PACKAGES := postgresql prometheus radicale vdirsyncer python3 python3-venv openssl dbus gnome-keyring libsecret-tools dunst notification-daemon xvfb python3-dbus python3-gi mosquitto mosquitto-clients curl chromium chromium-driver python3-selenium
SWIFT_BUILD_FLAGS ?=
DEMO_WINDOW := --from 2027-03-01 --to 2027-03-08 --tz Europe/Berlin
DEMO_DAY := --from 2027-03-03 --to 2027-03-04
DEMO_CALENDARS := samples/calendars samples/radicale/family samples/caldav/report.xml

.PHONY: deps test-deps lint build screenshots demo test test-busy corpus corpus-held-back corpus-outside fit-flights bench bench-replay bench-replay-weeks bench-sinks bench-push bench-postgres bench-feeds bench-hostile bench-package bench-day bench-lateness bench-server bench-fleet bench-watch bench-startup bench-first-sync bench-accounts bench-next format clean \
	release manual install uninstall deb deb-deps test-package fuzz test-asan test-tsan soak

deps:
	@missing=""; \
	for package in $(SYSTEM_PACKAGES); do \
		dpkg-query -W -f='$${Status}' $$package 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$package"; \
	done; \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "Installing:$$missing"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null || exit 1; \
		else \
			echo "calwatch needs these Debian packages:$$missing"; \
			echo "Install them with:  sudo apt-get install -y$$missing"; \
			exit 1; \
		fi; \
	fi

# The tests' servers and tools, on top of deps.
test-deps: deps
	@$(MAKE) --no-print-directory deps SYSTEM_PACKAGES="$(TEST_PACKAGES)"

build: deps
	swift build $(SWIFT_BUILD_FLAGS)

# The README's picture of the notify sink (docs/images/notify-cards.png): dunst under Xvfb on a private bus; and
# the local server's page, light and dark (docs/images/page-*.png), in headless Chromium.
screenshots: test-deps
	@$(MAKE) --no-print-directory deps SYSTEM_PACKAGES="imagemagick"
	swift build $(SWIFT_BUILD_FLAGS)
	scripts/screenshots.sh docs/images/notify-cards.png
	/usr/bin/python3 scripts/page-screenshots.py docs/images

demo: build
	@echo "== calwatch scan: the sample calendars, week of 2027-03-01 (Europe/Berlin) =="
	@.build/debug/calwatch scan $(DEMO_CALENDARS) $(DEMO_WINDOW) --format table
	@echo
	@echo "== calwatch replay --config config.yml: the events of Wednesday 2027-03-03 =="
	@echo "   (a flight, a Zoom standup moved by an override, a Meet 1:1, a cancelled Teams sync that gets no"
	@echo "   reminders, an all-day trip that gets none either, an evening event; the minute-by-minute"
	@echo "   liveActivityUpdate events are left out here: drop the grep to see them)"
	@rm -rf .build/demo
	@.build/debug/calwatch replay --config config.yml $(DEMO_DAY) --state .build/demo/journal.db \
		| grep -v '"type":"calwatch.liveActivityUpdate"' || true
	@echo
	@echo "== the same events in the SQLite sink, .build/demo/events.db =="
	@sqlite3 -header -column .build/demo/events.db \
		"SELECT type, count(*) AS events, min(time) AS first, max(time) AS last FROM events GROUP BY type ORDER BY first"
	@echo
	@echo "== the flights view: the sample flight with when to leave for the airport =="
	@sqlite3 -header -column .build/demo/events.db "SELECT code, origin, destination, departure, leave_by FROM flights"
	@echo
	@echo "== what the hook samples/hooks/log.sh wrote, .build/demo/hooks.log (one run per reminder; up to 4 run at"
	@echo "   once and finish in any order, so sorted here by the time each reminder was due) =="
	@sort .build/demo/hooks.log | cut -f1-3
	@echo
	@echo "== calwatch explain: why the travel calendar's items are what they are =="
	@.build/debug/calwatch explain samples/calendars/travel --tz Europe/Berlin
	@echo
	@echo "== calwatch next: what a status bar shows that morning at 03:00 and 10:18 (text, then waybar) =="
	@.build/debug/calwatch next --config config.yml --at 2027-03-03T03:00
	@.build/debug/calwatch next --config config.yml --at 2027-03-03T10:18
	@.build/debug/calwatch next --config config.yml --at 2027-03-03T10:18 --format waybar
	@echo
	@echo "== calwatch why: what became of the moved standup's reminders, read back from the replay's journal =="
	@.build/debug/calwatch why 4q1d6v8s0m7b2c5n9k3j1h0g6f@google.com --config config.yml \
		--state .build/demo/journal.db --at 2027-03-03T11:00

# The test suite, then the Debian package built and checked as a user without Swift would meet it.
# swift format's checks with the checked-in .swift-format, as warnings that fail (`make format` fixes most).
lint:
	swift format lint --strict --recursive --parallel Package.swift Sources Tests Fuzz

test: test-deps lint
	swift test $(SWIFT_BUILD_FLAGS)
	@$(MAKE) --no-print-directory test-package

# `make test` in a fresh clone of HEAD, as CI runs it, timed: one row for BENCHMARKS.md (BUSY=1: with CPU hogs).
bench-suite:
	python3 benchmarks/suite.py $(if $(BUSY),--busy)

# `make test` with one CPU hog per core running: the suite must pass on a busy machine too (BENCHMARKS.md has
# both wall times).
test-busy: test-deps
	scripts/busy.sh $(MAKE) test

# libFuzzer under AddressSanitizer on the calendar reader, the CalDAV reader and the configuration loader
# (Fuzz/, scripts/fuzz.sh): FUZZ_SECONDS per target (default 300), FUZZ_JOBS targets at once. Found inputs land in
# fuzz-failures/ and fail the run.
fuzz: test-deps
	scripts/fuzz.sh

# `calwatch watch` for SOAK_MINUTES (default 30) on a 1,000-file vdir changing every second, hostile files included,
# a hook on every reminder; memory, descriptors and threads each minute, SIGTERM timed, the sink compared with a
# replay (benchmarks/soak.py; results in BENCHMARKS.md).
SOAK_MINUTES ?= 30
soak: test-deps
	python3 benchmarks/soak.py --minutes $(SOAK_MINUTES)

# The test suite under AddressSanitizer and under ThreadSanitizer, in build folders of their own (BENCHMARKS.md
# explains what each reports).
test-asan: test-deps
	LSAN_OPTIONS=suppressions=$(CURDIR)/scripts/lsan-suppressions.txt \
		swift test $(SWIFT_BUILD_FLAGS) --sanitize=address --scratch-path .build/asan

test-tsan: test-deps
	TSAN_OPTIONS=suppressions=$(CURDIR)/scripts/tsan-suppressions.txt \
		swift test $(SWIFT_BUILD_FLAGS) --sanitize=thread --scratch-path .build/tsan

# The labelled classification corpus: precision, recall and field accuracy (Tests/CalWatchTests/Fixtures/corpus).
# The test binary is run directly: `swift test` does not pass on all that a test prints.
CORPUS_TESTS = swift build --build-tests $(SWIFT_BUILD_FLAGS) && \
	"$$(swift build $(SWIFT_BUILD_FLAGS) --show-bin-path)/calwatchPackageTests.xctest" --testing-library swift-testing
corpus: test-deps
	$(CORPUS_TESTS) --filter 'ClassificationCorpusTests|FreshCorpusTests'

# Items written outside the project (../shared/corpora, corpus/public): figures by producer and by language.
corpus-outside: test-deps
	swift build -c release $(SWIFT_BUILD_FLAGS)
	python3 scripts/score-corpus.py "$$(swift build -c release $(SWIFT_BUILD_FLAGS) --show-bin-path)/calwatch"

# The flight decision's weights: exports each labelled item's evidence, prints the cross-validated figures of
# each penalty tried, and writes Sources/CalWatchCore/Resources/data/flight-weights.txt and its manifest entry.
fit-flights: test-deps
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	CALWATCH_WRITE_FEATURES=$(CURDIR)/.build/flight-features.jsonl \
		swift test --skip-build $(SWIFT_BUILD_FLAGS) --filter FlightFeatureExport
	python3 scripts/fit-flight-weights.py .build/flight-features.jsonl --write

# The fifth of the fresh corpus no test reads: scored once, when the rules are done.
corpus-held-back: test-deps
	export CALWATCH_SCORE_HELD_BACK=1; $(CORPUS_TESTS) --filter theHeldBackFifth

bench: test-deps
	python3 benchmarks/run.py

bench-replay: test-deps
	python3 benchmarks/run.py --replay

# Both weeks' replays (the benchmark week; 5,000 weekly meetings, mostly live-activity updates) with and without live
# activities: events/s and what an update costs (~3 minutes; REV=… pairs them with that revision's build).
bench-replay-weeks: test-deps
	python3 benchmarks/run.py --weeks $(if $(REV),--against $(REV))

# Reminders due while the daemon reads a 5,000-file vdir rewritten every 20 s, a CPU hog per core (~7 minutes).
bench-lateness: test-deps
	python3 benchmarks/lateness.py

# The local server under hostile load: idle connections, reconnecting event streams, wrong tokens; answers' latency,
# reminders' lateness, memory over the reconnections (BENCHMARKS.md).
bench-server: test-deps
	python3 benchmarks/server.py

# The week's replay with day: (conflicts, overruns, invitations, agenda, travel zone) against the same without.
# A fleet through PostgreSQL: hand-over after SIGKILL and SIGTERM, and the lateness of reminders meanwhile
# (benchmarks/fleet.py; about 5 minutes).
bench-fleet: test-deps
	python3 benchmarks/fleet.py

bench-day: test-deps
	python3 benchmarks/run.py --day

# This checkout against revision REV, in turn: the week's replay and the year's scan, ratios, outputs compared.
bench-against: test-deps
	@test -n "$(REV)" || { echo "make bench-against REV=<revision>"; exit 64; }
	python3 benchmarks/run.py --against $(REV)

bench-sinks: test-deps
	python3 benchmarks/run.py --sinks

# 10,000 events through a webhook and MQTT beside JSON Lines: throughput, and the same ids at each receiver.
bench-push: test-deps
	python3 benchmarks/push.py

# Eight watchers replaying into one PostgreSQL database at once, against their ceiling (~1 minute).
bench-postgres: test-deps
	python3 benchmarks/postgres.py

# ICS feeds and a CalDAV server followed by `watch`: unchanged polls, a change picked up, memory (benchmarks/feeds.py).
bench-feeds: test-deps
	python3 benchmarks/feeds.py

# The first sync of one CalDAV collection of 100,000 items from scripts/caldav-server.py, which answers at once
# (benchmarks/feeds.py --first-sync): calwatch's own time and memory.
bench-first-sync: test-deps
	python3 benchmarks/feeds.py --first-sync 100000

# A Microsoft 365 and a Google account's first sync of 10,000 events and an incremental one, against the stand-ins
# (benchmarks/accounts.py, scripts/microsoft-server.py, scripts/google-server.py).
bench-accounts: test-deps
	swift build -c release $(SWIFT_BUILD_FLAGS)
	python3 benchmarks/accounts.py --provider microsoft --to-sink
	python3 benchmarks/accounts.py --provider google

# A hostile server (scripts/hostile-server.py) against scan and watch: time, peak memory, time to stop at SIGTERM.
bench-hostile: test-deps
	python3 benchmarks/hostile.py

# The Debian package's size, and its static binary's start-up against the toolchain-linked release build.
bench-package: deb
	python3 benchmarks/run.py --package

# `calwatch next`: one run, and --follow changed and left alone for two minutes (~4 minutes).
bench-next: test-deps
	python3 benchmarks/next.py

# `calwatch watch` on a 10,000-file vdir: change latency, CPU per change and idle, memory (~2 minutes).
bench-watch: test-deps
	python3 benchmarks/watch.py

# `watch` ready (its first plan committed) on the 10,000-file vdir, seven restarts (benchmarks/watch.py --startup;
# add --against REVISION for paired runs with another build).
bench-startup: test-deps
	python3 benchmarks/watch.py --startup 7

# Installing and packaging. The binary carries the Swift runtime and Foundation (--static-swift-stdlib), so it needs
# only Debian's shared libraries (libical's pkg-config also links libicalss and libicalvcal, which calwatch does not
# use; dpkg-shlibdeps says so, and both come with libical3 anyway). It is built in a folder of its own so that it
# does not rebuild .build/release.
VERSION := $(shell sed -n 's/^    static let release = "\(.*\)"$$/\1/p' Sources/CalWatchCommands/CalwatchVersion.swift)
STATIC_BINARY := .build/static/release/calwatch
MANUAL := .build/plugins/GenerateManual/outputs/CalWatchCommands
PREFIX ?= /usr/local
DESTDIR ?=
# Every directory scripts/install-files.sh writes to, for `make install` (PREFIX=~/.local works without root:
# systemd, man, bash-completion and fish all look under ~/.local/share; zsh needs it on its fpath, see README).
INSTALL_DIRS = BINDIR=$(PREFIX)/bin DATADIR=$(PREFIX)/share UNITDIR=$(PREFIX)/share/systemd/user \
	ZSHDIR=$(PREFIX)/share/zsh/site-functions MANDIR=$(PREFIX)/share/man/man1 DOCDIR=$(PREFIX)/share/doc/calwatch
# The same for the Debian package, in Debian's own places.
DEB_DIRS = BINDIR=/usr/bin DATADIR=/usr/share UNITDIR=/usr/lib/systemd/user \
	ZSHDIR=/usr/share/zsh/vendor-completions MANDIR=/usr/share/man/man1 DOCDIR=/usr/share/doc/calwatch
DEB_ROOT := .build/deb/root
DEB_PACKAGES := dpkg-dev fakeroot lintian man-db binutils

# Linked with full RELRO (-z relro -z now), as Debian's hardening defaults ask of every binary. libcurl (feeds,
# CalDAV) is the system's, loaded as a shared library. Both executables: the front, `calwatch`, and the program it
# runs, `calwatch-commands` (installed in libexec/calwatch beside bin).
release: deps
	swift build -c release --static-swift-stdlib -Xlinker -z -Xlinker relro -Xlinker -z -Xlinker now \
		--scratch-path .build/static

# One page per command, from the commands' own --help text (argument-parser's generate-manual), dated by the release.
manual: deps
	swift package generate-manual --multi-page --configuration debug \
		--date "$$(date -u -d "$$(sed -n 's/^ -- .*>  //p' debian/changelog | head -n 1)" +%Y-%m-%d)"

install: release manual
	$(INSTALL_DIRS) DESTDIR="$(DESTDIR)" BINARY=$(STATIC_BINARY) MANPAGES=$(MANUAL) scripts/install-files.sh install

uninstall:
	$(INSTALL_DIRS) DESTDIR="$(DESTDIR)" scripts/install-files.sh uninstall

deb-deps:
	@$(MAKE) --no-print-directory deps SYSTEM_PACKAGES="$(DEB_PACKAGES)"

# calwatch_<version>_<arch>.deb: the files of `make install` in Debian's places, Depends worked out by
# dpkg-shlibdeps from the binary's own libraries, then checked by lintian (an error fails the build).
deb: deb-deps release manual
	@test "$(VERSION)" = "$$(dpkg-parsechangelog -l debian/changelog -S Version)" || \
		{ echo "debian/changelog's version is not calwatch's ($(VERSION)): add an entry"; exit 1; }
	rm -rf .build/deb && mkdir -p $(DEB_ROOT)/DEBIAN
	$(DEB_DIRS) DESTDIR=$(DEB_ROOT) BINARY=$(STATIC_BINARY) MANPAGES=$(MANUAL) scripts/install-files.sh install
	strip --strip-unneeded --remove-section=.comment --remove-section=.note $(DEB_ROOT)/usr/bin/calwatch \
		$(DEB_ROOT)/usr/libexec/calwatch/calwatch-commands
	install -m 0644 debian/copyright $(DEB_ROOT)/usr/share/doc/calwatch/copyright
	install -D -m 0644 debian/calwatch.lintian-overrides $(DEB_ROOT)/usr/share/lintian/overrides/calwatch
	gzip -9nc debian/changelog >$(DEB_ROOT)/usr/share/doc/calwatch/changelog.gz
	cd $(DEB_ROOT) && find usr -type f -exec md5sum {} + | sort -k 2 >DEBIAN/md5sums
	dpkg-shlibdeps -O $(DEB_ROOT)/usr/bin/calwatch $(DEB_ROOT)/usr/libexec/calwatch/calwatch-commands \
		>.build/deb/substvars
	dpkg-gencontrol -pcalwatch -P$(DEB_ROOT) -T.build/deb/substvars -ldebian/changelog -cdebian/control \
		-f.build/deb/files
	fakeroot dpkg-deb -Zxz --build $(DEB_ROOT) calwatch_$(VERSION)_$$(dpkg --print-architecture).deb
	lintian --fail-on error calwatch_$(VERSION)_$$(dpkg --print-architecture).deb

# Builds the package and checks it as a user would meet it (scripts/check-package.sh). `make test` runs it.
test-package: deb
	scripts/check-package.sh calwatch_$(VERSION)_$$(dpkg --print-architecture).deb .build/debug/calwatch

format:
	swift format --in-place --recursive Package.swift Sources Tests Fuzz

clean:
	rm -rf .build bench-data calwatch_*.deb
