#!/bin/sh
# calwatch hook: opens a meeting's join link in the browser, 1 minute before it starts.
#
#   - type: hook
#     run: [samples/hooks/open-join-link.sh, "{joinURL}"]
#     on: [reminderDue]
#     kinds: [meeting]
#     offsets: [1m]          # add 1m to reminders.offsets
#
# The link comes from the invitation, so only https links are opened; anything else (file:, javascript:,
# a custom scheme that starts a program) is refused.
set -eu
url="${1:-}"
case "$url" in
    https://*) ;;
    "") exit 0 ;;                                   # a meeting without a link: nothing to open
    *) echo "not opening '$url': only https links are opened" >&2; exit 1 ;;
esac
command -v xdg-open >/dev/null || { echo "xdg-open is not installed (apt-get install xdg-utils)" >&2; exit 1; }
# The browser outlives this hook; it gets its own session so the hook's timeout never stops it.
setsid xdg-open "$url" >/dev/null 2>&1 < /dev/null &
