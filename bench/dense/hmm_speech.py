"""Gaussian HMMs on real speech features: streamfit's `fit hmm` (the moment
fit, then Baum–Welch passes, a variance per state; `sf-diag`: `--covariance
diag`, a variance per state and coordinate) beside its moment fit alone and
pomegranate's Baum–Welch HMM with diagonal Gaussian states (the
covariance hmmlearn users start from), every model scored by one scorer:
the held-out log-likelihood per frame (the scaled forward algorithm below).

The data: the first HMM_SPEECH_DOCS (default 300) Debian package
descriptions (bench/real's text, cached by hmm.py's `descriptions`), the
first 160 characters of each spoken by espeak-ng to WAV (22,050 Hz),
dithered by one quantisation step, cut into 25 ms Hann windows every 10 ms,
each frame the log energies of 8 bands spaced evenly in log frequency from
100 Hz to 8 kHz, standardised by the training frames' mean and deviation. A sequence is a description; every
10th is held out.

Usage: hmm_speech.py CACHE OUT   (env STREAMFIT, HMM_SPEECH_KS="3 5 10",
HMM_SPEECH_DOCS=300, HMM_SPEECH_METHODS="sf-moments sf-default sf-diag pomegranate",
POM_MAX_ITER=100)
"""
import json
import os
import subprocess
import sys
import wave

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
from hmm import descriptions, timed  # noqa: E402

py = "/usr/bin/python3"
BANDS = 8


def features(wav):
    """Log band energies of 25 ms frames every 10 ms (frames × BANDS)."""
    with wave.open(wav) as w:
        rate, n = w.getframerate(), w.getnframes()
        a = np.frombuffer(w.readframes(n), dtype=np.int16).astype(float)
    # Dither of one quantisation step, as speech front ends add: espeak-ng's
    # digital silence would otherwise give frames of identical features,
    # on which a state's variance collapses and the likelihood is unbounded.
    a = (a + np.random.default_rng(len(a)).uniform(-1, 1, len(a))) / 32768
    win, hop = int(0.025 * rate), int(0.010 * rate)
    if len(a) < win:
        return np.zeros((0, BANDS))
    idx = np.arange(0, len(a) - win + 1, hop)[:, None] + np.arange(win)
    spec = np.abs(np.fft.rfft(a[idx] * np.hanning(win), axis=1)) ** 2
    freq = np.fft.rfftfreq(win, 1 / rate)
    edges = np.geomspace(100, 8000, BANDS + 1)
    band = np.stack([spec[:, (freq >= lo) & (freq < hi)].sum(axis=1) for lo, hi in zip(edges[:-1], edges[1:])], axis=1)
    return np.log(band + 1e-8)


def speech(cache, out, ndocs):
    """The sequences of frames, one a description, spoken once and cached."""
    path = os.path.join(out, f"speech-{ndocs}.npz")
    if os.path.exists(path):
        z = np.load(path)
        x, seq = z["x"], z["seq"]
        return [x[seq == i] for i in range(seq.max() + 1)]
    seqs, wav = [], os.path.join(out, "say.wav")
    for doc in descriptions(cache)[:ndocs]:
        subprocess.check_call(["espeak-ng", "-w", wav, doc[:160]])
        f = features(wav)
        if len(f) >= 3:
            seqs.append(f)
    np.savez(path, x=np.concatenate(seqs), seq=np.concatenate([np.full(len(s), i) for i, s in enumerate(seqs)]))
    return seqs


def loglik(pi, t, mu, var, seqs):
    """Σ log p(seq) / Σ len(seq) by the scaled forward algorithm: t[i, j] =
    Pr(next = j | now = i), state i emits N(mu[i], diag(var[i]))."""
    total, n = 0.0, 0
    for s in seqs:
        lp = -0.5 * (((s[:, None, :] - mu[None]) ** 2 / var[None]).sum(axis=2) + np.log(2 * np.pi * var).sum(axis=1)[None])
        top = lp.max(axis=1, keepdims=True)
        e = np.exp(lp - top)
        a = pi * e[0]
        c = a.sum()
        ll = np.log(c) + top[0, 0]
        a /= c
        for r in range(1, len(s)):
            a = (a @ t) * e[r]
            c = a.sum()
            ll += np.log(c) + top[r, 0]
            a /= c
        total += ll
        n += len(s)
    return float(total / n)


