#!/bin/sh
# calwatch hook: "leave for the airport now". Flight reminders count back from leave-by (departure minus the
# airport lead minus the travel time, see `flights` in config.yml), so the 0-minute reminder is the moment to go.
#
#   - type: hook
#     run: [samples/hooks/leave-for-airport.sh]
#     on: [reminderDue]
#     kinds: [flight]
#
set -eu
flight="${CALWATCH_FLIGHT:-$CALWATCH_SUMMARY}"
if [ "${CALWATCH_MINUTES_BEFORE:-0}" -le 0 ]; then
    message="Leave for the airport now: $flight"
else
    message="Leave for the airport in $CALWATCH_MINUTES_BEFORE min: $flight"
fi
[ -n "${CALWATCH_START:-}" ] && message="$message (departs $CALWATCH_START)"
if command -v notify-send >/dev/null; then
    notify-send --app-name=calwatch --urgency=critical -- "$message" || exit 75
else
    echo "$message" >&2
fi
