#!/usr/bin/env python3
"""Fits the flight decision's weights (Sources/CalWatchCore/Resources/data/flight-weights.txt) on the labelled corpus.

    make fit-flights          # exports the features, then runs this
    python3 scripts/fit-flight-weights.py FEATURES.jsonl [--write]

FEATURES.jsonl has one line per labelled item outside the fifth held back (`FlightFeatureExport` in the tests
writes it): whether it is a flight, the features calwatch's scan found (none when nothing hinted at a flight, or
when its times are implausible for a flight: the weights never see such an item, which stays "not a flight"), and
how many of a flight's seven fields it read
right. The decision is a logistic regression with an L2 penalty pulling each weight towards its prior (−4 for a veto, 0 else), fitted by Newton's method; an item
is a flight when the bias and its features' weights add up to more than zero.

Prints five-fold cross-validated precision, recall, F1, false flights per 100 non-flights and field accuracy for
each penalty tried; then, with the chosen penalty, the same figures with each whole producer and each whole language
left out of the fit and scored alone (an item's `X-CALWATCH-SHAPE` names both; items without one are grouped by
file); then fits the chosen penalty on every item; --write writes the weights and the manifest.
"""

import json
import math
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WEIGHTS = os.path.join(HERE, "..", "Sources", "CalWatchCore", "Resources", "data", "flight-weights.txt")
PENALTIES = [0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
FOLDS = 5


def solve(matrix, vector):
    """Gaussian elimination with partial pivoting: the Newton step."""
    n = len(vector)
    a = [row[:] + [vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        a[col], a[pivot] = a[pivot], a[col]
        if abs(a[col][col]) < 1e-12:
            continue
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            if f:
                for c in range(col, n + 1):
                    a[r][c] -= f * a[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        if abs(a[r][r]) < 1e-12:
            continue
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x


# What a feature means before any item is seen: a veto, or attendees that leave the user out, stand against a
# flight. The penalty pulls each weight towards its prior, not towards zero, so a veto whose examples are all left
# out (a whole producer of look-alikes nobody labelled yet) still counts against a flight instead of for nothing.
VETO_PRIOR = -4.0


def prior(name):
    return VETO_PRIOR if name.startswith("veto-") or name == "attendees-not-you" else 0.0


def fit(items, names, penalty):
    """Bias first, then one weight per name; items are (set of feature indices, label)."""
    n = len(names) + 1
    priors = [0.0] + [prior(name) for name in names]
    w = priors[:]
    for _ in range(50):
        gradient = [0.0] * n
        hessian = [[0.0] * n for _ in range(n)]
        for features, label in items:
            active = [0] + [i + 1 for i in features]
            z = sum(w[i] for i in active)
            p = 1 / (1 + math.exp(-max(-35, min(35, z))))
            g, h = p - label, p * (1 - p)
            for i in active:
                gradient[i] += g
                row = hessian[i]
                for j in active:
                    row[j] += h
        for i in range(1, n):
            gradient[i] += penalty * (w[i] - priors[i])
            hessian[i][i] += penalty
        hessian[0][0] += 1e-6
        step = solve(hessian, gradient)
        w = [wi - si for wi, si in zip(w, step)]
        if max(abs(s) for s in step) < 1e-7:
            break
    return w


def score(w, features):
    return w[0] + sum(w[i + 1] for i in features)


def figures(predictions):
    """predictions: (is flight, said flight, fields right, fields) per item."""
    tp = sum(1 for f, s, _, _ in predictions if f and s)
    fp = sum(1 for f, s, _, _ in predictions if not f and s)
    fn = sum(1 for f, s, _, _ in predictions if f and not s)
    negatives = sum(1 for f, _, _, _ in predictions if not f)
    right = sum(r for f, s, r, _ in predictions if f and s)
    total = sum(t for f, s, _, t in predictions if f and s)
    precision = tp / max(1, tp + fp)
    recall = tp / max(1, tp + fn)
    return {
        "precision": precision, "recall": recall, "f1": 2 * precision * recall / max(1e-9, precision + recall),
        "false per 100": 100 * fp / max(1, negatives), "fields": right / max(1, total), "tp": tp, "fp": fp, "fn": fn,
    }


def left_out_groups(rows, seen, unseen, names, penalty, key):
    """Each group's predictions by weights fitted without it."""
    groups = sorted({row.get(key) or "-" for row in rows})
    per_group = {}
    for group in groups:
        train = [(f, y) for f, y, row in seen if (row.get(key) or "-") != group]
        w = fit(train, names, penalty)
        predictions = [(row["flight"], False, 0, 0) for row in unseen if (row.get(key) or "-") == group]
        for features, label, row in seen:
            if (row.get(key) or "-") == group:
                predictions.append((bool(label), score(w, features) > 0, row.get("fieldsRight", 0), row.get("fields", 0)))
        per_group[group] = predictions
    return per_group


def left_out(rows, seen, unseen, names, penalty, key, title):
    """Leave-one-group-out: the weights fitted without a whole producer (or language), scored on it alone."""
    per_group = left_out_groups(rows, seen, unseen, names, penalty, key)
    groups = list(per_group)
    everything = [p for predictions in per_group.values() for p in predictions]
    r = figures(everything)
    print(f"\nLeave one {title} out ({len(groups)} groups, penalty {penalty}): precision {r['precision']:.3f}, "
          f"recall {r['recall']:.3f}, F1 {r['f1']:.3f}, false flights per 100 non-flights {r['false per 100']:.1f}, "
          f"fields right {r['fields']:.3f}")
    print(f"| {title} | items | flights | precision | recall | F1 | false per 100 | fields right |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    ranked = sorted(per_group.items(), key=lambda kv: (figures(kv[1])["f1"] if any(f for f, *_ in kv[1]) else 1.0, kv[0]))
    for group, predictions in ranked:
        g = figures(predictions)
        flights = sum(1 for f, *_ in predictions if f)
        f1 = f"{g['f1']:.3f}" if flights else "–"
        print(f"| {group} | {len(predictions)} | {flights} | {g['precision']:.3f} | {g['recall']:.3f} | {f1} "
              f"| {g['false per 100']:.1f} | {g['fields']:.3f} |")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8") if line.strip()]
    names = sorted({name for row in rows for name in row.get("features") or []})
    index = {name: i for i, name in enumerate(names)}
    # Items the decision sees, and the rest (always "not a flight").
    seen = [(frozenset(index[n] for n in row["features"]), 1 if row["flight"] else 0, row) for row in rows if "features" in row]
    unseen = [row for row in rows if "features" not in row]
    flights = sum(1 for row in rows if row["flight"])
    print(f"{len(rows)} labelled items ({flights} flights), {len(seen)} with flight evidence, {len(names)} features")

    rng = random.Random(2611)
    order = list(range(len(seen)))
    rng.shuffle(order)
    fold_of = {item: position % FOLDS for position, item in enumerate(order)}
    results = {}
    print(f"\n{FOLDS}-fold cross-validation (the items without evidence count as said 'not a flight'):")
    print("| L2 penalty | precision | recall | F1 | false flights per 100 non-flights | fields right | fit time |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for penalty in PENALTIES:
        predictions = [(row["flight"], False, 0, 0) for row in unseen]
        started = time.monotonic()
        for fold in range(FOLDS):
            train = [(f, y) for k, (f, y, _) in enumerate(seen) if fold_of[k] != fold]
            w = fit(train, names, penalty)
            for k, (features, label, row) in enumerate(seen):
                if fold_of[k] == fold:
                    said = score(w, features) > 0
                    predictions.append((bool(label), said, row.get("fieldsRight", 0), row.get("fields", 0)))
        elapsed = (time.monotonic() - started) / FOLDS
        r = figures(predictions)
        results[penalty] = r
        print(f"| {penalty} | {r['precision']:.3f} | {r['recall']:.3f} | {r['f1']:.3f} | {r['false per 100']:.1f} "
              f"| {r['fields']:.3f} | {elapsed:.2f} s |")
    # Chosen by how well weights fitted without a whole producer decide that producer's items: what a calendar from
    # a producer nobody labelled meets. Random folds of one generator's items would favour the least penalty.
    by_producer = {}
    for penalty in PENALTIES:
        groups = left_out_groups(rows, seen, unseen, names, penalty, "shape")
        by_producer[penalty] = figures([p for predictions in groups.values() for p in predictions])
    print("\nLeave one producer out, by penalty: " + ", ".join(
        f"{p}: F1 {r['f1']:.3f}, {r['false per 100']:.1f} false per 100" for p, r in by_producer.items()))
    chosen = max(PENALTIES, key=lambda p: (round(by_producer[p]["f1"], 3), -by_producer[p]["false per 100"], p))
    for key, title in (("shape", "producer"), ("lang", "language")):
        left_out(rows, seen, unseen, names, chosen, key, title)
    started = time.monotonic()
    w = fit([(f, y) for f, y, _ in seen], names, chosen)
    elapsed = time.monotonic() - started
    r = results[chosen]
    print(f"\nchosen penalty {chosen}; the fit on all {len(seen)} items took {elapsed:.2f} s")
    weights = sorted(zip(names, w[1:]), key=lambda pair: -abs(pair[1]))
    for name, value in weights:
        print(f"  {name:32} {value:+.2f}")
    print(f"  {'bias':32} {w[0]:+.2f}")
    if "--write" not in sys.argv:
        return
    files = sorted({row["file"] for row in rows})
    with open(WEIGHTS, "w", encoding="utf-8") as out:
        out.write("# The flight decision's weights: an item is a flight when bias + the weights of its features > 0.\n")
        out.write(f"# Fitted by scripts/fit-flight-weights.py (make fit-flights), L2 penalty {chosen}, on {len(rows)} "
                  f"labelled items ({flights} flights) of Tests/CalWatchTests/Fixtures/{', '.join(files)}.\n")
        out.write(f"# {FOLDS}-fold cross-validated: precision {r['precision']:.3f}, recall {r['recall']:.3f}, F1 {r['f1']:.3f}, "
                  f"fields right {r['fields']:.3f}, false flights {r['false per 100']:.1f} per 100 non-flights.\n")
        out.write(f"bias|{w[0]:.3f}\n")
        for name, value in sorted(zip(names, w[1:])):
            out.write(f"{name}|{value:.3f}\n")
    subprocess.run([sys.executable, os.path.join(HERE, "data-manifest.py")], check=True, cwd=os.path.join(HERE, ".."))


if __name__ == "__main__":
    main()
