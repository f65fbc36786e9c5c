"""Controller math against independent Pinocchio evaluations (CRBA, Coriolis matrix, gravity)."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.control.controller import (ControllerGains, PidGains, RobustController)
from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.errors import BoxError
from sysid_ros._src.control.errors import BoundsError, ControllerConfigError
from sysid_ros._src.model.robots import load_robot


@pytest.fixture(scope="module")
def gen3():
    return load_robot("gen3")


def _box(robot, mass=3.63):
    th = robot.theta_e()
    pay = pin.Inertia(mass, np.array([0.0, 0.0, -0.2]), np.diag([0.01, 0.01, 0.002]))
    truth = th + pay.toDynamicParameters()
    rad = 0.1 * np.abs(truth) + 1e-3
    return theta_e_box(truth - rad, truth + rad, truth), truth


def _reference_tau(robot, theta, fric, q, dq, dq_a, ddq_a, sigma=None):
    """H q̈_a + C(q,q̇) q̇_a + g + friction, from a model carrying θ (no regressors); the Coulomb
    multiplier σ is sign(q̇) unless given (a stuck joint's is anywhere in [−1, 1])."""
    model = robot.model.copy()
    for i in range(1, model.njoints):
        model.inertias[i] = pin.Inertia.FromDynamicParameters(theta[10 * (i - 1):10 * i])
    data = model.createData()
    h = pin.crba(model, data, q)
    h = np.triu(h) + np.triu(h, 1).T
    c = pin.computeCoriolisMatrix(model, data, q, dq)
    g = pin.computeGeneralizedGravity(model, data, q)
    sigma = np.sign(dq) if sigma is None else sigma
    tau_f = fric[:, 0] * sigma + fric[:, 1] * dq + fric[:, 2] * ddq_a + fric[:, 3]
    return h @ ddq_a + c @ dq_a + g + tau_f


def _state(robot, rng):
    q = robot.random_configuration(rng)
    dq, dq_a, ddq_a = (rng.uniform(-1, 1, robot.nv) for _ in range(3))
    return q, dq, dq_a, ddq_a


def test_torque_interval_contains_random_theta_and_is_tight(gen3):
    box, _ = _box(gen3)
    ctl = RobustController(gen3, ControllerGains(5.0, 20.0, 0.02), prior=box)
    rng = np.random.default_rng(0)
    q, dq, dq_a, ddq_a = _state(gen3, rng)
    itv = ctl.torque_interval(q, dq, dq_a, ddq_a)
    lo_th, hi_th = ctl.theta_c - ctl.theta_rad, ctl.theta_c + ctl.theta_rad
    lo_f, hi_f = ctl.fric_nominal - ctl.fric_radius, ctl.fric_nominal + ctl.fric_radius
    taus = np.array([_reference_tau(gen3, rng.uniform(lo_th, hi_th), rng.uniform(lo_f, hi_f),
                                    q, dq, dq_a, ddq_a) for _ in range(1000)])
    tol = 1e-9 * (1 + np.abs(itv.centre))
    assert np.all(taus >= itv.lower - tol) and np.all(taus <= itv.upper + tol)
    # τ₀ is the reference at the nominal
    np.testing.assert_allclose(
        itv.tau0, _reference_tau(gen3, ctl.theta0, ctl.fric_nominal, q, dq, dq_a, ddq_a),
        atol=1e-9)
    # tight: for each joint the vertex picked by the sign of its regressor row reaches the end
    y = ctl.passivity_regressor(q, dq, dq_a, ddq_a)
    f = ctl.friction_columns(dq, ddq_a)
    for i in range(gen3.nj):
        for s in (1.0, -1.0):
            th = ctl.theta_c + s * np.sign(y[i]) * ctl.theta_rad
            fr = ctl.fric_nominal + s * np.sign(f) * ctl.fric_radius
            tau_i = _reference_tau(gen3, th, fr, q, dq, dq_a, ddq_a)[i]
            end = itv.upper[i] if s > 0 else itv.lower[i]
            assert tau_i == pytest.approx(end, abs=1e-9)
    # and random samples do not reach the ends (so "tight" is not trivially true)
    assert np.all(taus.max(0) < itv.upper)


def test_v_sup_is_sup_of_kinetic_form(gen3):
    box, _ = _box(gen3)
    ctl = RobustController(gen3, ControllerGains(5.0, 20.0, 0.02), prior=box)
    rng = np.random.default_rng(1)
    q = gen3.random_configuration(rng)
    r = rng.normal(size=gen3.nv) * 0.05
    vs = ctl.v_sup(q, r)
    lo_th, hi_th = ctl.theta_c - ctl.theta_rad, ctl.theta_c + ctl.theta_rad
    ia_lo, ia_hi = gen3.friction.lower[:, 2], gen3.friction.upper[:, 2]
    vals = []
    for _ in range(300):
        th = rng.uniform(lo_th, hi_th)
        model = gen3.model.copy()
        for i in range(1, model.njoints):
            model.inertias[i] = pin.Inertia.FromDynamicParameters(th[10 * (i - 1):10 * i])
        h = pin.crba(model, model.createData(), q)
        h = np.triu(h) + np.triu(h, 1).T
        vals.append(0.5 * r @ (h + np.diag(rng.uniform(ia_lo, ia_hi))) @ r)
    assert max(vals) <= vs + 1e-12
    assert max(vals) > 0.9 * vs


def test_robust_input_law(gen3):
    box, _ = _box(gen3)
    g = ControllerGains(5.0, 20.0, 0.02)
    ctl = RobustController(gen3, g, prior=box)
    rng = np.random.default_rng(2)
    q = gen3.random_configuration(rng)
    dq = rng.uniform(-0.3, 0.3, 7)
    qd, dqd, ddqd = q + 0.02, dq + 0.05, np.zeros(7)
    out = ctl.compute(0.0, q, dq, qd, dqd, ddqd)
    expected = max(0.0, -20.0 * (0.02 - out.V_sup) / out.r_norm + out.bound_norm)
    assert out.lam == pytest.approx(expected)
    np.testing.assert_allclose(out.v, expected * out.r / out.r_norm)
    np.testing.assert_allclose(out.tau, np.clip(out.tau0 + out.v, -gen3.limits.tau_max,
                                                gen3.limits.tau_max))
    # below the threshold no robust input
    zero = ctl.compute(0.0, q, dq, q, dq, ddqd)
    assert zero.lam == 0.0 and np.all(zero.v == 0.0)


def test_clipping_flag(gen3):
    box, _ = _box(gen3)
    ctl = RobustController(gen3, ControllerGains(5.0, 20.0, 0.02, torque_limit_scale=0.1),
                           prior=box)
    q = gen3.neutral()
    q[1] = 1.2
    out = ctl.compute(0.0, q, np.zeros(7), q + 0.3, np.zeros(7), np.zeros(7))
    assert out.clipped
    assert np.all(np.abs(out.tau) <= 0.1 * gen3.limits.tau_max + 1e-12)


def test_modes_use_their_models(gen3):
    box, truth = _box(gen3)
    prior = theta_e_box(box.lower - 0.5 * np.abs(box.lower), box.upper + 0.5 * np.abs(box.upper),
                        box.nominal)
    gains = ControllerGains(5.0, 20.0, 0.02)
    wrong = RobustController(gen3, gains, mode="wrong", prior=prior)
    cons = RobustController(gen3, gains, mode="conservative", prior=prior)
    rob = RobustController(gen3, gains, mode="robust", prior=prior)
    for c in (wrong, cons, rob):
        c.set_bounds(box)
    np.testing.assert_allclose(wrong.theta0[gen3.ee_columns], gen3.theta_e())
    assert np.all(wrong.theta_rad == 0) and np.all(wrong.fric_radius == 0)
    np.testing.assert_allclose(cons.theta_rad[gen3.ee_columns], prior.upper / 2 - prior.lower / 2)
    np.testing.assert_allclose(rob.theta_rad[gen3.ee_columns], box.radius if hasattr(box, "radius")
                               else (box.upper - box.lower) / 2)
    pid = PidGains(*(np.full(7, k) for k in (100.0, 10.0, 20.0, 0.5)))
    ctl = RobustController(gen3, gains, mode="pid", prior=prior, pid=pid)
    q = gen3.neutral()
    out = ctl.compute(0.0, q, np.zeros(7), q, np.zeros(7), np.zeros(7))
    data = gen3.model.createData()
    model = gen3.model.copy()
    model.inertias[gen3.ee_joint_id] = pin.Inertia.FromDynamicParameters(prior.nominal)
    np.testing.assert_allclose(out.tau0, pin.computeGeneralizedGravity(model, model.createData(), q),
                               atol=1e-9)
    del data


def test_bad_configuration_rejected(gen3):
    box, _ = _box(gen3)
    with pytest.raises(ControllerConfigError):
        RobustController(gen3, ControllerGains(5.0, 20.0, 0.02), mode="fast", prior=box)
    with pytest.raises(ControllerConfigError):
        RobustController(gen3, ControllerGains(-1.0, 20.0, 0.02), prior=box)
    with pytest.raises(ControllerConfigError):
        RobustController(gen3, ControllerGains(5.0, 20.0, 0.02), mode="pid", prior=box)
    with pytest.raises(BoxError, match="parameter 'm': lower > upper"):
        theta_e_box(box.upper, box.lower, box.nominal)
    # a box over other parameters (same length) is refused by name, not used by position
    other = ParameterBox(tuple(f"p{k}" for k in range(10)), lower=box.lower, nominal=box.nominal,
                         upper=box.upper)
    with pytest.raises(BoundsError, match="parameters"):
        RobustController(gen3, ControllerGains(5.0, 20.0, 0.02), prior=other)
    with pytest.raises(ControllerConfigError):
        RobustController(load_robot("b1_z1"), ControllerGains(5.0, 20.0, 0.02), prior=box)


@pytest.fixture(scope="module")
def z1():
    return load_robot("z1")


def _z1_controller(z1, **kw):
    box, _ = _box(z1, mass=1.0)
    gains = ControllerGains(10.0, 20.0, 1e-4, metric="mass", metric_armature=0.01,
                            coulomb_band=0.02, **kw)
    return RobustController(z1, gains, prior=box), box


def test_mass_metric_law_keeps_the_lyapunov_inequality(z1):
    """For the mass metric: whenever V_sup ≥ V_max, rᵀ(Δ − v) ≤ −α(V_sup − V_max) for every Δ
    with |Δ| ≤ bound (the worst is a vertex: Δ = bound∘sign(r)); |v_i| ≤ v_bound_i plus the
    α term; v points along the metric P r."""
    ctl, _ = _z1_controller(z1)
    rng = np.random.default_rng(9)
    n_active = 0
    for _ in range(300):
        q = z1.random_configuration(rng)
        dq = rng.uniform(-0.5, 0.5, 6) * (rng.random(6) < 0.7)       # some joints at rest
        e, de = rng.normal(0, 0.02, 6), rng.normal(0, 0.3, 6)
        out = ctl.compute(0.0, q, dq, q + e, dq + de, np.zeros(6))
        itv = ctl.torque_interval(q, dq, dq + de + 10 * e, 10 * de)
        bound = np.maximum(itv.upper - itv.tau0, itv.tau0 - itv.lower)
        worst = bound @ np.abs(out.r)
        alpha_term = 20.0 * max(out.V_sup - 1e-4, 0.0) / out.r_norm
        assert np.all(np.abs(out.v) <= out.v_bound + alpha_term + 1e-9)
        if out.V_sup >= 1e-4:
            n_active += 1
            assert worst - out.r @ out.v <= -20.0 * (out.V_sup - 1e-4) + 1e-9 * (1 + worst)
    assert n_active > 50


def test_mass_metric_direction_and_identity_is_armour(z1):
    ctl, _ = _z1_controller(z1)
    q = np.array([0.0, 1.0, -1.2, 0.2, 0.3, 0.0])
    out = ctl.compute(0.0, q, np.full(6, 0.1), q + 0.01, np.full(6, 0.3), np.zeros(6))
    p = ctl.metric(q)
    gap = 1e-4 - out.V_sup
    v1 = out.v - 20.0 * max(-gap, 0.0) * out.r / out.r_norm ** 2
    np.testing.assert_allclose(np.cross(v1[:3], (p @ out.r)[:3]), 0.0, atol=1e-9 * np.abs(v1).max())
    # the metric is the nominal mass matrix plus the configured diagonal
    h = pin.crba(z1.model, z1.model.createData(), q)
    np.testing.assert_allclose(p, np.triu(h) + np.triu(h, 1).T + 0.01 * np.eye(6), atol=1e-12)


def _coulomb_sigma(dq, band, rng):
    """An admissible Coulomb multiplier: sign(q̇) outside the band, anything in [−1, 1] inside
    (half of the draws at the vertices ±1, where the sup is attained)."""
    inside = np.abs(dq) <= band
    free = np.where(rng.random(dq.size) < 0.5, rng.choice([-1.0, 1.0], dq.size),
                    rng.uniform(-1.0, 1.0, dq.size))
    return np.where(inside, free, np.sign(dq))


def test_coulomb_ramp_bound_holds_and_is_attained(z1):
    """The feed-forward's Coulomb term is 0 in the band and ramps to Fc_nom·sign(q̇) at twice
    it; the interval's radius is the exact sup of the error over the admissible friction
    (Pinocchio reference torques, σ anywhere in [−1, 1] in the band): every sampled truth stays
    within [lower, upper], and the vertex — Fc at the end of its box, σ = ±1, the other
    parameters at their regressor-sign vertex — reaches each end exactly. Its Coulomb part is
    F̄ in the band and max(Fc_hi − Fc_nom·|s|, Fc_nom·|s| − Fc_lo) on the ramp: continuous at
    the band's edge and never above the former switch's stuck bound F̄."""
    ctl, _ = _z1_controller(z1)
    band = ctl.gains.coulomb_band
    rng = np.random.default_rng(12)
    lo_th, hi_th = ctl.theta_c - ctl.theta_rad, ctl.theta_c + ctl.theta_rad
    fr_lo, fr_hi = z1.friction.lower, z1.friction.upper
    fc_nom = ctl.fric_nominal[:, 0]
    for frac in (0.0, 0.3, -0.7, 1.0, 1.001, 1.3, -1.6, 2.0, -2.5, 20.0):
        q = z1.random_configuration(rng)
        dq = band * frac * (rng.uniform(0.97, 1.0, 6) if frac not in (1.0, 2.0) else np.ones(6))
        dq_a, ddq_a = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6)
        itv = ctl.torque_interval(q, dq, dq_a, ddq_a)
        # the feed-forward is the reference at the nominal with σ = the ramp (its definition)
        s = np.sign(dq) * np.clip(np.abs(dq) / band - 1.0, 0.0, 1.0)
        np.testing.assert_allclose(itv.tau0, _reference_tau(z1, ctl.theta0, ctl.fric_nominal, q,
                                                            dq, dq_a, ddq_a, sigma=s), atol=1e-9)
        taus = np.array([_reference_tau(z1, rng.uniform(lo_th, hi_th), rng.uniform(fr_lo, fr_hi),
                                        q, dq, dq_a, ddq_a, sigma=_coulomb_sigma(dq, band, rng))
                         for _ in range(300)])
        tol = 1e-9 * (1 + np.abs(itv.centre))
        assert np.all(taus >= itv.lower - tol) and np.all(taus <= itv.upper + tol), frac
        y = ctl.passivity_regressor(q, dq, dq_a, ddq_a)
        f = ctl.friction_columns(dq, ddq_a)
        inside = np.abs(dq) <= band
        for i in range(6):
            # the interval is centre ± radius (θ₀ and the friction nominal at the centres): on
            # the ramp the Coulomb error lies in [Fc_lo − Fc_nom·|s|, Fc_hi − Fc_nom·|s|], so only
            # the side of the larger |error| is reached — the radius is the exact sup of |error|
            errs = []
            for sgn in (1.0, -1.0):
                th = ctl.theta_c + sgn * np.sign(y[i]) * ctl.theta_rad
                fric = np.where(sgn * np.sign(f) > 0, fr_hi, fr_lo)
                sigma = np.sign(dq).copy()
                if inside[i]:          # stuck: the friction at full Fc_hi, either direction
                    fric[i, 0], sigma[i] = fr_hi[i, 0], sgn
                else:                  # sliding: σ = sign(q̇), Fc at the end that pushes τ out
                    fric[i, 0] = fr_hi[i, 0] if sgn * sigma[i] > 0 else fr_lo[i, 0]
                tau_i = _reference_tau(z1, th, fric, q, dq, dq_a, ddq_a, sigma=sigma)[i]
                errs.append(sgn * (tau_i - itv.centre[i]))
            assert max(errs) == pytest.approx(itv.radius[i], abs=1e-9), (frac, i)
        coul = itv.radius - np.abs(y) @ ctl.theta_rad - (ctl.fric_radius[:, 1:] * np.abs(f[:, 1:])
                                                        ).sum(axis=1)
        expect = np.where(inside, fr_hi[:, 0], np.maximum(fr_hi[:, 0] - fc_nom * np.abs(s),
                                                          fc_nom * np.abs(s) - fr_lo[:, 0]))
        np.testing.assert_allclose(coul, expect, atol=1e-9)
        assert np.all(coul <= fr_hi[:, 0] + 1e-9)


