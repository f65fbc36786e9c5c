"""The legs' contract of a standing floating-base robot (B1 + Z1): what the arm view assumes of
the standing controller, stated in the robot file (``arm_view.legs``) and turned into the
trunk-motion bound d̄ rests on.

The stance feeds forward the reaction of the arm's *command* every period (``rate_hz``); what it
does not carry is the arm's friction, which acts between the trunk and the links. A jump of
that unmodelled torque reaches the trunk before the legs' PD has deflected, so the trunk's
angular acceleration jumps by R(q)·Δτ_f, R the instantaneous response: the trunk-frame α per
N·m at each arm joint of the standing robot with its feet pinned (contact constraints) and the
legs' torques unchanged (:func:`reaction_response`, from the model's KKT system). The friction of
joint j jumps by at most 2·F̄c_j, and only where it reverses: a joint the task does not move
(``held_joints``) stays in its Coulomb band, where its friction is the balancing torque —
continuous while the command is (the boundary layer with p ≥ 1 makes it so). Hence, per axis k,

    α̅_k = max over the poses of Σ_{j moving} |R_kj(q)| · 2 F̄c_j,

with F̄c_j the top of joint j's Coulomb box. The continuous rest of the unmodelled reaction (≤
F̄c + F̄v q̇̄ per joint, about each joint's axis) deflects the stance by at most twice its static
answer, W/K, K the trunk's rotational ``stiffness`` (``stiffness``: stated, N·m/rad per axis).

Assumptions (stated; the demo checks their consequences in the recording): the arm's reaction is
the only unmodelled wrench on the trunk; the legs act on it as the linear stance above
(peaks at the friction jumps, settled between them); the held joints stay in their Coulomb band
(their velocity in the recording is checked). The poses are a grid of the view's workspace,
R being smooth in q; a sample, not an enclosure.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from sysid_ros._src.model.errors import RobotConfigError
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.simulation_section import simulation_section

__all__ = ["LegsContract", "reaction_response", "contract_alpha_bound", "static_tilt_bound",
           "stance_stiffness"]


@dataclass(frozen=True)
class LegsContract:
    """``arm_view.legs``: the stance's update rate (Hz), its rotational stiffness per trunk axis
    (N·m/rad), the arm joints the task holds (not moved: no Coulomb reversal) and the contact
    frames that pin the feet."""

    rate_hz: float
    stiffness: np.ndarray
    held_joints: tuple[str, ...]
    feet: tuple[str, ...]

    @classmethod
    def from_robot(cls, robot: Robot) -> LegsContract:
        where = f"{robot.config_path}: field 'arm_view.legs"
        sec = (robot.config.get("arm_view") or {}).get("legs")
        if not isinstance(sec, dict):
            raise RobotConfigError(f"{where}': missing (rate_hz, stiffness, held_joints)")
        try:
            rate = float(sec["rate_hz"])
            stiff = np.asarray(sec["stiffness"], float)
            held = tuple(str(n) for n in sec.get("held_joints", []))
        except (KeyError, TypeError, ValueError) as exc:
            raise RobotConfigError(f"{where}': expected rate_hz (Hz), stiffness (3 N·m/rad) "
                                   f"and held_joints (arm joint names), got {sec!r}") from exc
        if not rate > 0 or stiff.shape != (3,) or not np.all(stiff > 0):
            raise RobotConfigError(f"{where}': rate_hz and the 3 stiffness values must be "
                                   f"positive, got {sec!r}")
        arm = list(robot.config.get("arm_joints") or [])
        unknown = [n for n in held if n not in arm]
        if unknown:
            raise RobotConfigError(f"{where}.held_joints': {unknown} are not arm joints {arm}")
        feet = simulation_section(robot).contact_links
        if len(feet) < 3:
            raise RobotConfigError(f"{robot.config_path}: field 'simulation.contact_links': the "
                                   "legs' contract needs at least three feet")
        return cls(rate, stiff, held, feet)


def _arm_dofs(robot: Robot) -> np.ndarray:
    arm = [robot.joint_names.index(n) for n in robot.config["arm_joints"]]
    return np.asarray(robot.v_index, int)[arm]


def standing_configuration(robot: Robot) -> np.ndarray:
    """The neutral configuration with the legs at ``leg_standing_posture`` (when stated)."""
    q = robot.neutral()
    legs = [i for i, n in enumerate(robot.joint_names) if n not in robot.config["arm_joints"]]
    posture = robot.config.get("leg_standing_posture")
    if posture is not None:
        q[np.asarray(robot.q_index)[legs]] = np.asarray(posture, float)
    return q


def reaction_response(robot: Robot, q_arm: np.ndarray, feet: tuple[str, ...]) -> np.ndarray:
    """R (3, n_arm): the trunk's angular acceleration (trunk frame, rad/s²) per N·m of torque
    at each arm joint that the legs do not answer yet — the standing robot at its posture with
    the arm at ``q_arm``, feet pinned (point contacts), at rest."""
    model, data = robot.model, robot.model.createData()
    q = standing_configuration(robot)
    arm = [robot.joint_names.index(n) for n in robot.config["arm_joints"]]
    q[np.asarray(robot.q_index)[arm]] = np.asarray(q_arm, float)
    pin.computeAllTerms(model, data, q, np.zeros(model.nv))
    mass = np.triu(data.M) + np.triu(data.M, 1).T
    jac = np.vstack([pin.getFrameJacobian(model, data, model.getFrameId(f),
                                          pin.LOCAL_WORLD_ALIGNED)[:3] for f in feet])
    nc = jac.shape[0]
    kkt = np.block([[mass, jac.T], [jac, np.zeros((nc, nc))]])
    dofs = _arm_dofs(robot)
    rhs = np.zeros((model.nv + nc, dofs.size))
    rhs[dofs, np.arange(dofs.size)] = 1.0
    # the free flyer's velocity is (linear, angular) in the trunk frame: rows 3:6 are α
    return np.linalg.lstsq(kkt, rhs, rcond=None)[0][3:6]


def _coulomb_top(robot: Robot) -> np.ndarray:
    arm = [robot.joint_names.index(n) for n in robot.config["arm_joints"]]
    fr = robot.friction
    return np.maximum(np.abs(fr.lower[arm, 0]), np.abs(fr.upper[arm, 0]))


def contract_alpha_bound(robot: Robot, contract: LegsContract, poses: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray]:
    """(α̅ (3,) rad/s² per trunk axis, the pose attaining each axis's max (3, n_arm)) over
    ``poses`` (N, n_arm) (module doc)."""
    arm = list(robot.config["arm_joints"])
    moving = np.array([n not in contract.held_joints for n in arm])
    step = 2.0 * _coulomb_top(robot) * moving
    best, where = np.zeros(3), np.zeros((3, len(arm)))
    for q in np.atleast_2d(poses):
        a = np.abs(reaction_response(robot, q, contract.feet)) @ step
        better = a > best
        best = np.where(better, a, best)
        where[better] = q
    return best, where


def _joint_axes(robot: Robot, q_arm: np.ndarray) -> np.ndarray:
    """(n_arm, 3): each arm joint's axis in the trunk frame (trunk at the origin)."""
    model, data = robot.model, robot.model.createData()
    q = robot.neutral()
    arm = [robot.joint_names.index(n) for n in robot.config["arm_joints"]]
    q[np.asarray(robot.q_index)[arm]] = np.asarray(q_arm, float)
    pin.computeJointJacobians(model, data, q)
    rot = data.oMi[1].rotation                      # the free flyer's (trunk) frame
    dofs = _arm_dofs(robot)
    last = model.getJointId(robot.config["arm_joints"][-1])
    world = pin.getJointJacobian(model, data, last, pin.LOCAL_WORLD_ALIGNED)
    # column v of the last joint's Jacobian is joint v's twist seen there; its angular part is
    # the axis (every arm joint is an ancestor of the last one in a serial arm)
    return (rot.T @ world[3:6, dofs]).T


def static_tilt_bound(robot: Robot, contract: LegsContract, poses: np.ndarray,
                      speed: np.ndarray, band: float) -> float:
    """rad: the trunk's tilt from the stance's answer to the unmodelled reaction — twice the
    static W_k/K_k on roll and pitch (step overshoot), W_k the largest over ``poses`` of
    Σ_j |axis_j,k| (F̄c_j + F̄v_j q̇̄_j): each arm joint's friction at its top about its axis,
    q̇̄ the speed bound (``speed``) for a moved joint, the Coulomb ``band`` for a held one."""
    arm = list(robot.config["arm_joints"])
    idx = [robot.joint_names.index(n) for n in arm]
    fr = robot.friction
    fv = np.maximum(np.abs(fr.lower[idx, 1]), np.abs(fr.upper[idx, 1]))
    held = np.array([n in contract.held_joints for n in arm])
    top = _coulomb_top(robot) + fv * np.where(held, band, np.asarray(speed, float))
    w = np.zeros(3)
    for q in np.atleast_2d(poses):
        w = np.maximum(w, np.abs(_joint_axes(robot, q)).T @ top)
    return float(np.hypot(2.0 * w[0] / contract.stiffness[0], 2.0 * w[1] / contract.stiffness[1]))


def stance_stiffness(robot: Robot, feet: tuple[str, ...]) -> np.ndarray:
    """(3,) N·m/rad: the trunk's rotational stiffness (roll, pitch, yaw) of the legs' posture PD
    (``simulation.hold_kp`` of the leg joints) with the feet pinned, at the standing posture:
    K = Gᵀ Kp G on the trunk's six coordinates (G the leg joints' answer to a trunk motion,
    −J_leg⁻¹ J_trunk), its translations left free (the rotations' compliance block inverted)."""
    model, data = robot.model, robot.model.createData()
    q = standing_configuration(robot)
    legs = [i for i, n in enumerate(robot.joint_names) if n not in robot.config["arm_joints"]]
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    jac = np.vstack([pin.getFrameJacobian(model, data, model.getFrameId(f),
                                          pin.LOCAL_WORLD_ALIGNED)[:3] for f in feet])
    dofs = np.asarray(robot.v_index, int)[legs]
    kp = np.asarray(simulation_section(robot).hold_kp, float)[legs]
    g = -np.linalg.lstsq(jac[:, dofs], jac[:, :6], rcond=None)[0]
    compliance = np.linalg.inv(g.T @ np.diag(kp) @ g)
    return 1.0 / np.diag(compliance[3:6, 3:6])
