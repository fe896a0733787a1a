#!/bin/sh
# calwatch hook: a desktop notification for a reminder.
#
#   - type: hook
#     run: [samples/hooks/notify.sh]
#     on: [reminderDue]
#
# Everything in CALWATCH_* comes from a calendar, written by whoever sent the invitation: it is only ever
# passed as data (after "--"), never to a shell.
set -eu
command -v notify-send >/dev/null || { echo "notify-send is not installed (apt-get install libnotify-bin)" >&2; exit 1; }
# The body is markup on servers that announce body-markup (dunst, GNOME, KDE): calendar text is escaped, so that a
# LOCATION of <a href=…> or <img> shows as written.
markup_escaped() { printf '%s' "$1" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; }
title="${CALWATCH_SUMMARY:-Calendar event}"
body="in ${CALWATCH_MINUTES_BEFORE:-?} min"
[ -n "${CALWATCH_LOCATION:-}" ] && body="$body · $(markup_escaped "$CALWATCH_LOCATION")"
# No session bus yet (just logged in, or the desktop restarted): ask calwatch to try again (exit 75).
notify-send --app-name=calwatch -- "$title" "$body" || exit 75
