"""The box LPs kept between updates against the one-shot LP box over the same rows.

Reference: :func:`polytope_box`, a fresh HiGHS model per call (itself checked against SciPy's
linprog in test_feasible_set.py). Rows: simulated Gen3 recordings (Pinocchio ABA + RK4) with the
friction and θ_r unknowns as LP columns.
"""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.identification import PayloadProblem, load_identification_config, polytope_box
from sysid_ros._src.identification.incremental import IncrementalBox
from sysid_ros._src.identification.problem import PayloadRows
from sysid_ros._src.simulation.synthetic import random_payload_theta, simulate
from .conftest import payload_rows


@pytest.fixture(scope="module")
def stream(gen3):
    rng = np.random.default_rng(5)
    theta = gen3.theta_e() + random_payload_theta(rng, 3.0)
    run = simulate(gen3, rng, theta_e=theta, duration=2.0, noise_rel=0.025)
    cfg = load_identification_config(gen3, friction="config", torque_noise_abs=0.0,
                                     torque_noise_rel=0.025, friction_unknowns=True,
                                     theta_r_unknowns=True)
    rows = payload_rows(gen3, cfg, run.t, run.q, run.dq, run.tau_meas, unknowns=True)
    x_lo, x_hi = PayloadProblem(gen3, cfg).prior()
    return theta, rows, x_lo, x_hi


def _batches(rows: PayloadRows, n: int) -> list[PayloadRows]:
    edges = np.linspace(0, len(rows), n + 1).astype(int)
    return [rows.take(slice(a, b)) for a, b in zip(edges[:-1], edges[1:])]


def _one_shot(rows: PayloadRows, x_lo, x_hi, cuts=None):
    res = polytope_box(rows.A, rows.c, rows.r, x_lo, x_hi, psd_cuts=cuts is not None,
                       cuts=cuts, cut_rounds=0)
    assert res.status == "ok"
    return res.box


def _close(a, b, x_lo, x_hi, rel=1e-5):
    w = x_hi[:10] - x_lo[:10]
    np.testing.assert_array_less(np.abs(a.lower - b.lower), rel * w)
    np.testing.assert_array_less(np.abs(a.upper - b.upper), rel * w)


def test_uncapped_matches_one_shot_over_all_rows_and_contains_truth(stream):
    theta, rows, x_lo, x_hi = stream
    lps = IncrementalBox(len(x_lo), max_rows=10**6)
    seen: list[PayloadRows] = []
    for batch in _batches(rows, 5):
        lps.add(batch)
        seen.append(batch)
        res = lps.solve(x_lo, x_hi)
        assert res.status == "ok"
        _close(res.box, _one_shot(PayloadRows.concat(seen, len(x_lo)), x_lo, x_hi), x_lo, x_hi)
        assert res.box.contains(theta)
    assert len(lps.rows) == len(rows)


def test_cap_drops_only_rows_slack_at_every_optimum(stream):
    theta, rows, x_lo, x_hi = stream
    cap = len(rows) // 8
    lps = IncrementalBox(len(x_lo), max_rows=cap)
    for batch in _batches(rows, 6):
        lps.add(batch)
        before = len(lps.rows)
        res = lps.solve(x_lo, x_hi)
        assert res.status == "ok" and res.box.contains(theta)
        kept = lps.rows
        # the LPs and the kept rows agree: the one-shot box over exactly these rows is the same
        _close(res.box, _one_shot(kept, x_lo, x_hi), x_lo, x_hi)
        if before > cap:
            assert len(kept) < before
            # the rows dropped bound no optimum: solving again gives the same box
            _close(lps.solve(x_lo, x_hi).box, res.box, x_lo, x_hi)
        assert len(kept) <= max(cap, before)
    # dropping rows relaxes Θ: never tighter than the one-shot box over all rows
    full = _one_shot(rows, x_lo, x_hi)
    assert np.all(res.box.lower <= full.lower + 1e-9) and np.all(res.box.upper >= full.upper - 1e-9)


def test_cuts_join_the_lps(stream):
    theta, rows, x_lo, x_hi = stream
    first = polytope_box(rows.A, rows.c, rows.r, x_lo, x_hi, psd_cuts=True, cut_rounds=2)
    assert first.cuts is not None and len(first.cuts)
    lps = IncrementalBox(len(x_lo), max_rows=10**6, pad_rel=1e-5)
    lps.add(rows)
    lps.add_cuts(first.cuts)
    lps.add_cuts(first.cuts)                        # already there: not added twice
    res = lps.solve(x_lo, x_hi)
    _close(res.box, _one_shot(rows, x_lo, x_hi, first.cuts), x_lo, x_hi, rel=3e-5)
    assert res.box.contains(theta)
    # cut rounds inside the kept LPs: never looser than with the pool alone, still sound
    rounds = lps.solve(x_lo, x_hi, cut_rounds=2).box
    assert np.all(rounds.lower >= res.box.lower - 1e-9) and rounds.contains(theta)


def test_contradicting_rows_are_inconsistent(stream):
    _, rows, x_lo, x_hi = stream
    lps = IncrementalBox(len(x_lo), max_rows=10**6)
    lps.add(rows)
    assert lps.solve(x_lo, x_hi).status == "ok"
    # the same rows for a body 5 kg heavier: no x satisfies both sets
    shifted = PayloadRows(rows.A, rows.c + rows.A[:, 0] * 5.0, rows.r_fixed, rows.r_noise,
                          rows.joint, rows.t_start, rows.t_end)
    lps.add(shifted)
    assert lps.solve(x_lo, x_hi).status == "inconsistent"


def test_rows_of_another_layout_are_refused(stream):
    _, rows, x_lo, _ = stream
    lps = IncrementalBox(len(x_lo) - 1, max_rows=10)
    with pytest.raises(ValueError, match="columns"):
        lps.add(rows)


def test_zero_row_outside_its_band_is_inconsistent(stream):
    _, rows, x_lo, x_hi = stream
    lps = IncrementalBox(len(x_lo), max_rows=10**6)
    assert lps.solve(x_lo, x_hi).status == "insufficient_data"
    zero = rows.take(slice(0, 1))
    lps.add(PayloadRows(np.zeros_like(zero.A), zero.r + 1.0, zero.r_fixed, zero.r_noise,
                        zero.joint, zero.t_start, zero.t_end))
    lps.add(rows)
    assert lps.solve(x_lo, x_hi).status == "inconsistent"
