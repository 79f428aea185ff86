"""Fits pomegranate's (0.14) HiddenMarkovModel by Baum–Welch to sequences
of symbols (a JSON list of lists of ints) and writes its start
distribution, transitions (rows: from) and emissions (rows: state) as
JSON for hmm.py, with the fit's own CPU seconds.

Usage: pom_hmm.py TRAIN.json K OUT.json [SEED]
(env POM_MAX_ITER: the Baum–Welch cap, default 100; pomegranate's own
default, 1e8 with a stop threshold of 1e-9, would run for hours here;
POM_JOBS: pomegranate's n_jobs, default 1 — its threads sum the
sequences in parallel, so the CPU seconds compare alike and the wall
time shrinks)
"""
import json
import os
import sys
import time

import numpy as np
from pomegranate import DiscreteDistribution, HiddenMarkovModel


def main():
    seqs, k, out = json.load(open(sys.argv[1])), int(sys.argv[2]), sys.argv[3]
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    d = 1 + max(max(s) for s in seqs)
    t0 = time.process_time()
    cap = int(os.environ.get("POM_MAX_ITER", "100"))
    m, hist = HiddenMarkovModel.from_samples(DiscreteDistribution, n_components=k, X=seqs, algorithm="baum-welch",
                                             random_state=seed, n_jobs=int(os.environ.get("POM_JOBS", "1")), max_iterations=cap, verbose=False,
                                             return_history=True)
    cpu = time.process_time() - t0
    # The states in the model's order, without its silent start and end.
    names = [s.name for s in m.states]
    emit = [i for i, s in enumerate(m.states) if s.distribution is not None]
    tm = m.dense_transition_matrix()
    start = names.index(m.start.name)
    o = np.zeros((len(emit), d))
    for r, i in enumerate(emit):
        p = m.states[i].distribution.parameters[0]
        for s, v in p.items():
            o[r, int(s)] = v
    with open(out, "w") as f:
        json.dump({"model": "pomegranate-hmm", "k": k, "O": o.tolist(), "T": tm[np.ix_(emit, emit)].tolist(),
                   "pi": tm[start, emit].tolist(), "fit_cpu_seconds": cpu,
                   "iterations": len(hist.epochs) if hasattr(hist, "epochs") else None}, f)


if __name__ == "__main__":
    main()
