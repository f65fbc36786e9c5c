"""A fixed-trajectory closed loop of the Z1 against MuJoCo, the figures it is judged by, and the
chatter measure (no ROS). Used by the controller tests (V ≤ V_max against MuJoCo's own mass
matrix) and by bench/bench_chatter.py, so both measure the same run."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sysid_ros._src.control.controller import ControllerGains, RobustController, gains_from_config
from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.model.robots import Robot, load_robot
from sysid_ros._src.model.simulation_section import home_posture
from sysid_ros._src.planning.trajectory import QuinticTrajectory
from sysid_ros._src.simulation import SimConfig, Simulator, SimulatorSpec
from sysid_ros._src.simulation.payload import dumbbell_for, true_theta_e

__all__ = ["TrackingRun", "command_chatter", "z1_tracking_run"]


def command_chatter(tau: np.ndarray) -> np.ndarray:
    """Per joint RMS of the command's first difference (N·m per control step): a law that
    switches at the sample rate shows up here, a smooth one stays near the reference's own."""
    return np.sqrt(np.mean(np.diff(np.asarray(tau), axis=0) ** 2, axis=0))


@dataclass(frozen=True)
class TrackingRun:
    """``V_true`` = ½rᵀMr with MuJoCo's mass matrix (J), ``errors`` q_d − q (rad), ``tau`` the
    commands (N·m), one row per control step; ``clipped`` whether any command was clipped."""

    robot: Robot
    gains: ControllerGains
    V_true: np.ndarray
    errors: np.ndarray
    tau: np.ndarray
    clipped: bool


def z1_tracking_run(mode: str = "robust", control_dt: float = 1e-3, duration: float = 2.5,
                    **overrides: Any) -> TrackingRun:
    """Z1 + 1 kg dumbbell on the simulator (exact set-valued Coulomb friction: the Z1 has 1-2 N·m
    of it), the robot file's gains (``overrides`` replace them, e.g. ``boundary_layer``), a θ_e
    box holding the truth near a corner (centre 0.9 radius off), a 2-s degree-5 move from the
    simulator's home, held at its end."""
    robot = load_robot("z1")
    payload = dumbbell_for(robot, 1.0)
    truth = true_theta_e(robot, payload)
    rad = 0.15 * np.abs(truth) + 1e-3
    box = theta_e_box(truth - 1.9 * rad, truth + 0.1 * rad, truth - 0.9 * rad)
    gains = gains_from_config(robot, overrides)
    ctl = RobustController(robot, gains, mode=mode, prior=box)
    ctl.set_bounds(box)
    sim = Simulator(SimulatorSpec(robot, payload, SimConfig(noise_tau=0.0), seed=0))
    q0 = home_posture(robot)
    sim.reset(q0)
    traj = QuinticTrajectory(q0, np.zeros(6), np.zeros(6), 2.0)
    k = np.array([0.5, -0.3, 0.4, 0.4, -0.5, 0.5])
    sub = int(round(control_dt / sim.physics_dt))
    v_true, errors, taus, clipped = [], [], [], False
    for i in range(int(round(duration / control_dt))):
        t = min(i * control_dt, 2.0)
        qd, dqd, ddqd = (x[0] for x in traj.sample(np.array([t]), k))
        m = sim.measure()
        out = ctl.compute(t, m.q, m.dq, qd, dqd, ddqd)
        mass = sim.joint_mass_matrix()
        r = (dqd - sim.dq) + gains.Kr * (qd - sim.q)
        v_true.append(0.5 * r @ mass @ r)
        errors.append(qd - sim.q)
        taus.append(out.tau)
        clipped |= bool(out.clipped)
        sim.step(out.tau, n_steps=sub)
    return TrackingRun(robot, gains, np.asarray(v_true), np.asarray(errors), np.asarray(taus),
                       clipped)
