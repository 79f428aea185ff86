"""Runs the GMM comparison: for each data set (data.py) and k, fits

  sf-common     streamfit fit gmm --em-passes 0  (the moment fit, one common variance)
  sf-differing  streamfit fit gmm --em-passes 0 --differing  (a variance per component)
  sf-default    streamfit fit gmm: the command line's default, the moment
                fit (common variance) refined by streamed EM passes
  sf-default-diag  streamfit fit gmm --covariance diag: the same passes
                fitting a variance per component and feature (as sk-diag)
  sk-spherical  scikit-learn GaussianMixture(covariance_type="spherical")
  sk-diag       scikit-learn GaussianMixture(covariance_type="diag")
  sf-em         emfit: the moment fit (differing variances), then streamed
                EM passes (a variance per component, as sk-spherical)
  sf-em-diag    emfit --diag: the same with a variance per feature (as sk-diag)

each under GNU time (user+system CPU seconds and peak RSS of the whole
process: Python's start and imports count for scikit-learn, reading the
file counts for both), scores every model with score.py on the held-out
rows, and appends one JSON line per fit to OUT/results.jsonl.

Usage: gmm.py CACHE OUT   (env STREAMFIT, EMFIT, SETS, KS, METHODS)
"""
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
py = "/usr/bin/python3"


def timed(cmd, log):
    """Runs cmd under GNU time; returns rc, wall, cpu, peak RSS (MB)."""
    tf = log + ".time"
    with open(log, "w") as lf:
        rc = subprocess.call(["/usr/bin/time", "-o", tf, "-f", "%e %U %S %M"] + cmd, stdout=lf, stderr=lf)
    with open(tf) as f:
        last = f.read().strip().splitlines()[-1].split()
    e, u, s, m = (float(v) for v in last)
    return rc, e, u + s, m / 1024


def main():
    cache, out = sys.argv[1], sys.argv[2]
    sf = os.environ["STREAMFIT"]
    sets = os.environ.get("SETS", "digits digits-pca10 pixels").split()
    ks = [int(k) for k in os.environ.get("KS", "5 10 20").split()]
    methods = os.environ.get("METHODS", "sf-common sf-differing sf-default sf-default-diag sf-em sf-em-diag sk-spherical sk-diag").split()
    res = open(os.path.join(out, "results.jsonl"), "a")
    for name in sets:
        train, test = (os.path.join(cache, name, f) for f in ("train.npy", "test.npy"))
        for k in ks:
            for meth in methods:
                base = os.path.join(out, f"{name}-k{k}-{meth}")
                model = base + ".json"
                if meth.startswith("sf-em"):
                    cmd = [os.environ["EMFIT"], "--input", train, "--k", str(k), "--out", model]
                    if meth == "sf-em-diag":
                        cmd.append("--diag")
                elif meth.startswith("sf-"):
                    cmd = [sf, "fit", "gmm", "--input", train, "--k", str(k), "--out", model, "--progress", "off"]
                    if meth == "sf-default-diag":
                        cmd += ["--covariance", "diag"]
                    elif meth != "sf-default":
                        cmd += ["--em-passes", "0"]
                    if meth == "sf-differing":
                        cmd.append("--differing")
                else:
                    cmd = [py, os.path.join(here, "sk_gmm.py"), train, str(k), meth[3:], model]
                if os.path.exists(model):
                    os.remove(model)
                rc, wall, cpu, rss = timed(cmd, base + ".log")
                row = {"set": name, "k": k, "method": meth, "rc": rc, "wall": wall, "cpu": cpu, "rss_mb": rss}
                if rc != 0 or not os.path.exists(model):
                    with open(base + ".log") as f:
                        row["error"] = f.read().strip().splitlines()[-1:]
                else:
                    sc = subprocess.run([py, os.path.join(here, "score.py"), model, test], capture_output=True, text=True, check=True)
                    row.update(json.loads(sc.stdout))
                    with open(model) as f:
                        st = json.load(f).get("stats", {})
                    for key in ("fit_cpu_seconds", "iterations", "converged", "warnings", "sigma2", "passes"):
                        if key in st:
                            row[key] = st[key]
                    with open(base + ".log") as f:
                        row["stderr"] = [l for l in f.read().splitlines() if l.startswith("emfit:")]
                print(json.dumps(row), file=res, flush=True)
                print(json.dumps(row), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
