"""Reads the UCI docword files of bench/real for the Python peers."""
import gzip


def read(path):
    """Returns (documents, words, entries) of a UCI docword file (.gz or
    plain): the header's counts and an iterator of its (document, word,
    count) entries, ids from 0, read as the iterator is consumed."""
    f = (gzip.open if path.endswith(".gz") else open)(path, "rt")
    n, d = int(f.readline()), int(f.readline())
    f.readline()  # nnz

    def entries():
        with f:
            for line in f:
                doc, term, count = line.split()
                yield int(doc) - 1, int(term) - 1, int(count)

    return n, d, entries()
