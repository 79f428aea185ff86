"""Fits scikit-learn's GaussianMixture (its k-means start, default
settings otherwise) to a .npy file of samples and writes the parameters
as JSON for score.py: weights, means, and covariances ("spherical": one
variance per component; "diag": one per component and feature), with the
fit's own CPU seconds (time.process_time, all threads).

Usage: sk_gmm.py TRAIN.npy K COVARIANCE_TYPE OUT.json [SEED]
"""
import json
import sys
import time

import numpy as np
from sklearn.mixture import GaussianMixture


def main():
    path, k, cov, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    seed = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    x = np.load(path)
    t0 = time.process_time()
    g = GaussianMixture(n_components=k, covariance_type=cov, random_state=seed).fit(x)
    cpu = time.process_time() - t0
    with open(out, "w") as f:
        json.dump({"model": "sklearn-gmm-" + cov, "k": k, "d": x.shape[1],
                   "weights": g.weights_.tolist(), "means": g.means_.tolist(),
                   "covariances": np.asarray(g.covariances_).tolist(),
                   "stats": {"fit_cpu_seconds": cpu, "iterations": int(g.n_iter_), "converged": bool(g.converged_)}}, f)


if __name__ == "__main__":
    main()
