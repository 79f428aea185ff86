"""Writes the dense data sets of the benchmark as .npy files, every 10th
sample held out: <cache>/<set>/train.npy and test.npy (float64), and for
the digits labels.npy (of the training rows) and test_labels.npy.

  pixels        the RGB pixels of scikit-learn's two sample photographs
                (load_sample_images), scaled to [0, 1]: 546,560 × 3
  digits        the 8×8 digits (load_digits): 1,797 × 64, values 0..16
  digits-pca10  the digits projected on the first 10 principal components
                of the training rows

Usage: data.py CACHE
"""
import os
import sys

import numpy as np
from sklearn.datasets import load_digits, load_sample_images
from sklearn.decomposition import PCA


def save(cache, name, x, y=None):
    d = os.path.join(cache, name)
    os.makedirs(d, exist_ok=True)
    test = np.arange(len(x)) % 10 == 9
    np.save(os.path.join(d, "train.npy"), np.ascontiguousarray(x[~test], dtype=np.float64))
    np.save(os.path.join(d, "test.npy"), np.ascontiguousarray(x[test], dtype=np.float64))
    if y is not None:
        np.save(os.path.join(d, "labels.npy"), y[~test])
        np.save(os.path.join(d, "test_labels.npy"), y[test])
    print(f"{name}: {int((~test).sum())} training and {int(test.sum())} held-out samples of {x.shape[1]}", file=sys.stderr)


def main():
    cache = sys.argv[1]
    imgs = load_sample_images().images
    pixels = np.concatenate([im.reshape(-1, 3) for im in imgs]).astype(np.float64) / 255.0
    save(cache, "pixels", pixels)
    dg = load_digits()
    save(cache, "digits", dg.data.astype(np.float64), dg.target)
    test = np.arange(len(dg.data)) % 10 == 9
    pca = PCA(n_components=10, random_state=0).fit(dg.data[~test])
    save(cache, "digits-pca10", pca.transform(dg.data), dg.target)


if __name__ == "__main__":
    main()
