"""Fits pomegranate's (0.14) HiddenMarkovModel by Baum–Welch to sequences
of real vectors (a JSON list of lists of frames), each state a Gaussian
with diagonal covariance (independent normal components, k-means start),
and writes its start distribution, transitions (rows: from), means and
variances as JSON for hmm_speech.py, with the fit's own CPU seconds.

Usage: pom_gauss_hmm.py TRAIN.json K OUT.json [SEED]
(env POM_MAX_ITER: the Baum–Welch cap, default 100)
"""
import json
import os
import sys
import time

import numpy as np
from pomegranate import HiddenMarkovModel, NormalDistribution


def main():
    seqs = [np.asarray(s, dtype=float) for s in json.load(open(sys.argv[1]))]
    k, out = int(sys.argv[2]), sys.argv[3]
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    t0 = time.process_time()
    m, hist = HiddenMarkovModel.from_samples(NormalDistribution, n_components=k, X=seqs, algorithm="baum-welch",
                                             random_state=seed, max_iterations=int(os.environ.get("POM_MAX_ITER", "100")),
                                             verbose=False, return_history=True)
    cpu = time.process_time() - t0
    emit = [i for i, s in enumerate(m.states) if s.distribution is not None]
    names = [s.name for s in m.states]
    tm = m.dense_transition_matrix()
    start = names.index(m.start.name)
    mu, var = [], []
    for i in emit:
        parts = m.states[i].distribution.parameters[0]  # one NormalDistribution a coordinate
        mu.append([p.parameters[0] for p in parts])
        var.append([p.parameters[1] ** 2 for p in parts])
    with open(out, "w") as f:
        json.dump({"model": "pomegranate-gaussian-hmm", "k": k, "O": mu, "var": var, "T": tm[np.ix_(emit, emit)].tolist(),
                   "pi": tm[start, emit].tolist(), "fit_cpu_seconds": cpu,
                   "iterations": len(hist.epochs) if hasattr(hist, "epochs") else None}, f)


if __name__ == "__main__":
    main()
