"""Prints the bench/real table from the run records (*.json) in a directory."""
import glob
import json
import os
import sys

ORDER = {"gensim-1": 0, "gensim-5": 1, "sf-spectral": 2, "sf-default": 3}
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


if __name__ == "__main__":
    main()
