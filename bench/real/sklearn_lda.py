"""Fits scikit-learn's LatentDirichletAllocation to a UCI docword file and
saves its topics as .npy.

Usage: /usr/bin/python3 sklearn_lda.py TRAIN.docword[.gz] K METHOD OUT.npy

METHOD is "batch" (scikit-learn's default learning method: batch
variational Bayes over the whole corpus, max_iter=10) or "online" (online
variational Bayes, mini-batches of 128 documents, learning_offset 10,
learning_decay 0.7, max_iter=5 passes, as gensim's 5 passes). Otherwise
scikit-learn's defaults, as a user would start: priors 1/k for the
document topics and the topic words, random_state=1, one job. The counts
are read into a scipy CSR matrix first (what CountVectorizer gives). The
topics are the rows of components_ normalised to sum 1. Prints one JSON
line with the load and training wall seconds.
"""
import json
import os
import sys
import time

import numpy as np
import scipy.sparse as sp
from sklearn.decomposition import LatentDirichletAllocation

import docword


def read_docword(path):
    n, d, entries = docword.read(path)
    rows, cols, vals = [], [], []
    for doc, term, count in entries:
        rows.append(doc)
        cols.append(term)
        vals.append(count)
    x = sp.csr_matrix((np.array(vals, dtype=np.float64), (rows, cols)), shape=(n, d))
    # Documents without any word are left out, as streamfit and gensim skip them.
    return x[np.diff(x.indptr) > 0], d


def main():
    train, k, method, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    if method not in ("batch", "online"):
        sys.exit(f"method {method!r}: want batch or online")
    t0 = time.time()
    x, d = read_docword(train)
    t1 = time.time()
    lda = LatentDirichletAllocation(n_components=k, learning_method=method,
                                    max_iter=10 if method == "batch" else 5,
                                    random_state=1)
    lda.fit(x)
    t2 = time.time()
    topics = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    if topics.shape != (k, d):
        sys.exit(f"scikit-learn gave topics of shape {topics.shape}, want ({k}, {d})")
    tmp = out + ".tmp.npy"
    np.save(tmp, np.ascontiguousarray(topics))
    os.replace(tmp, out)
    print(json.dumps({"docs": x.shape[0], "terms": d, "k": k, "method": method, "iterations": lda.n_iter_,
                      "load_seconds": round(t1 - t0, 3), "train_seconds": round(t2 - t1, 3)}))


if __name__ == "__main__":
    main()
