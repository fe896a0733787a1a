# calwatch: `make demo` shows it working on the samples, `make test` runs every test, `make bench` measures.
# Both install the Debian packages calwatch needs when they are missing (as root), or print the command.

SYSTEM_PACKAGES := pkg-config libical-dev libsqlite3-dev libxml2 sqlite3
SWIFT_BUILD_FLAGS ?=
DEMO_WINDOW := --from 2027-03-01 --to 2027-03-08 --tz Europe/Berlin
DEMO_DAY := --from 2027-03-03 --to 2027-03-04
DEMO_CALENDARS := samples/calendars samples/radicale/family samples/caldav/report.xml

.PHONY: deps build demo test test-busy corpus bench bench-replay bench-sinks bench-watch format clean

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

build: deps
	swift build $(SWIFT_BUILD_FLAGS)

demo: build
	@echo "== calwatch scan: the sample calendars, week of 2027-03-01 (Europe/Berlin) =="
	@.build/debug/calwatch scan $(DEMO_CALENDARS) $(DEMO_WINDOW) --format table
	@echo
	@echo "== calwatch replay --config config.yml: the events of Wednesday 2027-03-03 =="
	@echo "   (a flight, a Zoom standup moved by an override, a Meet 1:1, a cancelled Teams sync that gets no"
	@echo "   reminders, an all-day trip that gets none either, an evening event; the minute-by-minute"
	@echo "   liveActivityUpdate events are left out here: drop the grep to see them)"
	@rm -rf .build/demo
	@.build/debug/calwatch replay --config config.yml $(DEMO_DAY) | grep -v '"type":"calwatch.liveActivityUpdate"' || true
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

test: deps
	swift test $(SWIFT_BUILD_FLAGS)

# `make test` with one CPU hog per core running: the suite must pass on a busy machine too (BENCHMARKS.md has
# both wall times).
test-busy: deps
	scripts/busy.sh $(MAKE) test

# The labelled classification corpus: precision, recall and field accuracy (Tests/CalWatchTests/Fixtures/corpus).
corpus: deps
	swift test $(SWIFT_BUILD_FLAGS) --filter ClassificationCorpusTests

bench: deps
	python3 benchmarks/run.py

bench-replay: deps
	python3 benchmarks/run.py --replay

bench-sinks: deps
	python3 benchmarks/run.py --sinks

# `calwatch watch` on a 10,000-file vdir: change latency, CPU per change and idle, memory (~2 minutes).
bench-watch: deps
	python3 benchmarks/watch.py

format:
	swift format --in-place --recursive Sources Tests

clean:
	rm -rf .build bench-data
