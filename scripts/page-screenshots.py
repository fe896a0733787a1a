#!/usr/bin/env python3
"""docs/images/page-light.png and page-dark.png: the local server's page (docs/server.md) in headless Chromium, on a
day of made-up meetings around now, served by a `calwatch watch` in a temporary folder. Run by `make screenshots`."""
import datetime
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CALWATCH = os.environ.get("CALWATCH", ".build/debug/calwatch")
OUT = sys.argv[1] if len(sys.argv) > 1 else "docs/images"


def item(uid, summary, start, end, extra=()):
    now = datetime.datetime.now(datetime.timezone.utc).replace(second=0, microsecond=0)
    stamp = lambda minutes: (now + datetime.timedelta(minutes=minutes)).strftime("%Y%m%dT%H%M%SZ")
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//calwatch screenshots//EN", "BEGIN:VEVENT", f"UID:{uid}",
             f"DTSTAMP:{stamp(0)}", f"DTSTART:{stamp(start)}", f"DTEND:{stamp(end)}", f"SUMMARY:{summary}",
             *extra, "END:VEVENT", "END:VCALENDAR", ""]
    return "\r\n".join(lines)


def main():
    work = tempfile.mkdtemp(prefix="calwatch-page-")
    daemon = None
    try:
        os.makedirs(f"{work}/cal/work")
        items = {
            "standup": item("standup", "Team standup", 12, 27, ["DESCRIPTION:Join https://meet.google.com/abc-defg-hij"]),
            "review": item("review", "Design review", 45, 105, ["LOCATION:Room 4.12"]),
            "budget": item("budget", "Budget 2027", 90, 150, ["ORGANIZER:mailto:cfo@example.org",
                                                              "ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:me@example.org"]),
            "lunch": item("lunch", "Lunch with Sam", 180, 240),
        }
        for name, text in items.items():
            with open(f"{work}/cal/work/{name}.ics", "w") as file:
                file.write(text)
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        with open(f"{work}/config.yml", "w") as config:
            config.write(f"calendars: [cal]\nstate: state/journal.db\nme: [me@example.org]\n"
                         f"serve: {{ listen: 127.0.0.1:{port} }}\nsinks: [{{ type: jsonl, path: events.jsonl }}]\n")
        daemon = subprocess.Popen([os.path.abspath(CALWATCH), "watch", "--config", "config.yml"], cwd=work,
                                  stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        token_path = f"{work}/state/journal.db.token"
        for _ in range(200):
            if os.path.exists(token_path):
                break
            time.sleep(0.05)
        time.sleep(1)
        token = open(token_path).read().strip()
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=720,640",
                         f"--user-data-dir={work}/profile", "--hide-scrollbars"]:
            options.add_argument(argument)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            for scheme in ["light", "dark"]:
                driver.execute_cdp_cmd("Emulation.setEmulatedMedia",
                                       {"features": [{"name": "prefers-color-scheme", "value": scheme}]})
                driver.get(f"http://127.0.0.1:{port}/?token={token}")
                time.sleep(1)
                driver.save_screenshot(f"{OUT}/page-{scheme}.png")
        finally:
            driver.quit()
    finally:
        if daemon:
            daemon.terminate()
            daemon.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
