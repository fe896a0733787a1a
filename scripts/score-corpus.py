#!/usr/bin/env python3
"""Scores `calwatch scan` on calendar items written outside the project, by producer and by language.

    scripts/score-corpus.py CALWATCH [--outside DIR] [--public DIR] [--show N] [--by producer|lang|both]

--outside DIR  the labelled sets in the scorer's format (`set_a.py`, `set_b.py`, … beside a `run.py`; default
               ../shared/corpora): each written as a vdir, one .ics per item, as that `run.py` writes it.
--public DIR   real calendar files from other projects' tests (default Tests/CalWatchTests/Fixtures/corpus/public):
               each folder holds unchanged .ics files, an `expected.txt` and a SOURCE.md naming source and licence.

--write-fixtures DIR writes the --outside sets as labelled calendars for the tests and the fit instead.

Prints, per set and over all: precision, recall and F1 of "is a flight", the flight facts read right (code,
origin, destination), meetings read right (service and join link), false flights per 100 non-flights; then the
same per producer and per language, worst first. A producer is the section an item sits under in its set (Gmail
cards, TripIt, airline apps, …) or the folder's `producer=`; a language is the set's own tag where it gives one,
else what the item's words and script say.
"""
import argparse
import collections
import importlib
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCAN = ["scan", "--from", "2000-01-01T00:00:00Z", "--to", "2035-01-01T00:00:00Z"]

# A few words each language writes often, for telling Latin-script languages apart; scripts decide the others.
STOPWORDS = {
    "en": "the to from and your flight with for of on at in is departure arrival booking",
    "de": "der die das und nach von mit für flug abflug ankunft zum zur ihr buchung",
    "fr": "le la les et vers du pour vol départ arrivée avec votre réservation",
    "es": "el la los del para vuelo salida llegada su reserva",
    "pt": "os para voo partida chegada com sua reserva",
    "it": "il lo gli di del volo partenza arrivo prenotazione",
    "nl": "het en naar van met voor vlucht vertrek aankomst ophalen uw",
    "ca": "el la del vol sortida arribada amb",
    "da": "og fra med fly afgang ankomst din rejse",
    "sv": "och till från med för flyg avgång ankomst din resa",
    "no": "og fra med fly avreise ankomst din reise",
    "pl": "lot wylot przylot odlot twoja rezerwacja",
    "tr": "ve ile için uçuş kalkış varış rezervasyon",
    "id": "dan ke dari untuk penerbangan keberangkatan kedatangan dengan anda",
    "vi": "và đến từ cho chuyến bay khởi hành",
    "cs": "let odlet přílet rezervace",
    "fi": "ja lento lähtö saapuminen varaus",
}
SCRIPTS = [
    (re.compile(r"[\u3040-\u30ff]"), "ja"),
    (re.compile(r"[\uac00-\ud7af]"), "ko"),
    (re.compile(r"[\u4e00-\u9fff]"), "zh"),
    (re.compile(r"[\u0400-\u04ff]"), "ru"),
    (re.compile(r"[\u0600-\u06ff]"), "ar"),
    (re.compile(r"[\u0590-\u05ff]"), "he"),
    (re.compile(r"[\u0370-\u03ff]"), "el"),
    (re.compile(r"[\u0e00-\u0e7f]"), "th"),
    (re.compile(r"[\u0900-\u097f]"), "hi"),
]


def language(text):
    for pattern, lang in SCRIPTS:
        if pattern.search(text):
            return lang
    words = collections.Counter(re.findall(r"[^\W\d_]+", text.lower()))
    scores = {lang: sum(words[w] for w in ws.split()) for lang, ws in STOPWORDS.items()}
    best = max(scores, key=scores.get)
    return best if scores[best] > 0 else "en"


def outside_sets(folder):
    """Each set's items with their producer (the `# ---- … ----` section they sit under) and language."""
    sys.path.insert(0, folder)
    source = open(os.path.join(folder, "run.py"), encoding="utf-8").read()
    # run.py runs its main() on import: take only its ICS writer.
    namespace = {"__file__": os.path.join(folder, "run.py"), "__name__": "corpus_run"}
    exec(source.split("def main():")[0], namespace)
    sets = []
    for name in sorted(f[:-3] for f in os.listdir(folder) if re.fullmatch(r"set_\w+\.py", f)):
        module = importlib.import_module(name)
        text = open(os.path.join(folder, name + ".py"), encoding="utf-8").read()
        section, producers = "other", {}
        for line in text.splitlines():
            header = re.match(r"#\s*[-=]{2,}\s*(.+?)\s*[-=]{2,}", line)
            if header:
                section = header.group(1)
            for uid in re.findall(r'id="([^"]+)"', line):
                producers.setdefault(uid, section)
        items = []
        for case in module.CASES + module.MEETING_CASES:
            words = " ".join(case.get(k, "") for k in ("summary", "location", "description"))
            items.append(
                dict(
                    id=case["id"], ics=namespace["ics"](case), expect=case["expect"], set=name,
                    producer=producers.get(case["id"], "other"), lang=case.get("lang") or language(words),
                    meeting=case in module.MEETING_CASES))
        sets.append((name, items))
    return sets