def main():
    cache, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    sf = os.environ["STREAMFIT"]
    seqs = speech(cache, out, int(os.environ.get("HMM_SPEECH_DOCS", "300")))
    train = [s for i, s in enumerate(seqs) if i % 10 != 9]
    test = [s for i, s in enumerate(seqs) if i % 10 == 9]
    x = np.concatenate(train)
    m0, s0 = x.mean(axis=0), x.std(axis=0)
    train, test = [(s - m0) / s0 for s in train], [(s - m0) / s0 for s in test]
    npz = os.path.join(out, "speech-train.npz")
    np.savez(npz, x=np.concatenate(train), seq=np.concatenate([np.full(len(s), i) for i, s in enumerate(train)]))
    tj = os.path.join(out, "speech-train.json")
    with open(tj, "w") as f:
        json.dump([s.tolist() for s in train], f)
    res = open(os.path.join(out, "hmm_speech.jsonl"), "a")
    for k in [int(v) for v in os.environ.get("HMM_SPEECH_KS", "3 5 10").split()]:
        for meth in os.environ.get("HMM_SPEECH_METHODS", "sf-moments sf-default sf-diag pomegranate").split():
            base = os.path.join(out, f"speech-k{k}-{meth}")
            model = base + ".json"
            if meth.startswith("sf-"):
                cmd = [sf, "fit", "hmm", "--input", npz, "--values-column", "x", "--group-column", "seq",
                       "--windows", "--k", str(k), "--out", model, "--progress", "off"]
                if meth == "sf-moments":
                    cmd += ["--em-passes", "0"]
                elif meth == "sf-diag":
                    cmd += ["--covariance", "diag"]
            else:
                cmd = [py, os.path.join(here, "pom_gauss_hmm.py"), tj, str(k), model]
            rc, wall, cpu, rss = timed(cmd, base + ".log")
            row = {"set": "debian-speech", "train_frames": int(len(x)), "test_frames": int(sum(len(s) for s in test)),
                   "sequences": [len(train), len(test)], "k": k, "method": meth, "rc": rc, "wall": wall, "cpu": cpu, "rss_mb": rss}
            if rc == 0:
                with open(model) as f:
                    m = json.load(f)
                mu = np.asarray(m["O"], dtype=float)
                t = np.asarray(m["T"], dtype=float)
                pi = np.asarray(m["pi"], dtype=float)
                if meth.startswith("sf-"):
                    t = t.T  # T[i][j] = Pr(i | j) → rows from
                    row["warnings"] = m.get("stats", {}).get("warnings")
                    v = m.get("var_diag") or m.get("var")
                    if v and np.ndim(v) == 2:
                        var = np.asarray(v, dtype=float)  # a variance per state and coordinate
                    elif v:
                        var = np.repeat(np.asarray(v, dtype=float)[:, None], mu.shape[1], axis=1)
                    else:
                        # The moment fit gives no variance: one for every
                        # state, the training frames' about their nearest mean.
                        xs = np.concatenate(train)
                        near = ((xs[:, None, :] - mu[None]) ** 2).sum(axis=2).min(axis=1)
                        var = np.full(mu.shape, near.mean() / mu.shape[1])
                    em = m.get("stats", {}).get("em") or m.get("baum_welch") or {}
                    row["passes"] = em.get("passes")
                else:
                    var = np.asarray(m["var"], dtype=float)
                    row["fit_cpu_seconds"] = m["fit_cpu_seconds"]
                    row["iterations"] = m.get("iterations")
                t, pi = np.clip(t, 1e-12, None), np.clip(pi, 1e-12, None)
                t, pi = t / t.sum(axis=1, keepdims=True), pi / pi.sum()
                row["loglik"] = loglik(pi, t, mu, np.maximum(var, 1e-6), test)
            else:
                with open(base + ".log") as f:
                    row["error"] = f.read().strip().splitlines()[-1:]
            print(json.dumps(row), file=res, flush=True)
            print(json.dumps(row), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
