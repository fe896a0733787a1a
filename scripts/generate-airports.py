#!/usr/bin/env python3
"""Convert the `airportsdata` package's tables into calwatch's airport data files.

Source: airportsdata (https://github.com/mborsetti/airportsdata), PyPI release 20260905, files
airportsdata/airports.csv (every airport with an IATA code: name, city, country, coordinates, IANA zone)
and airportsdata/iata_macs.csv (IATA metropolitan-area codes such as LON and NYC). Licence: MIT, reproduced
in LICENSES/airportsdata-MIT.txt.

Writes Sources/CalWatchCore/Resources/data/airports.txt and metro-areas.txt, then records their version
(airportsdata-RELEASE), row counts and SHA-256 in manifest.json (scripts/data-manifest.py), which calwatch checks
every file against when it loads it. Run again after an update:
    pip download airportsdata==20260905 --no-deps -d /tmp/airportsdata && cd /tmp/airportsdata && unzip -o *.whl
    python3 scripts/generate-airports.py /tmp/airportsdata/airportsdata
"""
import csv
import os
import sys

RELEASE = "20260905"
FOLDER = "Sources/CalWatchCore/Resources/data"


def clean(text: str) -> str:
    # The table is `|`-separated, one airport per line.
    return " ".join(text.replace("|", "/").split())


def main() -> None:
    folder = sys.argv[1] if len(sys.argv) > 1 else None
    if folder is None:
        import airportsdata  # type: ignore
        folder = os.path.dirname(airportsdata.__file__)
    airports = []
    with open(os.path.join(folder, "airports.csv"), newline="", encoding="utf-8") as file:
        for row in csv.DictReader(file):
            if len(row["iata"]) != 3 or not row["tz"]:
                continue
            airports.append("|".join([
                row["iata"], clean(row["name"]), clean(row["city"]), row["country"],
                f"{float(row['lat']):.3f}", f"{float(row['lon']):.3f}", row["tz"],
            ]))
    airports.sort()
    metros = []
    with open(os.path.join(folder, "iata_macs.csv"), newline="", encoding="utf-8") as file:
        for row in csv.DictReader(file):
            metros.append(f"{row['City Code']}|{clean(row['City Name'])}|{row['Airport Code']}")
    metros.sort()
    with open(os.path.join(FOLDER, "airports.txt"), "w", encoding="utf-8") as out:
        out.write("\n".join(airports) + "\n")
    with open(os.path.join(FOLDER, "metro-areas.txt"), "w", encoding="utf-8") as out:
        out.write("\n".join(metros) + "\n")
    print(f"{FOLDER}: {len(airports)} airports, {len(metros)} metropolitan-area entries")
    import subprocess
    subprocess.run([sys.executable, "scripts/data-manifest.py", "--version", f"airports=airportsdata-{RELEASE}",
                    "--version", f"metro-areas=airportsdata-{RELEASE}"], check=True)


if __name__ == "__main__":
    main()
