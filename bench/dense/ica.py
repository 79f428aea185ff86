"""Runs the ICA comparison on speech: K sentences spoken by espeak-ng
(different voices), resampled with sox to 16 kHz mono and cut to the
shortest, mixed by a random matrix A (D × K, condition number below 5,
seeded), every sample a row. Fits

  sf-ica           streamfit fit ica --k K (the cumulant, then logcosh steps)
  sf-ica-SOLVER    streamfit fit ica --k K --solver SOLVER (sf-ica-ojd,
                   sf-ica-rtpm, ...)
  sf-ica-kurtosis  streamfit fit ica --k K --contrast kurtosis (the cumulant's
                   own polishing steps)
  fastica    scikit-learn FastICA(n_components=K, whiten="unit-variance")

under GNU time, and scores both with one scorer from the estimated
mixing matrix Â (its columns): the Amari index of P = Â⁺A (0 when the
sources are recovered exactly up to order and scale, 1 at worst), and
the excess kurtosis of the recovered components Â⁺(x − mean). Appends
one JSON line per fit to OUT/ica.jsonl.

On 8×8 patches of scikit-learn's sample photographs (ICA_CASES
"patchesK": K components of 40,000 patches) there is no truth: the
components' kurtoses are the score (higher: more non-Gaussian).

Usage: ica.py CACHE OUT   (env STREAMFIT; ICA_CASES="4x4 4x6 6x6 patches16",
       KxD for speech; ICA_METHODS="sf-ica sf-ica-ojd sf-ica-kurtosis fastica")
"""
import json
import os
import subprocess
import sys
import wave

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
py = "/usr/bin/python3"
SENTENCES = [
    ("en-us", "The quick brown fox jumps over the lazy dog and runs into the woods."),
    ("en-gb", "She sells sea shells by the sea shore, and the shells she sells are surely seashells."),
    ("de", "Ich habe heute keine Zeit, weil ich noch viele Briefe schreiben muss."),
    ("fr", "Le petit chat dort sur le canape pendant que la pluie tombe dehors."),
    ("es", "El tren de la tarde llega siempre con retraso a la estacion del pueblo."),
    ("it", "La mattina presto andiamo al mercato a comprare frutta e verdura fresca."),
    ("nl", "De fiets staat achter het huis naast de oude boom in de tuin."),
    ("pl", "W poniedzialek rano pojade pociagiem do miasta na spotkanie."),
]


def sources(cache, k):
    d = os.path.join(cache, "speech")
    os.makedirs(d, exist_ok=True)
    out = []
    for i, (voice, text) in enumerate(SENTENCES[:k]):
        raw, wav = os.path.join(d, f"s{i}.raw.wav"), os.path.join(d, f"s{i}.wav")
        if not os.path.exists(wav):
            subprocess.check_call(["espeak-ng", "-v", voice, "-s", "150", "-w", raw, text])
            subprocess.check_call(["sox", raw, "-r", "16000", "-c", "1", "-b", "16", wav])
        with wave.open(wav) as w:
            out.append(np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float64))
    n = min(len(s) for s in out)
    s = np.stack([x[:n] for x in out], axis=1)
    return s / s.std(axis=0)


def amari(p):
    p = np.abs(p)
    k = p.shape[0]
    rows = (p.sum(axis=1) / p.max(axis=1) - 1).sum()
    cols = (p.sum(axis=0) / p.max(axis=0) - 1).sum()
    return float((rows + cols) / (2 * k * (k - 1)))


def kurtosis(y):
    y = (y - y.mean(axis=0)) / y.std(axis=0)
    return (y ** 4).mean(axis=0) - 3


def timed(cmd, log):
    tf = log + ".time"
    with open(log, "w") as lf:
        rc = subprocess.call(["/usr/bin/time", "-o", tf, "-f", "%e %U %S %M"] + cmd, stdout=lf, stderr=lf)
    with open(tf) as f:
        e, u, s, m = (float(v) for v in f.read().strip().splitlines()[-1].split())
    return rc, e, u + s, m / 1024


def patches(k, n=40000, size=8):
    """n grey-level size×size patches of scikit-learn's two sample
    photographs (seeded positions), each less its own mean: the classic
    natural-image ICA, whose components are edge filters."""
    from sklearn.datasets import load_sample_images
    rng = np.random.default_rng(k)
    out = []
    imgs = [im.astype(np.float64).mean(axis=2) / 255 for im in load_sample_images().images]
    for i in range(n):
        im = imgs[i % len(imgs)]
        r = rng.integers(0, im.shape[0] - size)
        c = rng.integers(0, im.shape[1] - size)
        p = im[r:r + size, c:c + size].ravel()
        out.append(p - p.mean())
    return np.asarray(out)


def main():
    cache, out = sys.argv[1], sys.argv[2]
    sf = os.environ["STREAMFIT"]
    res = open(os.path.join(out, "ica.jsonl"), "a")
    for case in os.environ.get("ICA_CASES", "4x4 4x6 6x6 patches16").split():
        if case.startswith("patches"):
            # No truth: the components' kurtoses say how non-Gaussian
            # (how well separated) they are.
            k = int(case[len("patches"):])
            x, a, truth_kurt = patches(k), None, None
            d = x.shape[1]
            path = os.path.join(out, f"{case}.npy")
        else:
            k, d = (int(v) for v in case.split("x"))
            s = sources(cache, k)
            rng = np.random.default_rng(k * 100 + d)
            while True:
                a = rng.normal(size=(d, k))
                if np.linalg.cond(a) < 5:
                    break
            x = s @ a.T
            truth_kurt = sorted(kurtosis(s).round(2).tolist())
            path = os.path.join(out, f"speech-{case}.npy")
        np.save(path, x)
        for meth in os.environ.get("ICA_METHODS", "sf-ica sf-ica-ojd sf-ica-kurtosis fastica").split():
            base = os.path.join(out, f"{os.path.basename(path)[:-4]}-{meth}")
            model = base + ".json"
            if meth.startswith("sf-ica"):
                cmd = [sf, "fit", "ica", "--input", path, "--k", str(k), "--out", model, "--progress", "off"]
                if meth == "sf-ica-kurtosis":
                    cmd += ["--contrast", "kurtosis"]
                elif meth.startswith("sf-ica-"):
                    cmd += ["--solver", meth[len("sf-ica-"):]]
            else:
                cmd = [py, os.path.join(here, "sk_ica.py"), path, str(k), model]
            rc, wall, cpu, rss = timed(cmd, base + ".log")
            row = {"case": case, "rows": len(x), "k": k, "d": d, "method": meth, "rc": rc, "wall": wall, "cpu": cpu, "rss_mb": rss,
                   "sources_kurtosis": truth_kurt}
            if rc == 0:
                with open(model) as f:
                    m = json.load(f)
                mix = np.asarray(m["mixing"], dtype=float)  # K rows: the columns of Â
                if mix.shape != (k, d):
                    mix = mix.T
                unmix = np.linalg.pinv(mix.T)
                if a is not None:
                    row["amari"] = amari(unmix @ a)
                row["kurtosis"] = sorted(kurtosis((x - x.mean(axis=0)) @ unmix.T).round(2).tolist())
                row["warnings"] = m.get("stats", {}).get("warnings")
                if "fit_cpu_seconds" in m.get("stats", {}):
                    row["fit_cpu_seconds"] = m["stats"]["fit_cpu_seconds"]
            else:
                with open(base + ".log") as f:
                    row["error"] = f.read().strip().splitlines()[-1:]
            print(json.dumps(row), file=res, flush=True)
            print(json.dumps(row), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
