"""Prints the markdown tables of a run: the GMM comparison (results.jsonl
of gmm.py: per data set and k, each method's held-out average
log-likelihood per sample, higher is better, CPU seconds and peak RSS,
and its CPU time as a multiple of scikit-learn's fit of the same
covariance type in the same run), and, when their files are beside it,
the ICA (ica.jsonl) and multi-view (multiview.jsonl) comparisons.

Usage: table.py RESULTS.jsonl
"""
import json
import os
import sys


def main():
    rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
    print("| data set | k | method | held-out log-lik / sample | CPU s (sklearn: fit alone) | × sklearn CPU (× its fit alone) | peak RSS MB |")
    print("|---|---:|---|---:|---:|---:|---:|")
    seen = []
    for r in rows:
        key = (r["set"], r["k"])
        if key not in seen:
            seen.append(key)
    for name, k in seen:
        group = [r for r in rows if (r["set"], r["k"]) == (name, k)]
        cpu = {r["method"]: r["cpu"] for r in group if r["rc"] == 0}
        fit = {r["method"]: r["fit_cpu_seconds"] for r in group if "fit_cpu_seconds" in r}
        for r in group:
            # The peer of the same covariance type: a variance per feature
            # for the diagonal fits, per component for the others.
            peer = "sk-diag" if r["method"].endswith("diag") else "sk-spherical"
            ref, ref_fit = cpu.get(peer), fit.get(peer)
            if r["rc"] != 0 and r["method"].startswith("sf-em"):
                score = "failed: " + (r.get("error") or ["?"])[0]
            elif r["rc"] != 0:
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
            if ratio and ref_fit and not r["method"].startswith("sk-"):
                ratio += f" ({r['cpu'] / ref_fit:.2f})"
            c = f"{r['cpu']:.2f}"
            if "fit_cpu_seconds" in r:
                c += f" ({r['fit_cpu_seconds']:.2f})"
            print(f"| {name} | {k} | {r['method']} | {score} | {c} | {ratio} | {r['rss_mb']:.0f} |")


def ica(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    print()
    print("| speech mixture (K sources × D mixtures, rows) | method | Amari index | recovered kurtosis (sources') | CPU s | × FastICA CPU | peak RSS MB |")
    print("|---|---|---:|---|---:|---:|---:|")
    for r in rows:
        ref = next((q["cpu"] for q in rows if q["case"] == r["case"] and q["method"] == "fastica" and q["rc"] == 0), None)
        name = f"{r['k']} × {r['d']}, {r['rows']}"
        if r["rc"] != 0:
            print(f"| {name} | {r['method']} | failed: {(r.get('error') or ['?'])[0]} | | {r['cpu']:.2f} | | {r['rss_mb']:.0f} |")
            continue
        kurt = ", ".join(f"{v:.1f}" for v in r["kurtosis"]) + " (" + ", ".join(f"{v:.1f}" for v in r["sources_kurtosis"]) + ")"
        ratio = f"{r['cpu'] / ref:.2f}" if ref else ""
        print(f"| {name} | {r['method']} | {r['amari']:.4f} | {kurt} | {r['cpu']:.2f} | {ratio} | {r['rss_mb']:.0f} |")


def multiview(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    print()
    print("| digits, k | method | ARI train (nearest mean) | ARI held out (nearest mean) | ARI held out (own predict) | CPU s | × k-means CPU | peak RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ref = next((q["cpu"] for q in rows if q["k"] == r["k"] and q["method"] == "kmeans" and q["rc"] == 0), None)
        if r["rc"] != 0:
            print(f"| {r['k']} | {r['method']} | failed: {(r.get('error') or ['?'])[0]} | | | {r['cpu']:.2f} | | {r['rss_mb']:.0f} |")
            continue
        own = f"{r['ari_own_test']:.3f}" if "ari_own_test" in r else ""
        ratio = f"{r['cpu'] / ref:.2f}" if ref else ""
        print(f"| {r['k']} | {r['method']} | {r['ari_train']:.3f} | {r['ari_test']:.3f} | {own} | {r['cpu']:.2f} | {ratio} | {r['rss_mb']:.0f} |")


def hmm(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    print()
    print("| characters (train / held out), k | method | held-out log-lik / character | floored at 1e-6 | CPU s (pomegranate: fit alone) | × pomegranate CPU | peak RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        ref = next((q["cpu"] for q in rows if q["k"] == r["k"] and q["method"] == "pomegranate" and q["rc"] == 0), None)
        name = f"{r['train_chars']} / {r['test_chars']}, {r['k']}"
        if r["rc"] != 0:
            print(f"| {name} | {r['method']} | failed: {(r.get('error') or ['?'])[0]} | | {r['cpu']:.2f} | | {r['rss_mb']:.0f} |")
            continue
        fl = f"{r['loglik_floored']:.4f}" if "loglik_floored" in r else ""
        c = f"{r['cpu']:.2f}" + (f" ({r['fit_cpu_seconds']:.2f})" if "fit_cpu_seconds" in r else "")
        ratio = f"{r['cpu'] / ref:.3f}" if ref else ""
        print(f"| {name} | {r['method']} | {r['loglik']:.4f} | {fl} | {c} | {ratio} | {r['rss_mb']:.0f} |")


if __name__ == "__main__":
    if os.path.exists(sys.argv[1]):  # absent when the GMM part did not run
        main()
    d = os.path.dirname(os.path.abspath(sys.argv[1]))
    if os.path.exists(os.path.join(d, "ica.jsonl")):
        ica(os.path.join(d, "ica.jsonl"))
    if os.path.exists(os.path.join(d, "multiview.jsonl")):
        multiview(os.path.join(d, "multiview.jsonl"))
    if os.path.exists(os.path.join(d, "hmm.jsonl")):
        hmm(os.path.join(d, "hmm.jsonl"))