def test_coulomb_feed_forward_is_continuous_through_the_band(z1):
    """A joint starting from rest changes the feed-forward by at most Fc_nom·Δq̇/band per step
    of q̇: no 1–2 N·m jump at the band's edge (the step that kicked the standing B1's trunk);
    0 in the band, the full Fc_nom·sign(q̇) beyond twice it. The radius is continuous too."""
    ctl, _ = _z1_controller(z1)
    band = ctl.gains.coulomb_band
    q = np.array([0.0, 1.0, -1.2, 0.2, 0.3, 0.0])
    z = np.zeros(6)
    sweep = np.linspace(-3 * band, 3 * band, 601)
    itvs = [ctl.torque_interval(q, np.full(6, v), z, z) for v in sweep]
    tau0 = np.array([x.tau0 for x in itvs])
    radius = np.array([x.radius for x in itvs])
    dv = sweep[1] - sweep[0]
    fc, fv = ctl.fric_nominal[:, 0], ctl.fric_nominal[:, 1]
    # slope of the ramp plus viscous friction (q̇_a = 0: no Coriolis term)
    assert np.all(np.abs(np.diff(tau0, axis=0)).max(axis=0) <= (fc / band + fv) * dv * 1.001)
    assert np.all(np.abs(np.diff(radius, axis=0)).max(axis=0)
                  <= (fc / band + ctl.fric_radius[:, 1]) * dv * 1.001)
    still = ctl.torque_interval(q, z, z, z).tau0
    inside = np.abs(sweep) <= band
    np.testing.assert_allclose(tau0[inside] - still, np.outer(sweep[inside], fv), atol=1e-12)
    beyond = sweep >= 2 * band
    np.testing.assert_allclose(tau0[beyond] - still, fc + np.outer(sweep[beyond], fv), atol=1e-9)


