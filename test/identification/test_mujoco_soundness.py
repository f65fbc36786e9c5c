"""Sound boxes on data from the built-in MuJoCo simulator (an engine independent of the
identifier's Pinocchio-based regressors), with the truth known from ``true_theta_e``.

Assumptions of the claim, as set up here: torque noise uniform within the configured ±0.1 N·m,
exact positions/velocities (encoder quantisation off), the simulated robot is the nominal one
(inside the 5 % θ_r box; friction/armature at their nominal values, inside their boxes; Gen3
Fc = 0), rigid payload, 4 kHz samples. MuJoCo's semi-implicit Euler step (zero-order-hold
torque) departs from the continuous momentum law by ≤ ~5e-3 N·m·s per 0.1 s window, about 6 %
of the smallest row radius — covered by the radii, not assumed away (checked below).
"""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.identification import identify, load_identification_config
from sysid_ros._src.simulation.synthetic import random_payload, simulate_mujoco
from .conftest import payload_rows
from sysid_ros._src.simulation import DUMBBELLS_KG, dumbbell_for

N_TRIALS = 10
NOISE = 0.1


def _payload(gen3, rng, trial):
    if trial % 2:
        return dumbbell_for(gen3, DUMBBELLS_KG[trial // 2 % len(DUMBBELLS_KG)])
    return random_payload(rng, 4.0)


@pytest.fixture(scope="module")
def runs(gen3):
    out = []
    for trial in range(N_TRIALS):
        rng = np.random.default_rng(500 + trial)
        out.append(simulate_mujoco(gen3, rng, _payload(gen3, rng, trial), duration=1.2,
                                   noise_tau=NOISE))
    return out


@pytest.fixture(scope="module")
def cfg(gen3):
    return load_identification_config(gen3, friction="config", torque_noise_abs=NOISE, torque_noise_rel=0.0,
                                      robot_uncertainty_rel=0.05)


@pytest.mark.slow
def test_box_contains_mujoco_truth_every_trial(gen3, runs, cfg):
    misses = {"lp": [], "lp-cuts": []}
    mass_w, inertia_w = [], {"lp": [], "lp-cuts": []}
    for k, run in enumerate(runs):
        res = {m: identify(gen3, cfg, run.t, run.q, run.dq, run.tau_meas, m,
                           point_estimate=False) for m in misses}
        for m, r in res.items():
            assert r.status == "ok", (k, m, r.status)
            if not r.contains(run.theta_e):
                misses[m].append(k)
            inertia_w[m].append(np.sum(r.upper[4:] - r.lower[4:]))
        # cuts only remove parameters no rigid body has: the box is inside the LP box
        pad = 2e-5 * cfg.prior.width   # solver-tolerance pads differ
        assert np.all(res["lp-cuts"].lower >= res["lp"].lower - pad)
        assert np.all(res["lp-cuts"].upper <= res["lp"].upper + pad)
        mass_w.append(res["lp"].upper[0] - res["lp"].lower[0])
    assert misses == {"lp": [], "lp-cuts": []}
    prior = cfg.prior.width
    assert np.median(mass_w) < 0.6 * prior[0]          # not vacuous: the data inform m
    # and the cuts inform the inertia entries the LP leaves near B₀
    assert np.median(inertia_w["lp-cuts"]) < 0.97 * np.median(inertia_w["lp"])


def test_cuts_and_sdp_tighten_and_keep_truth(gen3, runs, cfg):
    run = runs[1]   # a dumbbell
    boxes = {m: identify(gen3, cfg, run.t, run.q, run.dq, run.tau_meas, m,
                         point_estimate=False) for m in ("lp", "lp-cuts", "lp-lmi")}
    for m, res in boxes.items():
        assert res.status == "ok" and res.contains(run.theta_e), m
    pad = 2e-5 * cfg.prior.width
    for m in ("lp-cuts", "lp-lmi"):
        assert np.all(boxes[m].lower >= boxes["lp"].lower - pad)
        assert np.all(boxes[m].upper <= boxes["lp"].upper + pad)
        assert np.sum(boxes[m].upper[4:] - boxes[m].lower[4:]) \
            < np.sum(boxes["lp"].upper[4:] - boxes["lp"].lower[4:])


def test_discretisation_residual_is_small_against_radii(gen3, runs, cfg):
    """The truth's row residual |Yθ − U| with noise-free torques stays far inside r."""
    run = runs[3]
    rows = payload_rows(gen3, cfg, run.t, run.q, run.dq, run.tau)
    ratio = np.abs(rows.A @ run.theta_e - rows.c) / rows.r
    assert ratio.max() < 0.25


def test_noise_beyond_bound_is_flagged_or_still_sound(gen3):
    """Torque noise 10× the assumed bound, exact robot model: never an ok box without the
    truth, and the violation is detected (status inconsistent)."""
    rng = np.random.default_rng(77)
    run = simulate_mujoco(gen3, rng, dumbbell_for(gen3, 2.72), duration=0.9, noise_tau=0.5)
    tight = load_identification_config(gen3, friction="config", torque_noise_abs=0.05, robot_uncertainty_rel=0.0)
    tight = tight.with_overrides(friction_radius=0.0 * tight.friction_radius)
    # bias the sensor (a miscalibrated offset) on top of the over-size noise
    res = identify(gen3, tight, run.t, run.q, run.dq, run.tau_meas + 0.3, "lp-cuts",
                   point_estimate=False)
    assert res.status == "inconsistent" or res.contains(run.theta_e)
    assert res.status == "inconsistent"


def _z1_rated_run(z1, seed: int, duration: float, noise: float):
    """A random rated-class Z1 payload (0-2 kg, CoM where the ``rated`` prior documents it)
    simulated in MuJoCo with ±``noise`` N·m torque noise; samples at 1 kHz of the 4 kHz physics:
    (run, the 1 kHz selection)."""
    rng = np.random.default_rng(seed)
    pay = random_payload(rng, 2.0, com_lower=(-0.05, -0.08, -0.08),
                         com_upper=(0.25, 0.08, 0.08), size_max=0.12)
    return simulate_mujoco(z1, rng, pay, duration=duration, noise_tau=noise), slice(None, None, 4)


@pytest.mark.slow
def test_z1_box_contains_truth_for_random_payloads_and_refuses_a_swap(z1):
    """The Z1 (no armature, light wrist, 1-2 N·m of set-valued Coulomb friction that the
    simulator applies exactly, docs/theory/simulation.md#built-in-simulator): ten random rigid payloads of the rated
    class (0-2 kg, CoM in the region the ``rated`` prior documents), ±0.2 N·m noise at 1 kHz:
    every box is ``ok`` and holds the truth. Swapping the payload mid-recording breaks the
    rigid-payload assumption: the result is ``inconsistent``, never a box."""
    cfg = load_identification_config(z1, prior="rated", friction="config",
                                      torque_noise_abs=0.2, torque_noise_rel=0.0)
    runs, mass_w = [], []
    for trial in range(10):
        run, sel = _z1_rated_run(z1, 900 + trial, duration=0.6, noise=0.2)
        res = identify(z1, cfg, run.t[sel], run.q[sel], run.dq[sel], run.tau_meas[sel], "lp",
                       point_estimate=False)
        assert res.status == "ok", (trial, res.status, res.reason)
        assert res.contains(run.theta_e), (trial, res.lower, run.theta_e, res.upper)
        mass_w.append(res.upper[0] - res.lower[0])
        runs.append((run, sel))
    assert np.median(mass_w) < cfg.prior.width[0]   # the data inform m
    (a, sel), (b, _) = runs[0], runs[1]
    assert abs(a.theta_e[0] - b.theta_e[0]) > 0.3
    swapped = identify(z1, cfg, np.concatenate([a.t[sel], b.t[sel] + a.t[-1] + 1e-3]),
                       *(np.concatenate([getattr(a, k)[sel], getattr(b, k)[sel]])
                         for k in ("q", "dq", "tau_meas")), "lp", point_estimate=False)
    assert swapped.status == "inconsistent" and swapped.lower is None


@pytest.mark.slow
def test_z1_bench_setting_holds_truth_per_row_and_shared_links(z1):
    """The identification of bench/bench_z1_excitation (rated prior, catalogue friction box,
    ±0.3 N·m — the Z1's current-estimated torque — at 1 kHz) in both θ_r forms the bench
    diagnoses: per-row radii and θ_r as shared LP unknowns. Ten random rated-class payloads:
    every box is ``ok`` and holds the truth, and the shared form is never wider (its feasible
    set is the per-row one with θ_r forced equal across windows, a subset)."""
    cfg = load_identification_config(z1, prior="rated", friction="config",
                                      torque_noise_abs=0.3, torque_noise_rel=0.0)
    shared_cfg = cfg.with_overrides(theta_r_unknowns=True)
    widths = []
    for trial in range(10):
        run, sel = _z1_rated_run(z1, 1900 + trial, duration=0.8, noise=0.3)
        data = (run.t[sel], run.q[sel], run.dq[sel], run.tau_meas[sel])
        per_row = identify(z1, cfg, *data, "lp", point_estimate=False)
        shared = identify(z1, shared_cfg, *data, "lp", point_estimate=False)
        for name, res in (("per-row", per_row), ("shared", shared)):
            assert res.status == "ok", (trial, name, res.status, res.reason)
            assert res.contains(run.theta_e), (trial, name, res.lower, run.theta_e, res.upper)
        w_row, w_shared = per_row.upper - per_row.lower, shared.upper - shared.lower
        assert np.all(w_shared <= w_row + 1e-3 * cfg.prior.width), trial
        widths.append((w_row[0], w_shared[0]))
    assert np.median(np.array(widths)[:, 0]) < cfg.prior.width[0]
