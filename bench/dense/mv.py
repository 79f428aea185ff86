"""Runs the multi-view comparison on the 8×8 digits: three views, the
image's top three rows (columns 0–23), middle two (24–39) and bottom three
(40–63). Fits, with k = 10,

  sf-multiview  streamfit fit multiview --views TOP;MIDDLE;BOTTOM
  sf-multiview-ojd  the same with --solver ojd
  kmeans        scikit-learn KMeans(n_clusters=k, n_init=10)
  sk-gmm        scikit-learn GaussianMixture(n_components=k) (full covariances)

under GNU time, and scores all with one rule: each row goes to the
component whose mean (the three views' conditional means put together)
is nearest, and the assignment is compared with the digit labels by the
adjusted Rand index, on the training rows and on the held-out rows. The
peers' own assignments (predict) are scored beside. Appends one JSON line
per fit to OUT/multiview.jsonl.

Usage: mv.py CACHE OUT   (env STREAMFIT, MV_KS="10")
"""
import json
import os
import subprocess
import sys

import numpy as np
from sklearn.metrics import adjusted_rand_score

here = os.path.dirname(os.path.abspath(__file__))
py = "/usr/bin/python3"
VIEWS = [list(range(0, 24)), list(range(24, 40)), list(range(40, 64))]


def timed(cmd, log):
    tf = log + ".time"
    with open(log, "w") as lf:
        rc = subprocess.call(["/usr/bin/time", "-o", tf, "-f", "%e %U %S %M"] + cmd, stdout=lf, stderr=lf)
    with open(tf) as f:
        e, u, s, m = (float(v) for v in f.read().strip().splitlines()[-1].split())
    return rc, e, u + s, m / 1024


def nearest(means, x):
    d2 = ((x[:, None, :] - means[None, :, :]) ** 2).sum(axis=2)
    return d2.argmin(axis=1)


def main():
    cache, out = sys.argv[1], sys.argv[2]
    sf = os.environ["STREAMFIT"]
    d = os.path.join(cache, "digits")
    train, test = np.load(os.path.join(d, "train.npy")), np.load(os.path.join(d, "test.npy"))
    ytr, yte = np.load(os.path.join(d, "labels.npy")), np.load(os.path.join(d, "test_labels.npy"))
    views = ";".join(",".join(str(c) for c in v) for v in VIEWS)
    res = open(os.path.join(out, "multiview.jsonl"), "a")
    for k in [int(v) for v in os.environ.get("MV_KS", "10").split()]:
        for meth in ("sf-multiview", "sf-multiview-ojd", "kmeans", "sk-gmm"):
            base = os.path.join(out, f"digits-mv-k{k}-{meth}")
            model = base + ".json"
            if meth.startswith("sf-multiview"):
                cmd = [sf, "fit", "multiview", "--input", os.path.join(d, "train.npy"), "--k", str(k), "--views", views, "--out", model, "--progress", "off"]
                if meth == "sf-multiview-ojd":
                    cmd += ["--solver", "ojd"]
            else:
                cmd = [py, os.path.join(here, "sk_cluster.py"), os.path.join(d, "train.npy"), os.path.join(d, "test.npy"), str(k), meth, model]
            rc, wall, cpu, rss = timed(cmd, base + ".log")
            row = {"set": "digits", "k": k, "method": meth, "rc": rc, "wall": wall, "cpu": cpu, "rss_mb": rss}
            if rc == 0:
                with open(model) as f:
                    m = json.load(f)
                if meth.startswith("sf-multiview"):
                    means = np.zeros((k, 64))
                    for t, cols in enumerate(m["views"]):
                        means[:, cols] = np.asarray(m["means"][t])
                    row["warnings"] = m.get("stats", {}).get("warnings")
                else:
                    means = np.asarray(m["means"])
                    row["ari_own_train"] = adjusted_rand_score(ytr, m["train_labels"])
                    row["ari_own_test"] = adjusted_rand_score(yte, m["test_labels"])
                    row["fit_cpu_seconds"] = m["fit_cpu_seconds"]
                row["ari_train"] = adjusted_rand_score(ytr, nearest(means, train))
                row["ari_test"] = adjusted_rand_score(yte, nearest(means, test))
            else:
                with open(base + ".log") as f:
                    row["error"] = f.read().strip().splitlines()[-1:]
            print(json.dumps(row), file=res, flush=True)
            print(json.dumps(row), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
