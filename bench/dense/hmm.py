"""Runs the HMM comparison on characters of real English text: the
Description-en fields of Debian bookworm main's Translation-en (as
bench/real/corpora.sh reads them), lower-cased, every character that is
not a letter a–z made a space, spaces collapsed, each description cut to
its first 200 characters; a sequence per description, 27 symbols. The
first HMM_DOCS descriptions (default 1000) in file order, every 10th held
out. Fits, for each k (default 2, 5, 10),

  sf-hmm       streamfit fit hmm --discrete --windows --em-passes 0 (the
               moment fit alone; an .npz of one-hot rows, x, and the
               description number, seq)
  sf-hmm-bw    hmmfit: the same moment fit, then Baum–Welch passes from it
               (hmm.Start, hmm.Refine; bench/dense/hmmfit)
  sf-hmm-default  streamfit fit hmm --discrete --windows: the command
               line's default, the same passes as hmmfit's
  sf-snapshot  streamfit fit hmm-snapshot --discrete: the HMM from
               unordered snapshots, each description (or, with
               HMM_WINDOW=w > 0, each window of w consecutive characters
               of a description; a last window of fewer than 3 dropped) a
               set of its characters in no order (its P as the
               transitions, its U as the emissions)
  sf-snapshot-gauss  the same without --discrete: the observations taken
               as vectors with spherical Gaussian noise, as before
               --discrete existed (not in the default methods)
  pomegranate  pomegranate's HiddenMarkovModel.from_samples(
               DiscreteDistribution, k, algorithm="baum-welch") (Debian
               python3-pomegranate 0.14)

under GNU time, and scores both with one scorer (the scaled forward
algorithm, numpy): held-out log-likelihood per character, from each
model's start distribution, transition and emission matrices (no end
state). A model that gives a held-out character probability 0 scores
−inf; the table then also gives the figure with every probability
floored at 10⁻⁶ and renormalised. Appends one JSON line per fit to
OUT/hmm.jsonl.

HMM_EM_PASSES=n gives sf-hmm-default --em-passes n (the runs' files then
named ...-sf-hmm-default-em<n>); HMM_CPUPROFILE=1 has every streamfit run
write a CPU profile beside its model (.pprof).

Usage: hmm.py CACHE OUT   (env STREAMFIT, HMMFIT, HMM_KS="2 5 10", HMM_DOCS=1000, HMM_WINDOW=0,
HMM_METHODS="sf-hmm sf-hmm-bw sf-hmm-default sf-snapshot pomegranate", HMM_EM_PASSES, HMM_CPUPROFILE)
"""
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
py = "/usr/bin/python3"
ALPHA = " abcdefghijklmnopqrstuvwxyz"


def descriptions(cache):
    d = os.path.join(cache, "debian")
    path = os.path.join(d, "descriptions.txt")
    if os.path.exists(path):
        return open(path).read().splitlines()
    lists = os.path.join(d, "lists")
    os.makedirs(os.path.join(lists, "partial"), exist_ok=True)
    subprocess.check_call(["apt-get", "update", "-qq", "-o", "Acquire::Languages=en", "-o", "Dir::State::Lists=" + lists])
    tr = sorted(glob.glob(os.path.join(lists, "*_dists_bookworm_main_i18n_Translation-en*")))
    text = subprocess.check_output(["/usr/lib/apt/apt-helper", "cat-file", tr[0]]).decode("utf-8", "replace")
    docs, seen, cur = [], set(), None

    def flush():
        if cur is not None:
            t = " ".join(" ".join(cur).split())
            if t and t not in seen:
                seen.add(t)
                docs.append(t)
    for line in text.splitlines():
        if line.startswith("Description-en:"):
            flush()
            cur = [line[len("Description-en:"):]]
        elif line.startswith(" ") and cur is not None:
            cur.append("" if line.strip() == "." else line[1:])
        else:
            flush()
            cur = None
    flush()
    with open(path + ".tmp", "w") as f:
        f.write("\n".join(docs) + "\n")
    os.rename(path + ".tmp", path)
    return docs


def symbols(doc):
    t = re.sub(r"[^a-z]+", " ", doc.lower()).strip()[:200]
    return np.array([ALPHA.index(c) for c in t], dtype=np.int64)


def loglik(pi, t, o, seqs):
    """Σ log p(seq) / Σ len(seq) by the scaled forward algorithm; t[i, j] =
    Pr(next = j | now = i), o[i, s] = Pr(symbol s | state i)."""
    total, n = 0.0, 0
    with np.errstate(divide="ignore"):
        for s in seqs:
            a = pi * o[:, s[0]]
            c = a.sum()
            ll = np.log(c)
            a = a / c if c > 0 else a
            for x in s[1:]:
                a = (a @ t) * o[:, x]
                c = a.sum()
                ll += np.log(c)
                if c > 0:
                    a = a / c
            total += ll
            n += len(s)
    return float(total / n)


def floored(p, axis):
    p = np.maximum(p, 1e-6)
    return p / p.sum(axis=axis, keepdims=True)


def timed(cmd, log):
    tf = log + ".time"
    with open(log, "w") as lf:
        rc = subprocess.call(["/usr/bin/time", "-o", tf, "-f", "%e %U %S %M"] + cmd, stdout=lf, stderr=lf)
    with open(tf) as f:
        e, u, s, m = (float(v) for v in f.read().strip().splitlines()[-1].split())
    return rc, e, u + s, m / 1024


