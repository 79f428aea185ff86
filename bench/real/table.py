"""Prints the bench/real table from the run records (*.json) in a directory."""
import glob
import json
import os
import sys

ORDER = {"gensim-1": 0, "gensim-5": 1, "sklearn-batch": 2, "sklearn-online": 3, "sf-spectral": 4, "sf-default": 5}
CORPUS = {"spam": 0, "debian": 1}


def fmt(r, key, spec):
    v = r.get(key)
    return "–" if v is None else format(v, spec)


def main():
    recs = []
    for p in glob.glob(os.path.join(sys.argv[1], "*-k*-*.json")):
        with open(p) as f:
            r = json.load(f)
        if "method" in r:
            recs.append(r)
    recs.sort(key=lambda r: (CORPUS.get(r["corpus"], 9), r["corpus"], r["k"], ORDER.get(r["method"], 9)))
    print("| corpus | k | model | held-out perplexity | UMass | NPMI | diversity | wall s | CPU s | peak RSS MB |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in recs:
        head = "| %s | %d | %s |" % (r["corpus"], r["k"], r["method"])
        if r.get("status") != "ok":
            print(head + " failed: %s | | | | | | |" % str(r.get("error", "")).replace("|", "/")[:160])
            continue
        print(head + " %s | %s | %s | %s | %s | %s | %s |" % (
            fmt(r, "perplexity", ".0f"), fmt(r, "umass", ".3f"), fmt(r, "npmi", ".3f"),
            fmt(r, "diversity", ".2f"), fmt(r, "wall", ".1f"), fmt(r, "cpu", ".1f"), fmt(r, "rss_mb", ".0f")))
    targets(recs)
    peers(recs)


def targets(recs):
    """Prints, per corpus and k, the issue's targets: the default fit's
    held-out perplexity, diversity and CPU seconds against gensim's 5
    passes, and the spectral fit's CPU seconds against gensim's 1 pass."""
    by = {}
    for r in recs:
        if r.get("status") == "ok":
            by[(r["corpus"], int(r["k"]), r["method"])] = r
    keys = sorted({(c, k) for c, k, _ in by}, key=lambda ck: (CORPUS.get(ck[0], 9), ck[0], ck[1]))
    print()
    print("| corpus | k | perplexity sf-default / gensim-5 (≤ 0.95) | diversity sf-default vs gensim-5 (≥) "
          "| CPU sf-default / gensim-5 (≤ 0.1) | CPU sf-spectral / gensim-1 (≤ 0.05) |")
    print("|---|---:|---:|---:|---:|---:|")

    def ratio(a, b, key, spec):
        if a is None or b is None or a.get(key) is None or not b.get(key):
            return "–"
        return format(a[key] / b[key], spec)

    for c, k in keys:
        d, g5 = by.get((c, k, "sf-default")), by.get((c, k, "gensim-5"))
        s, g1 = by.get((c, k, "sf-spectral")), by.get((c, k, "gensim-1"))
        div = "–"
        if d and g5 and d.get("diversity") is not None and g5.get("diversity") is not None:
            div = "%.2f vs %.2f" % (d["diversity"], g5["diversity"])
        print("| %s | %d | %s | %s | %s | %s |" % (c, k, ratio(d, g5, "perplexity", ".2f"), div,
                                               ratio(d, g5, "cpu", ".3f"), ratio(s, g1, "cpu", ".3f")))


def peers(recs):
    """Prints, per corpus and k where scikit-learn ran, the default fit's
    held-out perplexity and CPU seconds against each of its methods."""
    by = {(r["corpus"], int(r["k"]), r["method"]): r for r in recs if r.get("status") == "ok"}
    methods = sorted({m for _, _, m in by if m.startswith("sklearn-")}, key=lambda m: ORDER.get(m, 9))
    keys = sorted({(c, k) for c, k, m in by if m in methods}, key=lambda ck: (CORPUS.get(ck[0], 9), ck[0], ck[1]))
    if not keys:
        return
    print()
    print("| corpus | k | " + " | ".join("perplexity sf-default / %s | CPU sf-default / %s" % (m, m) for m in methods) + " |")
    print("|---|---:|" + "---:|---:|" * len(methods))
    for c, k in keys:
        d = by.get((c, k, "sf-default"))
        cells = []
        for m in methods:
            p = by.get((c, k, m))
            for key in ("perplexity", "cpu"):
                ok = d is not None and p is not None and d.get(key) is not None and p.get(key)
                cells.append(format(d[key] / p[key], ".3f") if ok else "–")
        print("| %s | %d | %s |" % (c, k, " | ".join(cells)))


if __name__ == "__main__":
    main()
