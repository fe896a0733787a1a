#!/bin/sh
# calwatch hook: appends one line per event to a log file (the first argument; default
# ~/.local/state/calwatch/hooks.log), with the whole event kept as JSON after a tab.
#
#   - type: hook
#     run: [samples/hooks/log.sh, /home/me/calwatch-hooks.log]
#
# The event JSON arrives on standard input; it is written as it came, never interpreted.
set -eu
log="${1:-$HOME/.local/state/calwatch/hooks.log}"
mkdir -p "$(dirname "$log")"
event="$(cat)"
printf '%s\t%s\t%s\t%s\n' "$CE_TIME" "$CALWATCH_EVENT" "$CALWATCH_SUMMARY" "$event" >> "$log"
