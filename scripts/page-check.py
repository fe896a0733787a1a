#!/usr/bin/env python3
"""Drives the local server's page in headless Chromium (Debian's chromium and chromedriver, through Selenium) as a
person would, and prints what it saw as one JSON object for LocalServerTests:

- opens --url (the page with ?token=…, as `calwatch next --open-page` does) and reads the next card and the day;
- clicks the next card's Snooze and waits for calwatch.reminderSnoozed in the JSON Lines sink's file (--events);
- writes --item to --write (a new meeting, renamed into place as vdirsyncer does) and, once its reminder is in the
  JSON Lines sink, waits for it to appear on the page without a reload (a marker set on the window survives only
  if the page was not loaded again), at most 10 s: the event stream brings it, not the page's 30-second refresh.
"""
import argparse
import json
import os
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By


def wait(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            value = condition()
            if value:
                return value
        except Exception:  # the page is being replaced: look again
            pass
        time.sleep(0.2)
    raise SystemExit(f"page-check: waited {seconds} s for {what}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--events", required=True)
    parser.add_argument("--write", required=True)
    parser.add_argument("--item", required=True)
    arguments = parser.parse_args()

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="calwatch-chromium-")
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--user-data-dir={profile}", "--no-first-run"]:
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(60)
    seen = {}
    try:
        driver.get(arguments.url)
        # The page replaces its fragment after each stream event: what the card and the day show is read in one
        # script, which the page cannot interrupt, rather than element by element.
        def snapshot():
            return driver.execute_script("""
                const card = document.querySelector('#next');
                const title = card && card.querySelector('h1');
                if (!title) return null;
                const join = card.querySelector('a.join');
                return {
                    nextTitle: title.innerText,
                    urgency: [...card.classList].filter(name => name !== 'next')[0],
                    join: join ? join.href : null,
                    titles: [...document.querySelectorAll('.items .title')].map(element => element.innerText),
                    overlaps: [...document.querySelectorAll('.items .conflict')]
                        .map(element => element.getAttribute('data-subject')),
                };""")
        seen.update(wait(snapshot, 60, "the next card"))
        seen["addressKeepsNoToken"] = "token=" not in driver.current_url

        # The page replaces its fragment after each stream event: a button found just before may be gone by the
        # click, so the button is found again until a click lands.
        def click_snooze():
            driver.find_element(By.CSS_SELECTOR, "#next button.snooze").click()
            return True
        wait(click_snooze, 60, "a Snooze button that takes the click")
        seen["said"] = wait(lambda: driver.find_element(By.CSS_SELECTOR, ".said").text, 60, "what became of the snooze")

        def snoozed():
            with open(arguments.events, encoding="utf-8") as events:
                return any("calwatch.reminderSnoozed" in line for line in events)
        seen["snoozed"] = bool(wait(snoozed, 60, "reminderSnoozed in the JSON Lines sink"))

        driver.execute_script("window.calwatchMarker = 42;")
        temporary = os.path.join(os.path.dirname(arguments.write), "." + os.path.basename(arguments.write) + ".tmp")
        with open(temporary, "w", encoding="utf-8") as item:
            item.write(arguments.item)
        os.rename(temporary, arguments.write)

        def reminded():
            with open(arguments.events, encoding="utf-8") as events:
                return any("calwatch.reminderDue" in line and '"subject":"incident/' in line for line in events)
        wait(reminded, 90, "the new meeting's reminder in the JSON Lines sink")
        reminded_at = time.monotonic()

        def appeared():
            titles = [element.text for element in driver.find_elements(By.CSS_SELECTOR, ".items .title")]
            return any("Incident call" in title for title in titles)
        wait(appeared, 10, "the new meeting on the page")
        seen["appearedAfterItsReminder"] = round(time.monotonic() - reminded_at, 2)
        seen["appearedWithoutReload"] = driver.execute_script("return window.calwatchMarker;") == 42
    finally:
        driver.quit()
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
