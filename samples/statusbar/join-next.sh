#!/bin/sh
# Click action for the status-bar samples: opens the join link of the meeting `calwatch next` shows, through the
# open-join-link.sh hook sample (which opens https links only).
#
#   waybar:   "on-click": "~/.config/calwatch/statusbar/join-next.sh"
#   polybar:  click-left = ~/.config/calwatch/statusbar/join-next.sh
#   i3blocks: see i3blocks.conf
#
# The link is calendar text: it is passed as one argument, never through a shell. Extra arguments (--config,
# --calendars, …) go to `calwatch next`, so the click opens the link of the meeting the bar shows.
set -eu
here=$(dirname "$0")
json=$(calwatch next --format json "$@")
if command -v jq >/dev/null; then
    url=$(printf '%s' "$json" | jq -r '.occurrence.meeting.joinURL // empty')
elif command -v python3 >/dev/null; then
    url=$(printf '%s' "$json" | python3 -c 'import json, sys; o = json.load(sys.stdin)["occurrence"] or {}; print((o.get("meeting") or {}).get("joinURL") or "")')
else
    echo "join-next.sh needs jq or python3 to read calwatch's JSON (apt-get install jq)" >&2
    exit 1
fi
exec "$here/../hooks/open-join-link.sh" "$url"
