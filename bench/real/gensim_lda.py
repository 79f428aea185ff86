"""Fits gensim's LdaModel to a UCI docword file and saves its topics as .npy.

Usage: /usr/bin/python3 gensim_lda.py TRAIN.docword[.gz] K PASSES OUT.npy

The settings of bench/real: chunksize 2000, symmetric alpha 1/k (and gensim's
default symmetric eta 1/k), random_state=1, online updates (update_every=1),
the default 50 E-step iterations, no perplexity logging during training
(eval_every=None). The corpus is read into memory first, as gensim users
usually do with corpora this size. Prints one JSON line with the load and
training wall seconds.
"""
import json
import os
import sys
import time

import numpy as np
from gensim.models import LdaModel

import docword


def read_docword(path):
    n, d, entries = docword.read(path)
    docs = [[] for _ in range(n)]
    for doc, term, count in entries:
        docs[doc].append((term, count))
    return docs, d


def main():
    train, k, passes, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    t0 = time.time()
    corpus, d = read_docword(train)
    id2word = {i: str(i) for i in range(d)}  # fixes num_terms to d
    t1 = time.time()
    lda = LdaModel(corpus=corpus, id2word=id2word, num_topics=k, chunksize=2000,
                   passes=passes, alpha="symmetric", random_state=1, eval_every=None)
    t2 = time.time()
    topics = lda.get_topics()
    if topics.shape != (k, d):
        sys.exit(f"gensim gave topics of shape {topics.shape}, want ({k}, {d})")
    tmp = out + ".tmp.npy"
    np.save(tmp, np.ascontiguousarray(topics))
    os.replace(tmp, out)
    print(json.dumps({"docs": len(corpus), "terms": d, "k": k, "passes": passes,
                      "load_seconds": round(t1 - t0, 3), "train_seconds": round(t2 - t1, 3)}))


if __name__ == "__main__":
    main()