def test_boundary_layer_keeps_the_inequality_and_makes_v_continuous(z1):
    """η = 1: whenever V_sup ≥ V_max the layered law is the sharp one (so the Lyapunov
    inequality of the test above holds unchanged); below, its robust term is the sharp one's
    scaled by √(V_sup/V_max) ∈ [0, 1) (still inside v_bound), so v → 0 linearly as r → 0 where
    the sharp term keeps a size set by the bound alone: the switching the layer removes."""
    sharp, _ = _z1_controller(z1)
    layered, _ = _z1_controller(z1, boundary_layer=1.0)
    rng = np.random.default_rng(4)
    n_inside = n_outside = 0
    for _ in range(200):
        q = z1.random_configuration(rng)
        dq = rng.uniform(-0.5, 0.5, 6)
        f = rng.choice([0.2, 3.0])                  # inside / outside the V_max level
        e, de = rng.normal(0, 0.002, 6) * f, rng.normal(0, 0.02, 6) * f
        a = sharp.compute(0.0, q, dq, q + e, dq + de, np.zeros(6))
        b = layered.compute(0.0, q, dq, q + e, dq + de, np.zeros(6))
        assert b.V_sup == a.V_sup
        if a.V_sup >= 1e-4:
            n_outside += 1
            np.testing.assert_array_equal(b.v, a.v)
        else:
            n_inside += 1
            np.testing.assert_allclose(b.v, np.sqrt(a.V_sup / 1e-4) * a.v, rtol=1e-12,
                                       atol=1e-15)
            assert np.all(np.abs(b.v) <= b.v_bound + 1e-12)
    assert n_inside > 20 and n_outside > 20
    # along a ray r = s·r₁ (s → 0) the sharp term's size does not shrink with s (only σ's
    # α·V_max offset takes it to 0 at the very end); the layered one shrinks ∝ s
    q = np.array([0.0, 1.0, -1.2, 0.2, 0.3, 0.0])
    dq, r1 = np.full(6, 0.3), np.array([0.2, -0.1, 0.15, 0.3, -0.2, 0.4])
    sizes = []
    for s in (0.02, 0.01, 0.005):
        outs = [c.compute(0.0, q, dq, q, dq + s * r1, np.zeros(6)) for c in (sharp, layered)]
        assert outs[0].V_sup < 1e-4
        sizes.append([np.linalg.norm(o.v) for o in outs])
    sizes = np.asarray(sizes)
    assert sizes[2, 0] > 0.3 * sizes[0, 0]                      # sharp: same order
    np.testing.assert_allclose(sizes[1:, 1] / sizes[:-1, 1],    # layered: v ∝ s² · (1/s)… ∝ s
                               0.5 * sizes[1:, 0] / sizes[:-1, 0], rtol=1e-6)


