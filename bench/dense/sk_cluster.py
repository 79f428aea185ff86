"""Fits scikit-learn's KMeans (n_init=10) or GaussianMixture (full
covariances) to a .npy file and writes the component means and the
assignments (predict) of the training and held-out rows as JSON for mv.py.

Usage: sk_cluster.py TRAIN.npy TEST.npy K kmeans|sk-gmm OUT.json [SEED]
"""
import json
import sys
import time

import numpy as np
from sklearn.cluster import KMeans
from sklearn.mixture import GaussianMixture


def main():
    train, test, k, meth, out = np.load(sys.argv[1]), np.load(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    seed = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    t0 = time.process_time()
    if meth == "kmeans":
        m = KMeans(n_clusters=k, n_init=10, random_state=seed).fit(train)
        means = m.cluster_centers_
    else:
        m = GaussianMixture(n_components=k, random_state=seed).fit(train)
        means = m.means_
    cpu = time.process_time() - t0
    with open(out, "w") as f:
        json.dump({"model": meth, "k": k, "means": means.tolist(), "fit_cpu_seconds": cpu,
                   "train_labels": m.predict(train).tolist(), "test_labels": m.predict(test).tolist()}, f)


if __name__ == "__main__":
    main()
