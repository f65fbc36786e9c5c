"""Box hull of Θ against an independent LP solver and against sampled feasible points."""
from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from sysid_ros._src.identification import chebyshev_centre, polytope_box
from sysid_ros._src.model.parameters import is_physically_consistent


def _random_polytope(rng, n_rows=40):
    truth = rng.uniform(-1, 1, 10)
    Y = rng.normal(size=(n_rows, 10))
    r = rng.uniform(0.2, 1.0, n_rows)
    U = Y @ truth + rng.uniform(-1, 1, n_rows) * r
    return truth, Y, U, r


def test_lp_box_matches_scipy_and_contains_feasible_points():
    rng = np.random.default_rng(0)
    truth, Y, U, r = _random_polytope(rng)
    lo, hi = np.full(10, -3.0), np.full(10, 3.0)
    box = polytope_box(Y, U, r, lo, hi)
    assert box.status == "ok"
    A = np.vstack([Y, -Y])
    b = np.concatenate([U + r, r - U])
    for i in range(10):
        c = np.zeros(10)
        c[i] = 1
        mn = linprog(c, A_ub=A, b_ub=b, bounds=list(zip(lo, hi)), method="highs-ds").fun
        mx = -linprog(-c, A_ub=A, b_ub=b, bounds=list(zip(lo, hi)), method="highs-ds").fun
        assert box.box.lower[i] <= mn + 1e-9 and box.box.upper[i] >= mx - 1e-9
        assert mn - box.box.lower[i] < 1e-4 and box.box.upper[i] - mx < 1e-4   # tight (pad only)
    # Random feasible points (hit-and-run from the truth) stay in the box.
    x = truth.copy()
    for _ in range(2000):
        d = rng.normal(size=10)
        step = rng.uniform(-0.5, 0.5)
        y = x + step * d
        if np.all(np.abs(Y @ y - U) <= r) and np.all(y >= lo) and np.all(y <= hi):
            x = y
            assert np.all(x >= box.box.lower) and np.all(x <= box.box.upper)
    c = chebyshev_centre(Y, U, r, box.box.lower, box.box.upper)
    assert np.all(np.abs(Y @ c - U) <= r + 1e-9)


def test_empty_polytope_is_inconsistent():
    rng = np.random.default_rng(1)
    _, Y, U, r = _random_polytope(rng)
    Y2 = np.vstack([Y, Y[:1]])
    U2 = np.concatenate([U, U[:1] + 3 * r[:1]])     # same row, disjoint interval
    r2 = np.concatenate([r, r[:1]])
    assert polytope_box(Y2, U2, r2, np.full(10, -3.0), np.full(10, 3.0)).status == "inconsistent"
    # A zero row whose interval excludes 0 proves inconsistency too.
    Y3 = np.vstack([Y, np.zeros((1, 10))])
    assert polytope_box(Y3, np.r_[U, 1.0], np.r_[r, 0.5], np.full(10, -3.0),
                        np.full(10, 3.0)).status == "inconsistent"


def test_no_rows_is_insufficient():
    box = polytope_box(np.zeros((0, 10)), np.zeros(0), np.zeros(0), -np.ones(10), np.ones(10))
    assert box.status == "insufficient_data"
    np.testing.assert_array_equal(box.box.lower, -np.ones(10))


def test_lmi_box_is_inside_lp_box_and_keeps_a_consistent_truth(gen3):
    rng = np.random.default_rng(2)
    truth = gen3.theta_e()
    assert is_physically_consistent(truth)
    Y = rng.normal(size=(30, 10))
    Y[:, 4:] *= 0.01                                    # inertia weakly excited, as in practice
    r = rng.uniform(0.05, 0.2, 30)
    U = Y @ truth + rng.uniform(-1, 1, 30) * r
    lo = truth - np.r_[1.0, 0.3, 0.3, 0.3, 0.2, 0.05, 0.2, 0.05, 0.05, 0.2]
    hi = truth + np.r_[1.0, 0.3, 0.3, 0.3, 0.2, 0.05, 0.2, 0.05, 0.05, 0.2]
    lp = polytope_box(Y, U, r, lo, hi)
    lmi = polytope_box(Y, U, r, lo, hi, lmi=True)
    assert lmi.status == "ok"
    assert np.all(lmi.box.lower >= lp.box.lower) and np.all(lmi.box.upper <= lp.box.upper)
    assert np.all(truth >= lmi.box.lower) and np.all(truth <= lmi.box.upper)
    assert np.sum(lmi.box.upper - lmi.box.lower) < np.sum(lp.box.upper - lp.box.lower)   # it does tighten


def test_psd_cuts_cut_off_the_point_and_keep_every_rigid_body():
    from sysid_ros._src.identification.feasible_set import psd_cuts_at
    from sysid_ros._src.model.parameters import log_cholesky

    rng = np.random.default_rng(3)
    bodies = log_cholesky(rng.normal(scale=1.5, size=(2000, 10)))      # consistent by construction
    assert np.all(is_physically_consistent(bodies))
    n_cuts = 0
    for _ in range(200):
        x = rng.normal(size=10)
        cuts = psd_cuts_at(x)
        if not is_physically_consistent(x):
            assert len(cuts) >= 1 and np.all(cuts @ x < 0)   # x is separated
        n_cuts += len(cuts)
        if len(cuts):
            assert np.all(bodies @ cuts.T >= -1e-12)           # no rigid body is
    assert n_cuts > 100
    assert psd_cuts_at(bodies[0]).shape == (0, 10)


def test_lp_cuts_box_between_lmi_and_lp(gen3):
    """The cut LP is a relaxation of the SDP and a restriction of the LP."""
    rng = np.random.default_rng(2)
    truth = gen3.theta_e()
    Y = rng.normal(size=(30, 10))
    Y[:, 4:] *= 0.01
    r = rng.uniform(0.05, 0.2, 30)
    U = Y @ truth + rng.uniform(-1, 1, 30) * r
    lo = truth - np.r_[1.0, 0.3, 0.3, 0.3, 0.2, 0.05, 0.2, 0.05, 0.05, 0.2]
    hi = truth + np.r_[1.0, 0.3, 0.3, 0.3, 0.2, 0.05, 0.2, 0.05, 0.05, 0.2]
    lp = polytope_box(Y, U, r, lo, hi)
    cut = polytope_box(Y, U, r, lo, hi, psd_cuts=True, cut_rounds=30)
    lmi = polytope_box(Y, U, r, lo, hi, lmi=True)
    assert cut.status == "ok" and np.all(truth >= cut.box.lower) and np.all(truth <= cut.box.upper)
    tol = 2e-5 * (hi - lo)          # the solution pads (1e-6 LP, 1e-5 cut LP/SDP of the width)
    assert np.all(cut.box.lower >= lp.box.lower - tol) and np.all(cut.box.upper <= lp.box.upper + tol)
    assert np.all(cut.box.lower <= lmi.box.lower + tol) and np.all(cut.box.upper >= lmi.box.upper - tol)
    assert np.sum(cut.box.upper - cut.box.lower) < np.sum(lp.box.upper - lp.box.lower)
    # A warm pool gives the same box with zero new rounds.
    again = polytope_box(Y, U, r, lo, hi, psd_cuts=True, cuts=cut.cuts, cut_rounds=0)
    assert np.all(again.box.upper - again.box.lower <= (cut.box.upper - cut.box.lower) * 1.05 + tol)