def test_boundary_layer_above_v_max_is_refused(z1):
    with pytest.raises(ControllerConfigError, match="boundary_layer"):
        _z1_controller(z1, boundary_layer=1.5)
    with pytest.raises(ControllerConfigError, match="boundary_layer"):
        _z1_controller(z1, boundary_layer=-0.1)


def test_layer_exponent_keeps_the_inequality_and_takes_the_gain_to_zero_at_rest(z1):
    """p > ½: whenever V_sup ≥ V_max the law is the sharp one (the Lyapunov inequality above
    unchanged); below, the sharp robust term scaled by (V_sup/V_max)^p ∈ [0, 1) (still inside
    v_bound). Near r = 0 the p = ½ layer keeps a gain set by the bound: the wrist's own
    ∂v₆/∂r₆ stays far above the 1 kHz loop's limit 1/(Δt (M⁻¹)₆₆) however small r is (only σ's
    α·V_max offset lowers it at the very end); with p = 1 every joint's own gain falls ∝ |r|
    and the wrist's ends below that limit: the sampled loop's one-step map tends to I at rest
    (docs/theory/controller.md#law)."""
    sharp, _ = _z1_controller(z1)
    half, _ = _z1_controller(z1, boundary_layer=1.0)
    steep, _ = _z1_controller(z1, boundary_layer=1.0, boundary_layer_exponent=1.0)
    rng = np.random.default_rng(5)
    n_inside = n_outside = 0
    for _ in range(200):
        q = z1.random_configuration(rng)
        dq = rng.uniform(-0.5, 0.5, 6) * (rng.random(6) < 0.7)
        f = rng.choice([0.2, 1.0, 3.0])
        e, de = rng.normal(0, 0.002, 6) * f, rng.normal(0, 0.02, 6) * f
        a = sharp.compute(0.0, q, dq, q + e, dq + de, np.zeros(6))
        b = steep.compute(0.0, q, dq, q + e, dq + de, np.zeros(6))
        if a.V_sup >= 1e-4:
            n_outside += 1
            np.testing.assert_array_equal(b.v, a.v)
        else:
            n_inside += 1
            np.testing.assert_allclose(b.v, a.V_sup / 1e-4 * a.v, rtol=1e-12, atol=1e-15)
            assert np.all(np.abs(b.v) <= b.v_bound + 1e-12)
    assert n_inside > 20 and n_outside > 20
    # each joint's own gain ∂v_i/∂r_i (central differences) along a ray r = s·r₁, s → 0
    q = np.array([0.0, 1.0, -1.2, 0.2, 0.3, 0.0])
    dq, r1, h = np.full(6, 0.3), np.array([0.2, -0.1, 0.15, 0.3, -0.2, 0.4]), 1e-7
    mass = pin.crba(z1.model, z1.model.createData(), q)
    limit6 = 1.0 / (1e-3 * np.linalg.inv(np.triu(mass) + np.triu(mass, 1).T)[5, 5])

    def own_gains(ctl, r):
        out = []
        for i in range(6):
            step = h * np.eye(6)[i]
            hi, lo = (ctl.compute(0.0, q, dq, q, dq + x, np.zeros(6)).v[i]
                      for x in (r + step, r - step))
            out.append((hi - lo) / (2 * h))
        return np.asarray(out)

    assert half.compute(0.0, q, dq, q, dq + 0.02 * r1, np.zeros(6)).V_sup < 1e-4
    g_half, g_steep = ({s: own_gains(c, s * r1) for s in (0.02, 0.005)} for c in (half, steep))
    # p = ½: at a quarter of the ray the wrist's gain is still > 2× the limit (σ alone lowers it)
    assert g_half[0.005][5] > 2.0 * limit6 and g_half[0.005][5] > 0.4 * g_half[0.02][5]
    assert np.all(g_steep[0.005] > 0) and np.all(g_steep[0.005] <= 0.25 * g_steep[0.02])
    assert g_steep[0.005][5] < limit6


def test_layer_exponent_below_one_half_is_refused(z1):
    with pytest.raises(ControllerConfigError, match="boundary_layer_exponent"):
        _z1_controller(z1, boundary_layer=1.0, boundary_layer_exponent=0.4)
