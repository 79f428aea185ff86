"""The one scorer of the GMM benchmark: the held-out average log-likelihood
per sample of a Gaussian mixture with diagonal covariances, computed with
numpy from the parameters in a model file — streamfit's (fit gmm: weights,
means and one variance per component, "variances") or sk_gmm.py's
(weights, means, and "covariances" of one variance per component or one
per component and feature).

A moment fit may return what is not a density: a weight or a variance
that is not positive (a weight of exactly 0 is an empty component, left
out). Then the raw model has no likelihood; the scorer
reports that, and also the figure of the repaired mixture (components
with a non-positive weight or variance dropped, weights renormalised) in
the field "repaired".

Usage: score.py MODEL.json TEST.npy   (prints one JSON object)
"""
import json
import sys

import numpy as np


def loglik(w, mu, var, x):
    """Average over the rows of x of log Σ_i w_i N(x; mu_i, diag(var_i))."""
    n, d = x.shape
    lp = np.empty((n, len(w)))
    for i in range(len(w)):
        v = np.broadcast_to(var[i], (d,))
        lp[:, i] = (np.log(w[i]) - 0.5 * np.sum(np.log(2 * np.pi * v))
                    - 0.5 * np.sum((x - mu[i]) ** 2 / v, axis=1))
    m = lp.max(axis=1, keepdims=True)
    return float(np.mean(m[:, 0] + np.log(np.exp(lp - m).sum(axis=1))))


def main():
    with open(sys.argv[1]) as f:
        m = json.load(f)
    x = np.load(sys.argv[2])
    w = np.asarray(m["weights"], dtype=float)
    mu = np.asarray(m["means"], dtype=float)
    var = np.asarray(m["variances"] if "variances" in m else m["covariances"], dtype=float)
    if var.ndim == 1:
        var = var[:, None]
    ok = (w > 0) & np.all(var > 0, axis=1) & np.all(np.isfinite(mu), axis=1)
    # A component of weight exactly 0 adds nothing: the mixture of the
    # others is the same density (EM leaves a component there when no row
    # is near it).
    dead = w == 0
    out = {"k": len(w), "valid_components": int(ok.sum())}
    if (ok | dead).all():
        out["loglik"] = loglik(w[ok] / w[ok].sum(), mu[ok], var[ok], x)
        if dead.any():
            out["empty_components"] = int(dead.sum())
    else:
        out["loglik"] = None
        out["invalid"] = f"{int((w <= 0).sum())} weights and {int((~np.all(var > 0, axis=1)).sum())} variances not positive"
        if ok.any():
            out["repaired"] = loglik(w[ok] / w[ok].sum(), mu[ok], var[ok], x)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