def public_sets(folder):
    sets = []
    for name in sorted(os.listdir(folder)):
        expected = os.path.join(folder, name, "expected.txt")
        if not os.path.exists(expected):
            continue
        items = []
        for line in open(expected, encoding="utf-8"):
            if not line.strip() or line.startswith("#"):
                continue
            file, summary, labels = line.rstrip("\n").split("|")
            e = dict(kv.split("=", 1) for kv in labels.split(";"))
            if "destination" in e:
                e["dest"] = e.pop("destination")
            items.append(
                dict(
                    id=f"{file}:{summary}", file=os.path.join(folder, name, file), summary=summary, expect=e,
                    set=name, producer=e.get("producer", name), lang=e.get("lang", "en"),
                    meeting=e["kind"] == "meeting"))
        sets.append((name, items))
    return sets


def scan(binary, folder):
    p = subprocess.run([binary] + SCAN[:1] + [folder] + SCAN[1:], capture_output=True, text=True, timeout=300)
    out = []
    for line in p.stdout.splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def results(binary, items):
    """What calwatch says of each item: one vdir for items with UIDs of their own, one folder per public file."""
    got = {}
    with tempfile.TemporaryDirectory() as d:
        vdir = os.path.join(d, "items")
        os.mkdir(vdir)
        for item in items:
            if "ics" in item:
                with open(os.path.join(vdir, item["id"] + ".ics"), "w", newline="", encoding="utf-8") as f:
                    f.write(item["ics"])
        for r in scan(binary, vdir):
            got.setdefault(r.get("uid"), r)
        for file in sorted({i["file"] for i in items if "file" in i}):
            for r in scan(binary, file):
                got.setdefault(f"{os.path.basename(file)}:{r.get('summary')}", r)
                got.setdefault(f"{os.path.basename(file)}:*", r)
    return got


def slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "other"


