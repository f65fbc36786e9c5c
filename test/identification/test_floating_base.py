"""Payload identification on the standing B1 + Z1 (floating base, trunk IMU): sysid_ros.
identification.base_motion and the floating-base rows of windows/problem.

Independent references: Pinocchio's full-body RNEA (the effective-gravity reduction), finite
perturbations of the IMU inputs (the radius rows), and the MuJoCo simulator's truth (the boxes),
whose B1 stands on its feet with real contacts while the Z1 moves, so the trunk moves as a
standing robot's does (measured and printed below). The IMU readings fed to the identifier are
corrupted AT the stated bounds: a constant bias of ±bias_abs per axis plus uniform noise in
±noise_abs per sample (gyro and accelerometer).
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

from sysid_ros._src.identification import MomentumWindows, OnlineIdentifier, PayloadProblem, \
    identify, load_identification_config
from sysid_ros._src.identification.base_motion import arm_regressors, base_motion, imu_mount
from sysid_ros._src.simulation.synthetic import FloatingRun, simulate_standing, write_bag, \
    z1_payload
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import dumbbell_for

NOISE = 0.1


@pytest.fixture(scope="module")
def b1():
    return load_robot("b1_z1")


@pytest.fixture(scope="module")
def cfg(b1):
    return load_identification_config(b1, friction="config", torque_noise_abs=NOISE,
                                      torque_noise_rel=0.0)


def corrupted_imu(run: FloatingRun, bounds, rng: np.random.Generator,
                  bias_scale: float = 1.0) -> SimpleNamespace:
    """The simulator's IMU with a constant bias at ±bias_scale × the bias bound (random sign
    per axis) plus uniform noise at the noise bound."""
    n = run.run.t.size
    gyro = (run.gyro + rng.choice([-1.0, 1.0], 3) * bounds.gyro_bias_abs * bias_scale
            + rng.uniform(-1, 1, (n, 3)) * bounds.gyro_noise_abs)
    acc = (run.accel + rng.choice([-1.0, 1.0], 3) * bounds.accel_bias_abs * bias_scale
           + rng.uniform(-1, 1, (n, 3)) * bounds.accel_noise_abs)
    return SimpleNamespace(t=run.run.t, angular_velocity=gyro, linear_acceleration=acc)


@pytest.fixture(scope="module")
def standing(b1):
    """Two standing runs (random payloads up to the Z1's 2 kg, from the law B₀ was derived
    for), 1.2 s each after settling."""
    out = []
    for trial in range(2):
        rng = np.random.default_rng(900 + trial)
        out.append(simulate_standing(b1, rng, z1_payload(rng), duration=1.2,
                                     noise_tau=NOISE))
    return out


def test_arm_rows_need_only_omega_and_specific_force(b1):
    """The reduction base_motion rests on, against Pinocchio's full-body inverse dynamics: the
    arm joints' torques of the floating robot (any base pose, twist and acceleration) equal
    those of the model with the trunk fixed at the origin, rotating at ω, under gravity −f_o
    (f_o the trunk origin's specific force in the trunk frame)."""
    model, data = b1.model, b1.model.createData()
    arm = b1.v_index[[b1.joint_names.index(j) for j in b1.config["arm_joints"]]]
    rng = np.random.default_rng(1)
    for _ in range(5):
        q = pin.randomConfiguration(model)
        q[:3] = rng.normal(size=3)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        tau = pin.rnea(model, data, q, v, a)[arm]
        rot = pin.Quaternion(q[3:7]).toRotationMatrix()
        f_o = a[:3] + np.cross(v[3:6], v[:3]) - rot.T @ model.gravity.linear
        fixed = model.copy()
        fixed.gravity.linear = -f_o
        q2, v2, a2 = q.copy(), v.copy(), a.copy()
        q2[:7] = [0, 0, 0, 0, 0, 0, 1]
        v2[:3] = 0.0
        a2[:3] = 0.0
        tau2 = pin.rnea(fixed, fixed.createData(), q2, v2, a2)[arm]
        np.testing.assert_allclose(tau2, tau, atol=1e-9)
        # and a wrong base acceleration changes them: the check can fail
        assert np.abs(pin.rnea(model, data, q, v, a + np.r_[1.0, 0, 0, 0, 0, 0, np.zeros(
            model.nv - 6)])[arm] - tau).max() > 1e-3


def _column_box(b1, cfg, win):
    """(lower, upper, |θ|max) of the window's body columns: θ_r's box and B₀."""
    problem = PayloadProblem(b1, cfg)
    lo, hi = np.zeros(b1.n_bodies * 10), np.zeros(b1.n_bodies * 10)
    lo[problem._other], hi[problem._other] = cfg.theta_r_box
    lo[problem._ee], hi[problem._ee] = cfg.prior.lower, cfg.prior.upper
    lo, hi = lo[win.cols], hi[win.cols]
    return lo, hi, np.maximum(np.abs(lo), np.abs(hi))


def test_radius_rows_cover_imu_perturbations(b1, cfg):
    """Finite perturbations of ω and of the effective gravity within ±ε change W_m·θ and W_c·θ
    by at most r_m·|θ| and r_c·|θ| (θ anywhere in the θ_r box × B₀), and the bound is tight
    (attained to within 2x) for the worst sign pattern of θ."""
    win = MomentumWindows(b1, cfg, rate_hz=500.0)
    arm = win.arm
    rng = np.random.default_rng(2)
    n = 8
    q = np.tile(b1.config["simulation"]["home"], (n, 1)) + rng.uniform(-0.3, 0.3, (n, b1.nj))
    dq = rng.uniform(-1.5, 1.5, (n, b1.nj))
    omega = rng.uniform(-0.1, 0.1, (n, 3))
    grav = np.array([0.0, 0.0, -9.81]) + rng.uniform(-0.5, 0.5, (n, 3))
    eps_w, eps_g = np.full((n, 3), 0.01), np.full((n, 3), 0.1)
    base = np.concatenate([omega, grav, eps_w, eps_g], axis=1)
    w_m, w_c, r_m, r_c, *_ = arm_regressors(arm, q, dq, base, np.zeros(3))
    lo, hi, th_max = _column_box(b1, cfg, win)
    worst = 0.0
    for _ in range(40):
        d_w = rng.choice([-1.0, 1.0], (n, 3)) * eps_w * rng.uniform(0.5, 1.0, (n, 1))
        d_g = rng.choice([-1.0, 1.0], (n, 3)) * eps_g * rng.uniform(0.5, 1.0, (n, 1))
        exact = np.concatenate([omega + d_w, grav + d_g, 0 * eps_w, 0 * eps_g], axis=1)
        w_m2, w_c2, *_ = arm_regressors(arm, q, dq, exact, np.zeros(3))
        for theta in (rng.uniform(lo, hi), None):
            dm, dc = w_m2 - w_m, w_c2 - w_c
            if theta is None:      # the worst vertex for W_c's change of the first sample/row
                theta = np.where(dc[0, 0] >= 0, hi, lo)
            assert np.all(np.abs(dm @ theta) <= r_m @ th_max + 1e-9)
            assert np.all(np.abs(dc @ theta) <= r_c @ th_max + 1e-9)
            worst = max(worst, float(np.max(np.abs(dc @ theta) / (r_c @ th_max))))
    assert worst > 0.5, worst


def test_radius_rows_cover_joint_velocity_errors(b1, cfg):
    """With an error bound ε on the arm joints' measured velocities, finite perturbations of
    those velocities (and of ω) within their bounds change W_m·θ and W_c·θ by at most
    r_m·|θ| and r_c·|θ| (θ in the θ_r box × B₀); the velocity directions do add to the radius,
    and without them (ε = 0) the same perturbations exceed it (the check can fail)."""
    win = MomentumWindows(b1, cfg, rate_hz=500.0)
    arm = win.arm
    rng = np.random.default_rng(4)
    n = 8
    q = np.tile(b1.config["simulation"]["home"], (n, 1)) + rng.uniform(-0.3, 0.3, (n, b1.nj))
    dq = rng.uniform(-1.5, 1.5, (n, b1.nj))
    eps_w = np.full((n, 3), 0.005)
    base = np.concatenate([rng.uniform(-0.1, 0.1, (n, 3)),
                           np.array([0.0, 0.0, -9.81]) + rng.uniform(-0.5, 0.5, (n, 3)), eps_w,
                           np.zeros((n, 3))], axis=1)
    joint_eps = np.full(arm.kept.size, 0.02)
    w_m, w_c, r_m, r_c, *_ = arm_regressors(arm, q, dq, base, np.zeros(3), joint_eps)
    _, _, r_m0, r_c0, *_ = arm_regressors(arm, q, dq, base, np.zeros(3))
    assert np.all(r_c >= r_c0) and np.max(r_c - r_c0) > 0 and np.max(r_m - r_m0) > 0
    lo, hi, th_max = _column_box(b1, cfg, win)
    beyond_zero = 0.0
    for _ in range(40):
        d_q = np.zeros((n, b1.nj))
        d_q[:, arm.kept] = rng.choice([-1.0, 1.0], (n, arm.kept.size)) * joint_eps
        d_w = rng.choice([-1.0, 1.0], (n, 3)) * eps_w
        true_base = base.copy()
        true_base[:, 0:3] += d_w
        true_base[:, 6:] = 0.0
        w_m2, w_c2, *_ = arm_regressors(arm, q, dq + d_q, true_base, np.zeros(3))
        theta = rng.uniform(lo, hi)
        dm, dc = w_m2 - w_m, w_c2 - w_c
        assert np.all(np.abs(dm @ theta) <= r_m @ th_max + 1e-9)
        assert np.all(np.abs(dc @ theta) <= r_c @ th_max + 1e-9)
        beyond_zero = max(beyond_zero, float(np.max(np.abs(dm @ theta) - r_m0 @ th_max)))
    assert beyond_zero > 0.0


def test_window_rows_cover_constant_biases(b1, cfg, standing):
    """Whole windows from the simulator: rows built from IMU readings with a constant gyro and
    accelerometer bias plus noise (all at the bounds) differ from the rows of the exact IMU by
    at most their IMU radius, once the accelerometer bias's term −Σ_a b_a·G_a·θ is added (the
    term the LP carries as unknowns); without that term they do not (the check can fail)."""
    run = standing[0]
    theta = np.zeros(b1.n_bodies * 10)
    problem = PayloadProblem(b1, cfg)
    theta[problem._other] = cfg.theta_r_nominal
    theta[problem._ee] = run.run.theta_e
    rng = np.random.default_rng(3)
    mount, bounds = imu_mount(b1), cfg.imu
    r = run.run
    sl = slice(0, 300)

    def rows(imu):
        base = base_motion(mount, bounds, imu.t[sl], imu.angular_velocity[sl],
                           imu.linear_acceleration[sl], r.t[sl])
        return MomentumWindows(b1, cfg, rate_hz=1e3).extend(r.t[sl], r.q[sl], r.dq[sl],
                                                            r.tau_meas[sl], base)

    exact = rows(SimpleNamespace(t=r.t, angular_velocity=run.gyro, linear_acceleration=run.accel))
    noisy_imu = corrupted_imu(run, bounds, rng)
    noisy = rows(noisy_imu)
    b_acc = np.mean(noisy_imu.linear_acceleration - run.accel, axis=0)   # bias (noise averages)
    b_acc = np.sign(b_acc) * bounds.accel_bias_abs
    th_max = np.abs(theta)
    radius = (noisy.base_W @ th_max
              + bounds.gyro_bias_abs * np.abs(noisy.D_omega).sum(axis=1) @ th_max)
    # effective gravity g = −f: the biased reading's ĝ = g − b, so the true row is
    # Ŵ·θ − Σ_a b_a·G_a·θ
    corrected = noisy.W @ theta - np.einsum("a,nat,t->n", b_acc, noisy.G, theta)
    assert np.all(np.abs(corrected - exact.W @ theta) <= radius + 1e-9)
    assert np.any(np.abs(noisy.W @ theta - exact.W @ theta) > radius)


def test_standing_boxes_contain_the_truth(b1, cfg, standing):
    """Sound boxes on the standing B1 with IMU errors at the bounds; the trunk moves by mm and
    mrad (printed)."""
    for k, run in enumerate(standing):
        pos_mm = np.ptp(run.trunk_position, axis=0) * 1e3
        rot_mrad = np.ptp(run.trunk_rotation, axis=0) * 1e3
        print(f"trial {k}: trunk motion {pos_mm.round(2)} mm, {rot_mrad.round(2)} mrad, "
              f"|ω|max {np.abs(run.gyro).max():.3f} rad/s")
        assert np.max(pos_mm) > 0.5 and np.max(rot_mrad) > 0.5      # the trunk does move
        theta = run.run.theta_e
        assert np.all(cfg.prior.lower <= theta) and np.all(theta <= cfg.prior.upper)   # in B₀
        imu = corrupted_imu(run, cfg.imu, np.random.default_rng(10 + k))
        res = identify(b1, cfg, run.run.t, run.run.q, run.run.dq, run.run.tau_meas, "lp",
                       imu=imu, point_estimate=False)
        assert res.status == "ok", res.reason
        assert res.contains(run.run.theta_e), (k, res.lower, run.run.theta_e, res.upper)
        # informative: the mass interval is well inside the prior's [0.85, 3.3] kg
        assert res.upper[0] - res.lower[0] < 0.7 * cfg.prior.width[0]


def test_imu_bias_above_the_bound_is_detected(b1, cfg, standing):
    """20x the stated IMU biases: the rows contradict each other (inconsistent), no box."""
    run = standing[0]
    imu = corrupted_imu(run, cfg.imu, np.random.default_rng(5), bias_scale=20.0)
    res = identify(b1, cfg, run.run.t, run.run.q, run.run.dq, run.run.tau_meas, "lp", imu=imu,
                   point_estimate=False)
    assert res.status == "inconsistent"


def test_payload_swap_is_inconsistent(tmp_path, b1, cfg):
    """A 0.5 kg dumbbell swapped for a 2 kg one mid-recording: inconsistent (library), exit 3
    (sysid-identify on the bag)."""
    from sysid_ros._src.identification.identify_cli import main

    run = simulate_standing(b1, np.random.default_rng(3), dumbbell_for(b1, 0.5), duration=1.6,
                            noise_tau=NOISE, swap=(0.8, dumbbell_for(b1, 2.0)))
    imu = corrupted_imu(run, cfg.imu, np.random.default_rng(6))
    res = identify(b1, cfg, run.run.t, run.run.q, run.run.dq, run.run.tau_meas, "lp", imu=imu,
                   point_estimate=False)
    assert res.status == "inconsistent"
    bag = _bag_with_imu(tmp_path / "swap", run, imu, b1.joint_names)
    assert main(["--robot", "b1_z1", "--bag", str(bag), "--out", str(tmp_path / "r.json"),
                 "--friction", "config", "--torque-noise-abs", str(NOISE), "--imu-topic",
                 "/trunk/imu", "--no-progress"]) == 3


def test_missing_imu_means_no_window_there(b1, cfg, standing):
    """An IMU gap longer than max_gap: no window spans it (fewer windows), never a wrong row;
    no IMU at all is refused."""
    from sysid_ros._src.identification import SampleError

    run = standing[1]
    imu = corrupted_imu(run, cfg.imu, np.random.default_rng(7))
    full = identify(b1, cfg, run.run.t, run.run.q, run.run.dq, run.run.tau_meas, "lp", imu=imu,
                    point_estimate=False)
    keep = (run.run.t < run.run.t[0] + 0.5) | (run.run.t > run.run.t[0] + 0.7)
    gap = SimpleNamespace(t=imu.t[keep], angular_velocity=imu.angular_velocity[keep],
                          linear_acceleration=imu.linear_acceleration[keep])
    part = identify(b1, cfg, run.run.t, run.run.q, run.run.dq, run.run.tau_meas, "lp", imu=gap,
                    point_estimate=False)
    assert part.windows_used < full.windows_used - 4
    assert part.status == "ok" and part.contains(run.run.theta_e)
    with pytest.raises(SampleError, match="IMU"):
        identify(b1, cfg, run.run.t, run.run.q, run.run.dq, run.run.tau_meas, "lp")


def test_online_floating_base_matches_offline_windows(b1, cfg, standing):
    """OnlineIdentifier fed joint states and IMU in interleaved chunks (the IMU arriving late)
    forms windows over the whole run and a box containing the truth. (Window counts may differ
    from offline by the stride's rounding: online measures the rate from the first samples.)"""
    run = standing[0]
    imu = corrupted_imu(run, cfg.imu, np.random.default_rng(8))
    online = OnlineIdentifier(b1, cfg, method="lp", point_estimate=False)
    r = run.run
    for s in range(0, r.t.size, 100):
        e = s + 100
        online.add_samples(r.t[s:e], r.q[s:e], r.dq[s:e], r.tau_meas[s:e])
        if s:
            p = s - 100   # the IMU lags one chunk behind
            online.add_imu(imu.t[p:s], imu.angular_velocity[p:s], imu.linear_acceleration[p:s])
        online.update()
    online.add_imu(imu.t[p + 100:], imu.angular_velocity[p + 100:],
                   imu.linear_acceleration[p + 100:])
    online.update()
    plan = online.windows.plan
    assert plan is not None
    # no IMU at all: joint samples wait hold_s for it, then are given up — never a window
    blind = OnlineIdentifier(b1, cfg, method="lp", point_estimate=False)
    blind.add_samples(r.t, r.q, r.dq, r.tau_meas)
    assert blind.windows_used == 0 and blind.samples == 0
    assert online.windows_used == (r.t.size - 1 - plan.window) // plan.stride + 1
    assert online.imu is not None and online.imu.n_rejected == 0
    assert online.status == "ok"
    assert np.all(online.lower <= r.theta_e) and np.all(r.theta_e <= online.upper)


@pytest.mark.slow
def test_ten_payloads_boxes_contain_the_truth(b1, cfg):
    """≥ 10 random payloads (0–2 kg), IMU errors at the bounds: every box contains the truth."""
    widths = []
    for trial in range(10):
        rng = np.random.default_rng(1000 + trial)
        run = simulate_standing(b1, rng, z1_payload(rng), duration=1.0, noise_tau=NOISE)
        theta = run.run.theta_e
        assert np.all(cfg.prior.lower <= theta) and np.all(theta <= cfg.prior.upper)   # in B₀
        imu = corrupted_imu(run, cfg.imu, rng)
        res = identify(b1, cfg, run.run.t, run.run.q, run.run.dq, run.run.tau_meas, "lp",
                       imu=imu, point_estimate=False)
        assert res.status == "ok", (trial, res.reason)
        assert res.contains(run.run.theta_e), trial
        widths.append(res.upper[0] - res.lower[0])
    print(f"mass interval widths (kg): {np.round(widths, 3).tolist()}")


def _bag_with_imu(path, run: FloatingRun, imu, names, with_imu: bool = True):
    return write_bag(path, run.run, names, imu if with_imu else None, imu_topic="/trunk/imu")


def test_cli_b1_bag(tmp_path, b1, cfg, standing, capsys):
    """sysid-identify --robot b1_z1 on an MCAP bag with joint_states and the trunk IMU: exit 0
    with a box containing the truth; without the IMU topic: exit 2 naming the topic."""
    import json

    from sysid_ros._src.identification.identify_cli import main

    run = standing[1]
    imu = corrupted_imu(run, cfg.imu, np.random.default_rng(11))
    bag = _bag_with_imu(tmp_path / "b1", run, imu, b1.joint_names)
    out = tmp_path / "r.json"
    args = ["--robot", "b1_z1", "--bag", str(bag), "--out", str(out), "--friction", "config",
            "--torque-noise-abs", str(NOISE), "--no-progress"]
    assert main(args + ["--imu-topic", "/trunk/imu"]) == 0
    doc = json.loads(out.read_text())
    lo, hi = np.array(doc["lower"]), np.array(doc["upper"])
    assert np.all(lo <= run.run.theta_e) and np.all(run.run.theta_e <= hi)
    assert doc["imu_topic"] == "/trunk/imu" and "imu_bounds" in doc["assumptions"]
    capsys.readouterr()
    assert main(args) == 2                        # default /imu is not in this bag
    assert "/imu" in capsys.readouterr().err
    bare = _bag_with_imu(tmp_path / "bare", run, imu, b1.joint_names, with_imu=False)
    assert main(args + ["--bag", str(bare), "--imu-topic", "/trunk/imu"]) == 2
    assert "/trunk/imu" in capsys.readouterr().err


def test_imu_bounds_are_required_and_checked(b1, tmp_path):
    """The floating-base robot file must state its IMU bounds; bad values name the key."""
    import copy

    import yaml

    from sysid_ros._src.identification import IdentificationConfigError

    for edit, key in ((lambda sec: sec.pop("imu"), "identification.imu"),
                      (lambda sec: sec["imu"].update(accel_bias_abs=-0.1),
                       "identification.imu.accel_bias_abs"),
                      (lambda sec: sec["imu"].pop("gyro_noise_abs"),
                       "identification.imu.gyro_noise_abs")):
        cfg = copy.deepcopy(b1.config)
        edit(cfg["identification"])
        path = tmp_path / "b1.yaml"
        path.write_text(yaml.safe_dump(cfg))
        robot = load_robot(str(path))
        with pytest.raises(IdentificationConfigError, match=key.replace(".", r"\.")):
            load_identification_config(robot)


def test_sensitivity_method_is_refused_for_a_floating_base(b1, cfg, standing):
    from sysid_ros._src.identification import IdentificationConfigError

    r = standing[0].run
    with pytest.raises(IdentificationConfigError, match="sensitivity"):
        identify(b1, cfg, r.t, r.q, r.dq, r.tau_meas, "sensitivity",
                 imu=corrupted_imu(standing[0], cfg.imu, np.random.default_rng(1)))


def test_interpolated_imu_within_its_radius(b1, cfg, standing):
    """IMU at half the joint rate (every other stamp): interpolated to the joint stamps, ω and
    the effective gravity stay within ε of the simulator's exact values there (the rate bounds
    hold in the simulator: measured |ω̇|, |ḟ| below angular_accel_abs, jerk_abs), and the
    radius is zero on the IMU's own stamps."""
    import dataclasses

    run = standing[0]
    r = run.run
    dt = np.diff(r.t)[:, None]
    assert np.abs(np.diff(run.gyro, axis=0) / dt).max() < cfg.imu.angular_accel_abs
    assert np.abs(np.diff(run.accel, axis=0) / dt).max() < cfg.imu.jerk_abs
    exact_bounds = dataclasses.replace(cfg.imu, gyro_noise_abs=0.0, accel_noise_abs=0.0)
    half = slice(1, None, 2)
    motion = base_motion(imu_mount(b1), exact_bounds, r.t[half], run.gyro[half],
                         run.accel[half], r.t)
    inside = motion.valid
    assert inside[1:-1].all()
    assert np.all(np.abs(motion.omega - run.gyro)[inside] <= motion.eps_omega[inside] + 1e-12)
    assert np.all(np.abs(motion.gravity + run.accel)[inside]
                  <= motion.eps_gravity[inside] + 1e-12)
    assert np.all(motion.eps_omega[half][inside[half]] == 0.0)
    # with the rate bound 100x too small the interpolation error is not covered: can fail
    tight = dataclasses.replace(exact_bounds, jerk_abs=exact_bounds.jerk_abs / 100)
    m2 = base_motion(imu_mount(b1), tight, r.t[half], run.gyro[half], run.accel[half], r.t)
    assert np.any(np.abs(m2.gravity + run.accel)[inside] > m2.eps_gravity[inside] + 1e-12)
