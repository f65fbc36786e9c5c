"""What the live view draws, as numbers (no rclpy, no message types): every position and
orientation is in the robot's **base frame** (the URDF root link, :func:`base_frame`), metres and
radians.

- collision spheres at a joint state: Pinocchio forward kinematics of ``Robot.spheres``
  (:func:`sphere_centres`);
- the swept spheres of a plan: the desired ``JointTrajectory`` sampled with the controller's own
  quintic interpolation (``control.trajectory.quintic_coefficients``) at ``n`` instants
  (:func:`sample_trajectory`), each sphere enlarged by :func:`sphere_margins` — a SOUND bound on
  how far its centre moves when every joint is off its desired angle by at most the planner's
  tracking-error bound e_max: moving revolute joint j by δ moves a point by at most
  |δ|·(distance from the joint origin), and that distance is at most the chain length L_sj from
  joint j's origin to sphere s's centre (sum of the fixed link offsets, independent of q), so the
  centre stays within Σ_j L_sj·e_max,j of its desired position. The drawn set is therefore an
  enclosure of the spheres *at the sampled instants*; between samples nothing is drawn, and the
  certificate itself is the planner's interval check (docs/theory/planner.md#sound-reachability), not this picture;
- the payload: the θ_e box centre as the equivalent uniform-density solid ellipsoid with the same
  mass, centre of mass and principal moments (:func:`equivalent_ellipsoid`), the centre-of-mass
  box implied by the bounds ([h]/[m] per axis, :func:`com_box`) and the mass interval; θ_e lives
  in the end-effector joint frame, placed in the base frame with the current joint state.

The floating-base robot (B1 + Z1) is drawn with its trunk at the identity: joint states carry
no base pose, so "base frame" is the trunk frame there.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from sysid_ros._src.control.trajectory import quintic_coefficients
from sysid_ros._src.model.parameters import com_inertia_from_theta
from sysid_ros._src.model.robots import Robot

__all__ = [
    "Ellipsoid",
    "RobotGeometry",
    "base_frame",
    "chain_lengths",
    "com_box",
    "equivalent_ellipsoid",
    "sample_trajectory",
    "sphere_margins",
]


def base_frame(robot: Robot) -> str:
    """Name of the URDF root link: the frame every marker is expressed in (``gen3_base_link``,
    ``world`` for the Z1's URDF, ``base`` = the B1's trunk)."""
    model = robot.model
    root_joint = 1 if robot.floating_base else 0
    for frame in model.frames:
        if frame.type == pin.FrameType.BODY and frame.parentJoint == root_joint:
            return str(frame.name)
    raise ValueError(f"{robot.name}: no root body frame in the model")  # every URDF has one


def chain_lengths(robot: Robot) -> np.ndarray:
    """L (n_spheres, nj): for each collision sphere s and actuated joint j (robot order) an upper
    bound on the distance from joint j's origin to sphere s's centre over ALL configurations —
    the sum of the joint-placement translations from j down to the sphere's joint plus the
    sphere's offset; 0 where joint j does not move the sphere. Prismatic joints get 1 (their
    displacement is the joint error itself)."""
    model = robot.model
    col = {int(jid): k for k, jid in enumerate(robot.joint_ids)}
    out = np.zeros((len(robot.spheres), robot.nj))
    for s, sphere in enumerate(robot.spheres):
        length = float(np.linalg.norm(sphere.offset))
        jid = int(sphere.joint_id)
        while jid > 0:
            if jid in col:
                kind = model.joints[jid].shortname()
                if "JointModelR" in kind:
                    out[s, col[jid]] = length
                elif "JointModelP" in kind:
                    out[s, col[jid]] = 1.0
                else:
                    raise ValueError(f"{robot.name}: joint {model.names[jid]} ({kind}) is neither "
                                     "revolute nor prismatic")
            # the joint's own placement is a fixed offset from its parent's origin
            length += float(np.linalg.norm(model.jointPlacements[jid].translation))
            jid = int(model.parents[jid])
    return out


def sphere_margins(robot: Robot, e_max: np.ndarray | None) -> np.ndarray:
    """Radius increase (n_spheres,) m that encloses each sphere's centre when every actuated
    joint is within ±e_max (rad; (nj,)) of its desired angle (module doc); zeros for None."""
    if e_max is None:
        return np.zeros(len(robot.spheres))
    e = np.broadcast_to(np.abs(np.asarray(e_max, float)), (robot.nj,))
    return chain_lengths(robot) @ e


def sample_trajectory(times: np.ndarray, positions: np.ndarray, velocities: np.ndarray,
                      accelerations: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(t (n,), q (n, nj)): ``n`` evenly spaced instants over [times[0], times[-1]] (s, relative
    to the trajectory's start) of the piecewise quintic through the points (each (K, nj), rad,
    rad/s, rad/s²), i.e. exactly the reference the controller tracks. One point → that pose."""
    t = np.asarray(times, float)
    p = np.asarray(positions, float)
    if t.size == 1:
        return t.copy(), p.copy()
    v = np.asarray(velocities, float)
    a = np.asarray(accelerations, float)
    dt = np.diff(t)[:, None]
    coef = np.moveaxis(quintic_coefficients(dt, p[:-1], v[:-1], a[:-1], p[1:], v[1:], a[1:]),
                       0, 1)                                           # (segments, 6, nj)
    ts = np.linspace(t[0], t[-1], max(int(n), 2))
    k = np.clip(np.searchsorted(t, ts, side="right") - 1, 0, t.size - 2)
    x = ts - t[k]
    powers = x[:, None] ** np.arange(6)                                # (n, 6)
    q = np.einsum("nk,nkj->nj", powers, coef[k])
    return ts, q


