#!/bin/sh
# The README's pictures of the notify sink: a private session bus, an X server with no screen (Xvfb) and dunst on
# them, a `calwatch replay` of one morning through a `type: notify` sink, and the screen saved as PNG. Run by
# `make screenshots`; writes docs/images/notify-cards.png.
set -eu
calwatch=${CALWATCH:-.build/debug/calwatch}
out=${1:-docs/images/notify-cards.png}
work=$(mktemp -d)
pids=""
cleanup() {
    for pid in $pids; do kill -9 "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

cat > "$work/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$work/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow send_destination="*" eavesdrop="true"/><allow eavesdrop="true"/><allow own="*"/></policy>
</busconfig>
CONF
dbus-daemon --config-file="$work/bus.conf" --nofork > /dev/null & pids="$pids $!"
Xvfb -displayfd 3 -screen 0 580x300x24 -wr -nolisten tcp 3> "$work/display" 2> /dev/null & pids="$pids $!"
for _ in $(seq 100); do [ -s "$work/display" ] && [ -S "$work/bus" ] && break; sleep 0.05; done
export DISPLAY=":$(head -n1 "$work/display")" DBUS_SESSION_BUS_ADDRESS="unix:path=$work/bus"
cat > "$work/dunstrc" <<CONF
[global]
    markup = full
    font = DejaVu Sans 10
    width = 520
    origin = top-left
    offset = 20x20
    gap_size = 10
    frame_width = 2
    corner_radius = 6
    progress_bar = true
    progress_bar_height = 8
    format = "<b>%s</b>\n%b"
    icon_position = off
    show_indicators = no
[urgency_normal]
    background = "#2b303b"
    foreground = "#eff1f5"
    frame_color = "#8fa1b3"
    timeout = 0
[urgency_critical]
    background = "#3b2b2b"
    foreground = "#ffffff"
    frame_color = "#d08770"
    timeout = 0
CONF
dunst -config "$work/dunstrc" > /dev/null 2>&1 & pids="$pids $!"
for _ in $(seq 100); do dunstctl is-paused > /dev/null 2>&1 && break; sleep 0.05; done

mkdir "$work/cal"
cat > "$work/cal/standup.ics" <<ICS
BEGIN:VCALENDAR
VERSION:2.0
PRODID:-//calwatch//screenshots//EN
BEGIN:VEVENT
UID:standup@screenshots
DTSTAMP:20270301T080000Z
DTSTART:20270301T093000Z
DTEND:20270301T100000Z
SUMMARY:Team standup
LOCATION:https://meet.google.com/abc-defg-hij
DESCRIPTION:Join: https://meet.google.com/abc-defg-hij
END:VEVENT
BEGIN:VEVENT
UID:design@screenshots
DTSTAMP:20270301T080000Z
DTSTART:20270301T101000Z
DTEND:20270301T110000Z
SUMMARY:Design review <b>v2</b>
LOCATION:Room 4.12
DESCRIPTION:https://us02web.zoom.us/j/123456789
END:VEVENT
END:VCALENDAR
ICS
cat > "$work/config.yml" <<CONF
calendars: [cal]
timezone: UTC
state: journal.db
sinks:
  - { type: notify, bus: "unix:path=$work/bus" }
CONF
# 09:45: the standup has run a quarter of an hour (its live card half full), the review is 25 minutes off.
(cd "$work" && "$OLDPWD/$calwatch" replay --config config.yml --from 2027-03-01T09:00:00Z --to 2027-03-01T09:45:00Z \
    > /dev/null)
sleep 1
mkdir -p "$(dirname "$out")"
import -window root "$out"
echo "wrote $out"
