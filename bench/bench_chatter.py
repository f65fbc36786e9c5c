"""Does the robust input switch at the sample rate? (docs/theory/controller.md#law)

Closed loops at 1 kHz against MuJoCo with a 1 kg dumbbell and a box holding the truth:

1. the fixed-base Z1 (the robot file's gains, box centre 0.9 radius off the truth, a 2-s quintic
   move from the simulator's home, as test/control/test_closed_loop.py), with and without the
   boundary layer: max V = ½rᵀMr (MuJoCo's mass matrix) over V_max and the per-joint RMS of the
   command's first difference (N·m per step);
2. the standing B1 + Z1 (the simulator's legs and contacts, the arm-view controller on the arm
   joints, a 2-s quintic move after 0.5 s of holding) for several (V_max, η): max V_sup / V_max,
   the same chatter figure, and the trunk's angular acceleration from the IMU gyro (the mean
   over each 1 ms interval, ``control.arm_view.interval_alpha``, from the start of the motion)
   against ``arm_view.trunk_motion.alpha_max``. ``--b1-delay`` applies each command that many
   periods late (the ROS graph: 1), ``--b1-physics-dt`` sets the physics step (the robot
   file's 1 ms is not converged for the trunk's α: 0.25 ms is, docs/theory/controller.md#law).
   ``--b1-move`` sets the move k (rad per joint): the default moves every joint; a move that
   leaves the wrist at rest (e.g. 0.25,0.1,0,-0.1,0,0, as the demo's task) keeps the wrist in its
   set-valued Coulomb band, where the bound is largest. ``--b1-exponents`` runs each level
   with these values of ``controller.boundary_layer_exponent`` p (``file``: the robot file's;
   0.5: the layer linear in r), docs/theory/controller.md#law. ``--b1-offset`` shifts the reference by a
   constant (rad per joint): joints whose error the law does not overcome stay stuck in their
   dry friction, as the demo's wrist after identification (5.6 mrad on joint 6, −1.7 on joint
   5), the state in which the p = ½ layer switched joint 1 at the sample rate.
   Each run also gives what the arm's joint accelerations alone would do to a free trunk,
   −[M_bb⁻¹ M_ba q̈_a] per interval (MuJoCo's mass matrix), its difference from the trunk's
   measured α and their correlation per trunk axis: how far the legs and contacts hold the
   trunk.
3. the standing B1 + Z1's answer to a torque step on one arm joint (``--b1-torque-step``, N·m;
   0 skips it): the trunk's ‖α‖ over the first interval per N·m, and what a Coulomb reversal
   (a step of 2·Fc between trunk and link) makes of it against ``alpha_max``.

Usage: python -m bench.bench_chatter [--json PATH] [--duration 2.5] [--b1-levels 1e-4,2e-4,1e-3]
       [--b1-move 0.4,-0.2,0.3,0.3,-0.4,0.4] [--b1-exponents file] [--b1-offset 0,0,0,0,0,0]
       [--b1-delay 0] [--b1-physics-dt 0] [--b1-torque-step 2]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from sysid_ros._src import progress
from sysid_ros._src.control.controller import RobustController, gains_from_config
from sysid_ros._src.demo.tracking import command_chatter, z1_tracking_run
from sysid_ros._src.control.arm_view import TrunkMotionBound, arm_view, interval_alpha
from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.model.robots import Robot, load_robot
from sysid_ros._src.planning.trajectory import QuinticTrajectory
from sysid_ros._src.simulation import SimConfig, Simulator, SimulatorSpec, robot_physics_dt
from sysid_ros._src.simulation.offcentre import draw_in_class
from sysid_ros._src.simulation.payload import Payload, dumbbell_for, true_theta_e


B1_MOVE = np.array([0.4, -0.2, 0.3, 0.3, -0.4, 0.4])     # rad: every joint moves


def _rms_step(tau: np.ndarray) -> list[float]:
    return command_chatter(tau).round(3).tolist()


def z1_fixed(eta: float, duration: float) -> dict:
    run = z1_tracking_run("robust", 1e-3, duration, boundary_layer=eta)
    return {"eta": eta, "V_over_V_max": float(run.V_true.max() / run.gains.V_max),
            "clipped": run.clipped, "rms_step_Nm": _rms_step(run.tau)}


def _b1_controller(gain_overrides: dict
                   ) -> tuple[Robot, Payload, np.ndarray, RobustController]:
    """The standing B1 + Z1 carrying a payload drawn off the centre of the 1 kg dumbbell's ±3 %
    class, and the arm-view controller holding that class: (robot, payload, arm joint indices,
    controller). The arm view's d̄
    enclosure (~1 s) is built here, once per controller."""
    import tempfile

    from sysid_ros._src.demo.floating import robot_file_with_prior_box
    # the demo's robot file: d̄ from its payload class (demo.prior_box), as in sysid-demo
    full = load_robot(robot_file_with_prior_box(load_robot("b1_z1"), Path(tempfile.mkdtemp())))
    view = arm_view(full)
    catalogued = true_theta_e(view, dumbbell_for(view, 1.0))
    rad = 0.03 * np.abs(catalogued) + 1e-4
    box = theta_e_box(catalogued - rad, catalogued + rad, catalogued)
    # a payload of the class, not its centre (the controller's nominal)
    payload = draw_in_class(view, box.lower, box.upper, 0).payload
    arm = np.array([full.joint_names.index(n) for n in full.config["arm_joints"]])
    ctl = RobustController(view, gains_from_config(view, gain_overrides), prior=box)
    ctl.set_bounds(box)
    return full, payload, arm, ctl


def _b1_sim(full: Robot, payload: Payload, physics_dt: float | None) -> Simulator:
    """A fresh standing B1 + Z1 (seed 0) at ``physics_dt`` (None: the robot file's)."""
    config = SimConfig(physics_dt=physics_dt or robot_physics_dt(full))
    sim = Simulator(SimulatorSpec(full, payload, config, seed=0))
    sim.reset()
    return sim


def _step_with_reaction(sim: Simulator, tau: np.ndarray, sub: int,
                        arm_dofs: np.ndarray) -> np.ndarray:
    """Step one period (``sub`` physics steps in one call: the standing controller's leg
    feed-forward is computed once per call, so stepping one physics step per call would run
    the stance 4x faster and hold the trunk better — 0.17 against 0.68 rad/s²); returns the trunk
    angular acceleration that the arm's joint accelerations alone would cause on a free
    trunk over the period, −[M_bb⁻¹ M_ba Δq̇_a/Δt] (MuJoCo's mass matrix as the last step
    left it; the free joint's angular part, in the trunk frame as the gyro)."""
    mass = sim.full_mass_matrix()
    m_bb, m_ba = mass[:6, :6], mass[:6, arm_dofs]
    v0 = sim.data.qvel[arm_dofs].copy()
    sim.step(tau, n_steps=sub)
    ddq = (sim.data.qvel[arm_dofs] - v0) / (sub * sim.physics_dt)
    return -np.linalg.solve(m_bb, m_ba @ ddq)[3:6]


def b1_standing(v_max: float, eta: float, duration: float,
                k: np.ndarray = B1_MOVE, exponent: float | None = None,
                offset: np.ndarray | None = None, delay: int = 0,
                physics_dt: float | None = None) -> dict:
    full, payload, arm, ctl = _b1_controller({"boundary_layer": eta, "V_max": v_max,
                                              "boundary_layer_exponent": exponent})
    sim = _b1_sim(full, payload, physics_dt)
    gains = ctl.gains
    q0 = sim.q[arm].copy() + (np.zeros(6) if offset is None else offset)
    traj = QuinticTrajectory(q0, np.zeros(6), np.zeros(6), 2.0)
    sub = int(round(1e-3 / sim.physics_dt))
    taus, gyro, v_sup, react = [], [], [], []
    arm_dofs = np.asarray(sim.mj.dof_adr)[arm]
    for i in range(int(round(duration * 1e3))):
        t = i * 1e-3
        qd, dqd, ddqd = (x[0] for x in traj.sample(np.array([min(max(t - 0.5, 0.0), 2.0)]), k))
        m = sim.measure()
        out = ctl.compute(t, m.q[arm], m.dq[arm], qd, dqd, ddqd)
        taus.append(out.tau)
        gyro.append(m.imu.angular_velocity)
        v_sup.append(out.V_sup)
        # the command computed from period i's state acts ``delay`` periods later (the graph:
        # one period, joint_states → controller → effort command → the next physics step)
        react.append(_step_with_reaction(sim, taus[max(i - delay, 0)], sub, arm_dofs))
    alpha_vec = interval_alpha(np.arange(len(gyro)) * 1e-3, np.asarray(gyro))[500:]
    alpha = np.linalg.norm(alpha_vec, axis=1)
    reaction = np.asarray(react)[500:-1]   # react[i]: the interval from gyro sample i to i + 1
    arm_only = np.linalg.norm(reaction, axis=1)
    rest = np.linalg.norm(alpha_vec - reaction, axis=1)
    return {"arm_reaction_alpha_max": float(arm_only.max()),
            "arm_reaction_alpha_p99": float(np.percentile(arm_only, 99)),
            "alpha_minus_reaction_max": float(rest.max()),
            "alpha_minus_reaction_p99": float(np.percentile(rest, 99)),
            "alpha_reaction_correlation": [float(np.corrcoef(alpha_vec[:, k], reaction[:, k])[0, 1])
                                           for k in range(3)],
            "V_max": v_max, "eta": eta, "exponent": gains.boundary_layer_exponent,
            "delay_periods": delay, "physics_dt": sim.physics_dt,
            "V_sup_over_V_max": float(max(v_sup[500:]) / v_max),   # after the landing
            "rms_step_Nm": _rms_step(np.asarray(taus)),
            "trunk_alpha_max": float(alpha.max()), "trunk_alpha_p99": float(np.percentile(alpha, 99)),
            "trunk_alpha_assumed": TrunkMotionBound.from_robot(full).alpha}


def b1_torque_steps(step: float, physics_dt: float | None = None) -> list[dict]:
    """:func:`b1_torque_step` for each arm joint, one controller (the robot file's gains) for
    all, a fresh simulator for each."""
    full, payload, arm, ctl = _b1_controller({})
    return [b1_torque_step(full, arm, ctl, _b1_sim(full, payload, physics_dt), j, step)
            for j in range(arm.size)]


def b1_torque_step(full: Robot, arm: np.ndarray, ctl: RobustController, sim: Simulator,
                   joint: int, step: float) -> dict:
    """The trunk's answer to a step of one arm joint's torque: the standing robot held at home
    by the controller for 1 s, then ``step`` N·m added to ``joint``'s command. ‖α‖ over the
    first 1 ms interval after it, per N·m (the controller answers from the next sample on).
    A Coulomb reversal is such a step, of 2·Fc, between the trunk and the link: whatever the
    command does, the trunk takes it until the controller has seen the joint move. (The
    robust law keeps no state between calls: one controller serves every step.)"""
    q0 = sim.q[arm].copy()
    sub = int(round(1e-3 / sim.physics_dt))
    gyro, zero = [], np.zeros(6)
    for i in range(1002):
        m = sim.measure()
        tau = ctl.compute(i * 1e-3, m.q[arm], m.dq[arm], q0, zero, zero).tau.copy()
        tau[joint] += step if i >= 1000 else 0.0
        gyro.append(m.imu.angular_velocity)
        sim.step(tau, n_steps=sub)
    alpha = interval_alpha(np.arange(len(gyro)) * 1e-3, np.asarray(gyro))
    before, after = np.linalg.norm(alpha[999]), np.linalg.norm(alpha[1000])
    fc = float(full.friction.nominal[arm[joint], 0])
    return {"joint": full.joint_names[arm[joint]], "step_Nm": step,
            "physics_dt": sim.physics_dt, "alpha_before": float(before),
            "alpha_per_Nm": float(after / abs(step)), "Fc_catalogue": fc,
            "alpha_at_reversal": float(after / abs(step) * 2.0 * fc),
            "trunk_alpha_assumed": TrunkMotionBound.from_robot(full).alpha}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path)
    ap.add_argument("--duration", type=float, default=2.5)
    ap.add_argument("--b1-levels", default="1e-4,2e-4,1e-3")
    ap.add_argument("--b1-move", default=",".join(f"{x:g}" for x in B1_MOVE),
                    help="the B1 loop's move k (rad, 6 values)")
    ap.add_argument("--b1-offset", default="0,0,0,0,0,0",
                    help="constant offset of the B1 loop's reference (rad, 6 values)")
    ap.add_argument("--b1-exponents", default="file",
                    help="values of controller.boundary_layer_exponent for the B1 loop ('file': "
                    "the robot file's)")
    ap.add_argument("--b1-delay", type=int, default=0,
                    help="periods between the B1 loop's state and its command taking effect "
                    "(0: in the same period; the ROS graph has 1)")
    ap.add_argument("--b1-physics-dt", type=float, default=0.0,
                    help="the B1 loop's physics step (s; 0: the robot file's)")
    ap.add_argument("--b1-torque-step", type=float, default=2.0,
                    help="N·m added to one arm joint's command at a time: the trunk's α per "
                    "N·m, and at a Coulomb reversal of 2·Fc (0: skip)")
    args = ap.parse_args(argv)
    if args.b1_delay < 0:
        ap.error("--b1-delay must be >= 0")
    exponents = [None if x == "file" else float(x) for x in args.b1_exponents.split(",")]
    offset = np.array([float(x) for x in args.b1_offset.split(",")])
    if offset.shape != (6,):
        ap.error("--b1-offset needs 6 values")
    move = np.array([float(x) for x in args.b1_move.split(",")])
    if move.shape != (6,):
        ap.error("--b1-move needs 6 values")
    res: dict = {"z1": [], "b1_z1": [], "b1_move": move.tolist(), "b1_offset": offset.tolist()}
    for eta in progress.track((0.0, 1.0), "Z1 fixed base"):
        r = z1_fixed(eta, args.duration)
        res["z1"].append(r)
        print(f"Z1 fixed base  eta={eta:g}: max V {r['V_over_V_max']:.2f} V_max, clipped "
              f"{r['clipped']}, RMS of the command's step {r['rms_step_Nm']} N·m", flush=True)
    # without a layer (η = 0) its exponent changes nothing: one run
    b1_cases = [(level, e, p) for level in (float(x) for x in args.b1_levels.split(","))
                for e in ((0.0, 1.0) if level == 1e-4 else (1.0,))
                for p in (exponents if e > 0 else [None])]
    for level, eta, exponent in progress.track(b1_cases, "B1+Z1 standing"):
        r = b1_standing(level, eta, args.duration, move, exponent, offset,
                        args.b1_delay, args.b1_physics_dt or None)
        res["b1_z1"].append(r)
        layer = f" p={r['exponent']:g}" if eta > 0 else ""       # p acts only in a layer
        print(f"B1+Z1 standing V_max={level:g} eta={eta:g}{layer} delay {args.b1_delay} "
              f"physics {r['physics_dt'] * 1e3:g} ms: max V_sup "
              f"{r['V_sup_over_V_max']:.2f} V_max, RMS step {r['rms_step_Nm']} N·m, trunk α "
              f"max {r['trunk_alpha_max']:.3g} p99 {r['trunk_alpha_p99']:.3g} rad/s² "
              f"(assumed {r['trunk_alpha_assumed']:g})"
              f"; the arm's reaction alone on a free trunk: max "
              f"{r['arm_reaction_alpha_max']:.3g} p99 {r['arm_reaction_alpha_p99']:.3g}, "
              f"the trunk's α minus it: max {r['alpha_minus_reaction_max']:.3g} p99 "
              f"{r['alpha_minus_reaction_p99']:.3g}, correlation per axis "
              f"{np.round(r['alpha_reaction_correlation'], 2).tolist()}", flush=True)
    res["b1_torque_step"] = (b1_torque_steps(args.b1_torque_step, args.b1_physics_dt or None)
                             if args.b1_torque_step else [])
    for r in res["b1_torque_step"]:
        print(f"B1+Z1 torque step {r['step_Nm']:g} N·m on {r['joint']} (physics "
              f"{r['physics_dt'] * 1e3:g} ms): trunk α {r['alpha_per_Nm']:.3g} rad/s² per N·m "
              f"in the first interval (before {r['alpha_before']:.2g}); at a Coulomb reversal "
              f"(2·Fc, Fc {r['Fc_catalogue']:g} N·m) {r['alpha_at_reversal']:.3g} rad/s² "
              f"(assumed {r['trunk_alpha_assumed']:g})", flush=True)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
