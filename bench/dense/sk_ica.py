"""Fits scikit-learn's FastICA to a .npy file of samples and writes its
mixing matrix as JSON for ica.py ("mixing": K rows, the columns of Â).

Usage: sk_ica.py X.npy K OUT.json [SEED]
"""
import json
import sys
import time

import numpy as np
from sklearn.decomposition import FastICA


def main():
    path, k, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    x = np.load(path)
    t0 = time.process_time()
    f = FastICA(n_components=k, whiten="unit-variance", random_state=seed, max_iter=1000).fit(x)
    cpu = time.process_time() - t0
    with open(out, "w") as fh:
        json.dump({"model": "sklearn-fastica", "k": k, "d": x.shape[1], "mixing": f.mixing_.T.tolist(),
                   "stats": {"fit_cpu_seconds": cpu, "iterations": int(f.n_iter_)}}, fh)


if __name__ == "__main__":
    main()
