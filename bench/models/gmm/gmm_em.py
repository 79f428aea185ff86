"""Fit scikit-learn's GaussianMixture (EM, spherical covariances) to a raw
little-endian float64 matrix and print the model and the fit time as JSON.

usage: gmm_em.py DATA ROWS COLS K SEED
"""
import json
import sys
import time

import numpy as np
from sklearn.mixture import GaussianMixture

path, n, d, k, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
x = np.fromfile(path, dtype="<f8").reshape(n, d)
start = time.perf_counter()
gm = GaussianMixture(n_components=k, covariance_type="spherical", random_state=seed).fit(x)
secs = time.perf_counter() - start
json.dump({"model": "gmm", "k": k, "d": d, "weights": gm.weights_.tolist(), "means": gm.means_.tolist(),
           "variances": gm.covariances_.tolist(), "seconds": secs, "iters": int(gm.n_iter_),
           "converged": bool(gm.converged_)}, sys.stdout)
