"""Closed-loop harness for the controller tests: the real MuJoCo model of the simulator package
(``build_mujoco_model``: same URDF, armature = I_a, damping = Fv, payload welded to the EE body)
stepped at 4 kHz with a 1 kHz zero-order-hold controller. Only the stepping loop lives here; the
physics is MuJoCo's. V is evaluated with MuJoCo's own mass matrix (includes the armature), an
independent reference for the controller's Lyapunov claim."""
from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from sysid_ros._src.control.controller import RobustController
from sysid_ros._src.control.trajectory import JointTrajectoryArrays, TrajectoryQueue
from sysid_ros._src.demo.tracking import command_chatter
from sysid_ros._src.simulation.mjmodel import build_mujoco_model


@dataclass
class LoopLog:
    t: np.ndarray
    e: np.ndarray
    r_norm: np.ndarray
    V_true: np.ndarray
    V_sup: np.ndarray
    clipped: np.ndarray
    tau: np.ndarray            # the command sent (after clipping), (n, nj)


_FIELDS = ("t", "e", "r_norm", "V_true", "V_sup", "clipped", "tau")


# the library's chatter figure (per joint RMS of the command's first difference)
chatter = command_chatter


def bezier_rest_to_rest(robot, q0: np.ndarray, k: np.ndarray, tf: float) -> JointTrajectoryArrays:
    """Degree-5 rest-to-rest Bézier q0 → q0 + k on [0, tf] (control points q0,q0,q0,q1,q1,q1),
    sent as its two end points — the quintic interpolation reproduces it exactly."""
    z = np.zeros((2, robot.nj))
    return JointTrajectoryArrays.from_arrays([0.0, tf], np.vstack([q0, q0 + k]), z, z,
                                             robot.joint_names, robot.joint_names, 0.0)


def run(robot, controller: RobustController, payload, traj: JointTrajectoryArrays,
        duration: float, control_dt: float = 1e-3, physics_dt: float = 2.5e-4) -> LoopLog:
    mj = build_mujoco_model(robot, payload, physics_dt=physics_dt)
    data = mujoco.MjData(mj.model)
    q0 = traj.positions[0]
    data.qpos[mj.qpos_adr] = q0
    mujoco.mj_forward(mj.model, data)
    queue = TrajectoryQueue(robot.nj)
    queue.push(traj, now=0.0)
    sub = int(round(control_dt / physics_dt))
    n = int(round(duration / control_dt))
    log = {k: [] for k in _FIELDS}
    full_m = np.zeros((mj.model.nv, mj.model.nv))
    for i in range(n):
        t = i * control_dt
        q, dq = data.qpos[mj.qpos_adr].copy(), data.qvel[mj.dof_adr].copy()
        ref = queue.sample(t)
        out = controller.compute(t, q, dq, ref.q, ref.dq, ref.ddq)
        mujoco.mj_fullM(mj.model, data, full_m)
        m = full_m[np.ix_(mj.dof_adr, mj.dof_adr)]
        log["t"].append(t)
        log["e"].append(out.e)
        log["r_norm"].append(out.r_norm)
        log["V_true"].append(0.5 * out.r @ m @ out.r)
        log["V_sup"].append(out.V_sup)
        log["clipped"].append(out.clipped)
        log["tau"].append(out.tau)
        data.qfrc_applied[:] = 0.0
        data.qfrc_applied[mj.dof_adr] = out.tau
        for _ in range(sub):
            mujoco.mj_step(mj.model, data)
    return LoopLog(*(np.asarray(log[k]) for k in _FIELDS))
