"""Prints the markdown table of a GMM run (results.jsonl of gmm.py): per
data set and k, each method's held-out average log-likelihood per sample
(higher is better), CPU seconds and peak RSS, and its CPU time as a
multiple of scikit-learn's spherical fit in the same run.

Usage: table.py RESULTS.jsonl
"""
import json
import sys


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    print("| data set | k | method | held-out log-lik / sample | CPU s | × sk-spherical CPU | peak RSS MB |")
    print("|---|---:|---|---:|---:|---:|---:|")
    seen = []
    for r in rows:
        key = (r["set"], r["k"])
        if key not in seen:
            seen.append(key)
    for name, k in seen:
        group = [r for r in rows if (r["set"], r["k"]) == (name, k)]
        ref = next((r["cpu"] for r in group if r["method"] == "sk-spherical" and r["rc"] == 0), None)
        for r in group:
            if r["rc"] != 0:
                msg = (r.get("error") or ["failed"])[0]
                msg = msg.split("streamfit fit: ")[-1]
                score = f"refused: {msg}"
            elif r.get("loglik") is not None:
                score = f"{r['loglik']:.3f}"
            else:
                score = f"no density ({r.get('invalid')})"
                if "repaired" in r:
                    score += f"; repaired ({r['valid_components']} of {r['k']} components): {r['repaired']:.3f}"
            ratio = f"{r['cpu'] / ref:.2f}" if ref and r["rc"] == 0 else ""
            print(f"| {name} | {k} | {r['method']} | {score} | {r['cpu']:.2f} | {ratio} | {r['rss_mb']:.0f} |")


if __name__ == "__main__":
    main()