def write_fixtures(sets, folder):
    """Each set as one calendar of its items, each item labelled the way the test corpus is."""
    os.makedirs(folder, exist_ok=True)
    for name, items in sets:
        events = []
        for item in items:
            lines = item["ics"].split("\r\n")
            body = lines[lines.index("BEGIN:VEVENT"):lines.index("END:VEVENT")]
            e = item["expect"]
            labels = [f"kind={e['kind']}"]
            for key, field in (("code", "code"), ("origin", "origin"), ("dest", "destination"), ("service", "service")):
                if e.get(key):
                    labels.append(f"{field}={e[key]}")
            stretch = [{"dest": "destination"}.get(k, k) for k in e.get("stretch", [])]
            if stretch:
                labels.append("stretch=" + ",".join(stretch))
            if item["meeting"]:
                labels.append("counted=meeting")
            body.append("X-CALWATCH-EXPECT:" + ";".join(labels))
            if e.get("url"):
                body.append("X-CALWATCH-EXPECT-JOIN:" + e["url"])
            body.append(f"X-CALWATCH-SHAPE:{name}-{slug(item['producer'])};lang={item['lang']}")
            events += body + ["END:VEVENT"]
        text = "\r\n".join(["BEGIN:VCALENDAR", "VERSION:2.0", f"PRODID:-//corpora//{name}//EN"] + events
                            + ["END:VCALENDAR"]) + "\r\n"
        with open(os.path.join(folder, name.replace("_", "-") + ".ics"), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        print(f"{folder}/{name.replace('_', '-')}.ics: {len(items)} items")


class Tally:
    def __init__(self):
        self.tp = self.fp = self.fn = self.negatives = 0
        self.fields_ok = self.fields = self.meetings_ok = self.meetings = 0

    def add(self, item, r, misses):
        e, r = item["expect"], r or {}
        kind, flight, meeting = r.get("kind"), r.get("flight") or {}, r.get("meeting") or {}
        if e["kind"] == "flight":
            if kind == "flight":
                self.tp += 1
            else:
                self.fn += 1
                misses.append(f"{item['id']}: expected flight, got {kind}")
            for key, field in (("code", "code"), ("origin", "origin"), ("dest", "destination")):
                if key in e.get("stretch", []) or e.get(key) in (None, ""):
                    continue
                self.fields += 1
                if flight.get(field) == e[key]:
                    self.fields_ok += 1
                else:
                    misses.append(f"{item['id']}: flight.{field} expected {e[key]!r}, got {flight.get(field)!r}")
        else:
            self.negatives += 1
            if kind == "flight":
                self.fp += 1
                misses.append(f"{item['id']}: false flight {flight.get('code')!r}")
        if item["meeting"] or e["kind"] == "meeting":
            self.meetings += 1
            ok = kind == e["kind"]
            if "url" in e:
                ok = ok and meeting.get("joinURL") == e["url"]
            if "service" in e:
                ok = ok and (
                    meeting.get("service") == e["service"] or {meeting.get("service"), e["service"]} == {"zoom", "zoomgov"})
            self.meetings_ok += ok
            if not ok:
                misses.append(
                    f"{item['id']}: expected {e['kind']} {e.get('service')} {e.get('url')}, "
                    f"got {kind} {meeting.get('service')} {meeting.get('joinURL')}")

    def figures(self):
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0
        f1 = 2 * p * r / (p + r) if p + r else 0.0
        return p, r, f1

    def line(self, label, n):
        p, r, f1 = self.figures()
        facts = f"{self.fields_ok / self.fields:.3f}" if self.fields else "  -  "
        meetings = f"{self.meetings_ok / self.meetings:.3f}" if self.meetings else "  -  "
        false = f"{100 * self.fp / self.negatives:4.1f}" if self.negatives else "  - "
        flights = self.tp + self.fn
        return (f"{label[:34]:34} {n:4} {flights:4} {p:6.3f} {r:6.3f} {f1:6.3f} {facts:>6} {meetings:>6} "
                f"{false:>6}")


HEADER = f"{'':34} {'items':>4} {'fl.':>4} {'P':>6} {'R':>6} {'F1':>6} {'facts':>6} {'meet.':>6} {'FP/100':>6}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--outside", default=os.path.join(HERE, "..", "..", "shared", "corpora"))
    ap.add_argument("--public", default=os.path.join(HERE, "..", "Tests", "CalWatchTests", "Fixtures", "corpus", "public"))
    ap.add_argument("--show", type=int, default=40, help="misses to print")
    ap.add_argument("--by", choices=["producer", "lang", "both", "none"], default="both")
    ap.add_argument("--write-fixtures", metavar="DIR",
                    help="write the --outside sets as labelled calendars (X-CALWATCH-EXPECT, X-CALWATCH-SHAPE) into DIR")
    a = ap.parse_args()
    if a.write_fixtures:
        write_fixtures(outside_sets(os.path.abspath(a.outside)), a.write_fixtures)
        return
    sets = []
    if os.path.isdir(a.outside):
        sets += outside_sets(os.path.abspath(a.outside))
    if os.path.isdir(a.public):
        sets += public_sets(os.path.abspath(a.public))
    everything = [i for _, items in sets for i in items]
    got = results(os.path.abspath(a.binary), everything)
    misses, total = [], Tally()
    per = {"set": collections.defaultdict(Tally), "producer": collections.defaultdict(Tally),
           "lang": collections.defaultdict(Tally)}
    counts = {k: collections.Counter() for k in per}
    for item in everything:
        r = got.get(item["id"]) or got.get(item["id"].split(":")[0] + ":*") if "file" in item else got.get(item["id"])
        total.add(item, r, misses)
        for key, value in (("set", item["set"]), ("producer", f"{item['set']}/{item['producer']}"), ("lang", item["lang"])):
            per[key][value].add(item, r, [])
            counts[key][value] += 1
    for m in misses[: a.show]:
        print("  " + m)
    print(HEADER)
    for name, tally in per["set"].items():
        print(tally.line(name, counts["set"][name]))
    print(total.line("all", len(everything)))
    for key in ("producer", "lang"):
        if a.by not in (key, "both"):
            continue
        print(f"\nby {'producer' if key == 'producer' else 'language'}, worst first\n{HEADER}")
        for name, tally in sorted(per[key].items(), key=lambda kv: (kv[1].figures()[2], kv[0])):
            print(tally.line(name, counts[key][name]))


main()
