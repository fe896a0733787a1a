#!/bin/sh
# calwatch hook: a desktop notification for a reminder, with Join, Snooze 5 min and Dismiss buttons.
#
#   - type: hook
#     run: [samples/hooks/notify-actions.sh]
#     on: [reminderDue]
#
# Snooze calls `calwatch snooze "$CE_ID" 5m` (the reminder comes again in five minutes), Dismiss
# `calwatch dismiss "$CE_ID"` (no more reminders, the live activity ends), Join opens the meeting's link with
# open-join-link.sh (https only) and acknowledges it (no more reminders, the live activity goes on). The daemon
# gives its hooks CALWATCH_STATE, so these reach it without --config.
#
# A notification waits for its click as long as the user likes, longer than a hook's timeout: it runs in a
# session of its own, and the hook returns at once. Everything in CALWATCH_* comes from a calendar: it is passed
# only as data (arguments after "--", and the environment), never as shell code. Needs notify-send from
# libnotify-bin 0.8 or later (--action, --wait).
set -eu
command -v notify-send >/dev/null || { echo "notify-send is not installed (apt-get install libnotify-bin)" >&2; exit 1; }
# The body is markup on servers that announce body-markup (dunst, GNOME, KDE): calendar text is escaped, so that a
# LOCATION of <a href=…> or <img> shows as written.
markup_escaped() { printf '%s' "$1" | sed -e 's/&/\&amp;/g' -e 's/</\&lt;/g' -e 's/>/\&gt;/g'; }
title="${CALWATCH_SUMMARY:-Calendar event}"
body="in ${CALWATCH_MINUTES_BEFORE:-?} min"
[ -n "${CALWATCH_LOCATION:-}" ] && body="$body · $(markup_escaped "$CALWATCH_LOCATION")"
set -- --app-name=calwatch --wait --action=snooze="Snooze 5 min" --action=dismiss=Dismiss
[ -n "${CALWATCH_JOIN_URL:-}" ] && set -- "$@" --action=join=Join
HOOKS=$(dirname "$0") EVENT_ID="$CE_ID" JOIN_URL="${CALWATCH_JOIN_URL:-}" setsid sh -c '
    choice=$(notify-send "$@") || exit 0
    case "$choice" in
        snooze) calwatch snooze "$EVENT_ID" 5m ;;
        dismiss) calwatch dismiss "$EVENT_ID" ;;
        join) "$HOOKS/open-join-link.sh" "$JOIN_URL" && calwatch ack "$EVENT_ID" ;;
    esac' notify-actions "$@" -- "$title" "$body" </dev/null >/dev/null 2>&1 &
