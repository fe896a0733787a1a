#!/usr/bin/python3
"""A stand-in for xdg-desktop-portal's OpenURI on a test's private session bus.

The real portal needs a desktop session (a backend, a browser to hand the link to), which the tests cannot run;
this one answers org.freedesktop.portal.OpenURI.OpenURI on org.freedesktop.portal.Desktop as the portal's
documentation describes it (parent window, URI, options such as activation_token; a request handle back) and
writes each call as a JSON line to a file, for the test to read.

Usage: portal-server.py BUS_ADDRESS LOG_FILE   (prints "ready" once it owns its name)
"""
import json
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
log = sys.argv[2]


class Portal(dbus.service.Object):
    @dbus.service.method("org.freedesktop.portal.OpenURI", in_signature="ssa{sv}", out_signature="o")
    def OpenURI(self, parent, uri, options):
        with open(log, "a", encoding="utf-8") as out:
            out.write(json.dumps({"parent": str(parent), "uri": str(uri),
                                  "options": {str(k): str(v) for k, v in options.items()}}) + "\n")
        return dbus.ObjectPath("/org/freedesktop/portal/desktop/request/1/calwatch")


name = dbus.service.BusName("org.freedesktop.portal.Desktop", bus)
Portal(bus, "/org/freedesktop/portal/desktop")
print("ready", flush=True)
GLib.MainLoop().run()