def main():
    cache, out = sys.argv[1], sys.argv[2]
    sf = os.environ["STREAMFIT"]
    docs = descriptions(cache)[: int(os.environ.get("HMM_DOCS", "1000"))]
    seqs = [s for s in (symbols(d) for d in docs) if len(s) >= 3]
    train = [s for i, s in enumerate(seqs) if i % 10 != 9]
    test = [s for i, s in enumerate(seqs) if i % 10 == 9]
    x = np.concatenate(train)
    onehot = np.zeros((len(x), len(ALPHA)), dtype=np.uint8)
    onehot[np.arange(len(x)), x] = 1
    seq = np.concatenate([np.full(len(s), i, dtype=np.int64) for i, s in enumerate(train)])
    npz = os.path.join(out, "chars-train.npz")
    np.savez(npz, x=onehot, seq=seq)
    window = int(os.environ.get("HMM_WINDOW", "0"))
    snpz = npz
    if window > 0:
        # Sets of w consecutive characters: window j of description i.
        nwin = np.cumsum([0] + [-(-len(s) // window) for s in train])
        wid = np.concatenate([nwin[i] + np.arange(len(s)) // window for i, s in enumerate(train)])
        _, first, size = np.unique(wid, return_index=True, return_counts=True)
        keep = np.repeat(size >= 3, size)
        snpz = os.path.join(out, f"chars-train-w{window}.npz")
        np.savez(snpz, x=onehot[keep], seq=wid[keep])
    with open(os.path.join(out, "chars-train.json"), "w") as f:
        json.dump([s.tolist() for s in train], f)
    res = open(os.path.join(out, "hmm.jsonl"), "a")
    for k in [int(v) for v in os.environ.get("HMM_KS", "2 5 10").split()]:
        for meth in os.environ.get("HMM_METHODS", "sf-hmm sf-hmm-bw sf-hmm-default sf-snapshot pomegranate").split():
            snap = meth.startswith("sf-snapshot")
            passes = os.environ.get("HMM_EM_PASSES", "") if meth == "sf-hmm-default" else ""
            base = os.path.join(out, f"chars-k{k}-{meth}" + (f"-w{window}" if snap and window > 0 else "")
                                + (f"-em{passes}" if passes else ""))
            model = base + ".json"
            if meth in ("sf-hmm", "sf-hmm-default"):
                cmd = [sf, "fit", "hmm", "--input", npz, "--values-column", "x", "--group-column", "seq",
                       "--discrete", "--windows", "--k", str(k), "--out", model, "--progress", "off"]
                if meth == "sf-hmm":
                    cmd += ["--em-passes", "0"]
                elif passes:
                    cmd += ["--em-passes", passes]
            elif snap:
                cmd = [sf, "fit", "hmm-snapshot", "--input", snpz, "--values-column", "x", "--group-column", "seq",
                       "--k", str(k), "--out", model, "--progress", "off"] + (["--discrete"] if meth == "sf-snapshot" else [])
            elif meth == "sf-hmm-bw":
                cmd = [os.environ["HMMFIT"], "--input", npz, "--values-column", "x", "--group-column", "seq",
                       "--k", str(k), "--out", model]
            else:
                cmd = [py, os.path.join(here, "pom_hmm.py"), os.path.join(out, "chars-train.json"), str(k), model]
            if meth.startswith("sf-") and meth != "sf-hmm-bw" and os.environ.get("HMM_CPUPROFILE"):
                cmd += ["--cpuprofile", base + ".pprof"]
            rc, wall, cpu, rss = timed(cmd, base + ".log")
            row = {"set": "debian-chars", "train_chars": int(len(x)), "test_chars": int(sum(len(s) for s in test)),
                   "k": k, "method": meth, "em_passes": passes or None, "rc": rc, "wall": wall, "cpu": cpu, "rss_mb": rss}
            if rc == 0:
                with open(model) as f:
                    m = json.load(f)
                if snap:
                    o = np.asarray(m["U"], dtype=float)       # K rows: E[x | state]
                    t = np.asarray(m["P"], dtype=float).T     # P[i][j] = Pr(i | j) → rows from
                    pi = np.asarray(m["pi"], dtype=float)
                    row["r"] = m.get("r")
                    row["window"] = window
                    row["states_fitted"] = m.get("stats", {}).get("states_fitted")
                    row["warnings"] = m.get("stats", {}).get("warnings")
                elif meth.startswith("sf-hmm"):
                    o = np.asarray(m["O"], dtype=float)       # K rows: E[x | state]
                    t = np.asarray(m["T"], dtype=float).T     # T[i][j] = Pr(i | j) → rows from
                    pi = np.asarray(m["pi"], dtype=float)
                    row["warnings"] = m.get("stats", {}).get("warnings")
                    if "baum_welch" in m:
                        row["passes"] = m["baum_welch"]["passes"]
                    elif "em" in m.get("stats", {}):
                        row["passes"] = m["stats"]["em"]["passes"]
                else:
                    o, t, pi = (np.asarray(m[key], dtype=float) for key in ("O", "T", "pi"))
                    row["fit_cpu_seconds"] = m["fit_cpu_seconds"]
                    row["iterations"] = m.get("iterations")
                o, t, pi = np.clip(o, 0, None), np.clip(t, 0, None), np.clip(pi, 0, None)
                o, t, pi = o / o.sum(axis=1, keepdims=True), t / t.sum(axis=1, keepdims=True), pi / pi.sum()
                row["loglik"] = loglik(pi, t, o, test)
                if not np.isfinite(row["loglik"]):
                    row["loglik_floored"] = loglik(floored(pi, 0), floored(t, 1), floored(o, 1), test)
            else:
                with open(base + ".log") as f:
                    row["error"] = f.read().strip().splitlines()[-1:]
            print(json.dumps(row), file=res, flush=True)
            print(json.dumps(row), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
