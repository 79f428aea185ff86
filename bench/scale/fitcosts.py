#!/usr/bin/python3
"""Fits the plan's per-stage CPU constants to the costs calibrate.sh recorded.

Usage: bench/scale/fitcosts.py COSTS.tsv [COSTS.tsv ...]

Each stage of a default LDA fit is modelled as a sum of terms whose
coefficients are the constants of models/lda/plan.go (nanoseconds per unit):

  sketch pass (pass 1)     nnz, nnz*cols, docs
  power pass (later second-moment passes)   the same terms, times powerPassSlow
  third-moment pass        nnz, nnz*k, docs, docs*k*k*(k+1)/3 (the cubes)
  EM pass over all         nnz*k, nnz, docs*k, nnz (decoding, when it reads the source)
  EM pass on the sample    the same, over the sample and the held-out sample

The coefficients are fitted by non-negative least squares on the relative
error (each stage's equation divided by its measured seconds), and the
ratio predicted/measured of every stage and of every whole fit is printed,
so the spread the constants leave is seen. cols is k + 10 (the default
oversampling). The sample's rate of an EM pass on it is min(1, 2^22 /
tokens), the default EM.Sample.
"""
import csv
import sys
from collections import defaultdict

import numpy as np
from scipy.optimize import nnls

SAMPLE = 1 << 22
HELD = 0.25


def rows(paths):
    for p in paths:
        with open(p) as f:
            for r in csv.DictReader(f, delimiter="\t"):
                yield r


def main(paths):
    fits = defaultdict(dict)
    for r in rows(paths):
        key = (r["corpus"], int(r["k"]))
        fits[key]["shape"] = tuple(float(r[c]) for c in ("d", "docs", "nnz", "tokens"))
        fits[key].setdefault("stages", []).append((r["stage"], float(r["cpu_seconds"])))
    eqs = defaultdict(list)  # class -> [(features, seconds, key)]
    for key, f in fits.items():
        d, n, z, tok = f["shape"]
        k = key[1]
        cols = k + 10
        rate = min(1.0, SAMPLE / tok)
        seconds = defaultdict(float)
        count = defaultdict(int)
        for stage, s in f["stages"]:
            kind = stage.split("-", 1)[1] if stage.startswith("pass") else stage
            if stage.startswith("pass1-"):
                kind = "sketch"
            seconds[kind] += s
            count[kind] += 1
        for kind in seconds:
            per = seconds[kind] / count[kind]
            if kind == "sketch":
                eqs["pair"].append(([z, z * cols, n], per, key))
            elif kind == "second-moment":
                eqs["power"].append(([z, z * cols, n], per, key))
            elif kind == "third-moment":
                eqs["third"].append(([z, z * k, n, n * k * k * (k + 1) / 3], per, key))
            elif kind == "em":
                # The first pass of an unsampled corpus reads the source, the
                # others its copy in memory; a sampled corpus's read it.
                src = 1.0 if rate < 1 else 1.0 / count[kind]
                eqs["em"].append(([z * k, z, n * k, z * src], per, key))
            elif kind == "em-sample":
                s = rate * (1 + HELD)
                eqs["em"].append(([z * k * s, z * s, n * k * s, z * rate / count[kind]], per, key))
            elif kind == "em-sample-half":
                # A pass on the sample's first half (models/lda/em_sample.go).
                s = rate * (0.5 + HELD)
                eqs["em"].append(([z * k * s, z * s, n * k * s, 0], per, key))
    names = {
        "pair": ["nsPerNNZ", "nsPerNNZCol", "nsPerDoc"],
        "power": ["nsPerNNZ(power)", "nsPerNNZCol(power)", "nsPerDoc(power)"],
        "third": ["nsPerNNZ(3)", "nsPerNNZK", "nsPerDoc(3)", "ns per cube flop"],
        "em": ["emNSPerNNZK", "emNSPerNNZ", "emNSPerDocK", "nsDecode"],
    }
    for cls, e in eqs.items():
        a = np.array([[x / s for x in feats] for feats, s, _ in e])
        b = np.ones(len(e))
        coef, _ = nnls(a, b)
        print(f"{cls}: " + ", ".join(f"{nm} {c * 1e9:.4g}" for nm, c in zip(names[cls], coef)))
        ratios = sorted((float(np.dot(coef, feats)) / s, key) for feats, s, key in e)
        for rt, key in ratios:
            print(f"    {rt:6.2f}  {key[0]} k={key[1]}")


if __name__ == "__main__":
    main(sys.argv[1:])