@dataclass(frozen=True)
class Ellipsoid:
    """Equivalent uniform-density solid ellipsoid of a rigid body, in the frame θ was given in.

    mass (kg); com (3,) m; rotation (3, 3): columns = principal axes; semi_axes (3,) m along
    them; consistent: False when θ has no such body (m ≤ 0, or principal moments breaking the
    triangle inequality I_a ≤ I_b + I_c) — the semi-axes are then clipped to ≥ 0 for display.
    """

    mass: float
    com: np.ndarray
    rotation: np.ndarray
    semi_axes: np.ndarray
    consistent: bool


def equivalent_ellipsoid(theta: np.ndarray) -> Ellipsoid:
    """θ (10,) [m, h, Ī] (Pinocchio order, inertia about the frame origin) → its ellipsoid.

    A solid ellipsoid of mass m and semi-axes (a, b, c) has principal moments about its centre
    I₁ = m(b² + c²)/5, …, hence a² = 5(I₂ + I₃ − I₁)/(2m), cyclically.
    """
    m, com, i_c = com_inertia_from_theta(np.asarray(theta, float))
    moments, axes = np.linalg.eigh(0.5 * (i_c + i_c.T))
    if np.linalg.det(axes) < 0:          # a proper rotation for the marker's quaternion
        axes[:, 2] = -axes[:, 2]
    if m <= 0:
        return Ellipsoid(float(m), com, axes, np.zeros(3), False)
    sq = 2.5 / m * (moments.sum() - 2.0 * moments)         # a_k² = 5/(2m)(ΣI − 2 I_k)
    consistent = bool(np.all(moments >= 0) and np.all(sq >= 0))
    return Ellipsoid(float(m), com, axes, np.sqrt(np.maximum(sq, 0.0)), consistent)


def com_box(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Box (lo, hi) (3,) m containing c = h/m for every θ in the box [lower, upper] (interval
    division [h_k]/[m]); None when the mass interval reaches 0 (the CoM is then unbounded)."""
    m_lo, m_hi = float(lower[0]), float(upper[0])
    if not m_lo > 0:
        return None
    cands = np.stack([lower[1:4] / m_lo, lower[1:4] / m_hi, upper[1:4] / m_lo, upper[1:4] / m_hi])
    return cands.min(axis=0), cands.max(axis=0)


class RobotGeometry:
    """Forward kinematics of one robot for drawing: joint states in ``Robot.joint_names`` order
    (rad) → sphere centres and body poses in the base frame.

    Args:
        robot: the loaded robot (``load_robot``).
    """

    def __init__(self, robot: Robot) -> None:
        self.robot = robot
        self.frame = base_frame(robot)
        self._data = robot.model.createData()
        self._q0 = robot.neutral()
        self._qi = robot.q_index
        self.radii = np.array([s.radius for s in robot.spheres], float)
        self._sphere_joint = np.array([s.joint_id for s in robot.spheres], int)
        self._sphere_offset = np.array([s.offset for s in robot.spheres], float).reshape(-1, 3)

    def _fk(self, q_act: np.ndarray) -> None:
        q = self._q0.copy()
        q[self._qi] = q_act
        pin.forwardKinematics(self.robot.model, self._data, q)

    def sphere_centres(self, q_act: np.ndarray | Sequence[float]) -> np.ndarray:
        """Centres (n_spheres, 3) m, base frame, at the actuated joint angles ``q_act`` (nj,);
        for a batch (K, nj) the result is (K, n_spheres, 3)."""
        q_act = np.asarray(q_act, float)
        if q_act.ndim == 2:
            return np.stack([self.sphere_centres(qk) for qk in q_act]) if len(q_act) else \
                np.zeros((0, len(self.radii), 3))
        self._fk(q_act)
        o = self._data.oMi
        return np.array([o[int(j)].rotation @ off + o[int(j)].translation
                         for j, off in zip(self._sphere_joint, self._sphere_offset)]).reshape(-1, 3)

    def tool_positions(self, q_act: np.ndarray) -> np.ndarray:
        """Origins (K, 3) m, base frame, of the robot's ``tool_frame`` at each row of ``q_act``
        (K, nj) — the tool path drawn with a plan."""
        fid = self.robot.model.getFrameId(self.robot.tool_frame)
        out = []
        for qk in np.atleast_2d(np.asarray(q_act, float)):
            self._fk(qk)
            placement = pin.updateFramePlacement(self.robot.model, self._data, fid)
            out.append(placement.translation.copy())
        return np.array(out).reshape(-1, 3)

    def joint_pose(self, q_act: np.ndarray | Sequence[float],
                   joint_id: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(R (3, 3), p (3,)) of a joint frame (default: the θ_e body's, ``Robot.ee_joint``) in
        the base frame at ``q_act``."""
        self._fk(np.asarray(q_act, float))
        pose = self._data.oMi[int(self.robot.ee_joint_id if joint_id is None else joint_id)]
        return pose.rotation.copy(), pose.translation.copy()
