"""Batched spatial algebra and forward kinematics in numpy, vectorised over samples.

Motion vectors follow Pinocchio: ``[linear; angular]`` (6,). ``BatchKinematics`` computes, for N
samples at once, every joint body's world placement and the world-frame (at the world origin)
motion subspace of each velocity coordinate. It supports the joint types of the registry's robots:
1-DoF revolute joints (aligned or unaligned axis) and a free-flyer root, which covers Gen3, Z1 and
B1 + Z1; other joint types raise. Pinocchio is the reference it is tested against.

The bilinear regressor ``bilinear_regressor(v, w)`` is the row b with vᵀ·I(θ)·w = b·θ for a body's
spatial inertia I(θ) in Pinocchio's parameter order: every kinetic quantity the identifier needs
(momentum, ∂L/∂q) is a sum of such forms, which is what makes the regressors exact and cheap.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from sysid_ros._src.model.errors import UnsupportedJointError

__all__ = ["BatchKinematics", "KinematicsResult", "bilinear_matrix", "bilinear_regressor",
           "cross_motion", "inverse_action", "inverse_action_matrix",
           "rotation_about"]

_AXES = {"JointModelRX": (1.0, 0.0, 0.0), "JointModelRY": (0.0, 1.0, 0.0),
         "JointModelRZ": (0.0, 0.0, 1.0)}


def rotation_about(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Rodrigues rotation (N, 3, 3) about a unit ``axis`` (3,) by ``angle`` (N,)."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    s, c = np.sin(angle)[:, None, None], np.cos(angle)[:, None, None]
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


def cross_motion(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spatial motion cross product a × b for (..., 6) vectors."""
    al, aa, bl, ba = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return np.concatenate([np.cross(aa, bl) + np.cross(al, ba), np.cross(aa, ba)], axis=-1)


def inverse_action(rot: np.ndarray, pos: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Express world-frame motions v (N, K, 6) in the frame with placement (rot (N,3,3), pos (N,3))."""
    lin = v[..., :3] - np.cross(pos[:, None, :], v[..., 3:])
    rt = np.swapaxes(rot, -1, -2)[:, None]
    return np.concatenate([(rt @ lin[..., None])[..., 0], (rt @ v[..., 3:, None])[..., 0]], -1)


def bilinear_regressor(v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """b (..., 10) with vᵀ I(θ) w = b·θ, θ = [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (Ī about origin).

    With I = [[m·1, −[h]×], [[h]×, Ī]]: vᵀIw = m v_l·w_l + h·(w_l×v_a + v_l×w_a) + v_aᵀ Ī w_a.
    """
    vl, va, wl, wa = v[..., :3], v[..., 3:], w[..., :3], w[..., 3:]
    out = np.empty(np.broadcast_shapes(v.shape, w.shape)[:-1] + (10,))
    out[..., 0] = np.einsum("...i,...i->...", vl, wl)
    out[..., 1:4] = np.cross(wl, va) + np.cross(vl, wa)
    out[..., 4] = va[..., 0] * wa[..., 0]
    out[..., 5] = va[..., 0] * wa[..., 1] + va[..., 1] * wa[..., 0]
    out[..., 6] = va[..., 1] * wa[..., 1]
    out[..., 7] = va[..., 0] * wa[..., 2] + va[..., 2] * wa[..., 0]
    out[..., 8] = va[..., 1] * wa[..., 2] + va[..., 2] * wa[..., 1]
    out[..., 9] = va[..., 2] * wa[..., 2]
    return out


def _skew(x: np.ndarray) -> np.ndarray:
    out = np.zeros(x.shape[:-1] + (3, 3))
    out[..., 0, 1], out[..., 0, 2] = -x[..., 2], x[..., 1]
    out[..., 1, 0], out[..., 1, 2] = x[..., 2], -x[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -x[..., 1], x[..., 0]
    return out


def bilinear_matrix(v: np.ndarray) -> np.ndarray:
    """B(v) (..., 10, 6) with B(v)·w = ``bilinear_regressor(v, w)``: the same form, linear in w."""
    vl, va = v[..., :3], v[..., 3:]
    out = np.zeros(v.shape[:-1] + (10, 6))
    out[..., 0, :3] = vl
    out[..., 1:4, :3] = -_skew(va)
    out[..., 1:4, 3:] = _skew(vl)
    ax, ay, az = va[..., 0], va[..., 1], va[..., 2]
    out[..., 4, 3] = ax
    out[..., 5, 3], out[..., 5, 4] = ay, ax
    out[..., 6, 4] = ay
    out[..., 7, 3], out[..., 7, 5] = az, ax
    out[..., 8, 4], out[..., 8, 5] = az, ay
    out[..., 9, 5] = az
    return out



def inverse_action_matrix(rot: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Ad⁻¹ (N, 6, 6) expressing world-frame motions in the frame placed at (rot, pos)."""
    rt = np.swapaxes(rot, -1, -2)
    out = np.zeros(rot.shape[:-2] + (6, 6))
    out[..., :3, :3] = rt
    out[..., :3, 3:] = -rt @ _skew(pos)
    out[..., 3:, 3:] = rt
    return out


@dataclass(frozen=True)
class KinematicsResult:
    """Per sample n and joint body i (0-based, i = Pinocchio joint id − 1).

    rot (N, nb, 3, 3), pos (N, nb, 3): world placement of each joint frame;
    s_world (N, nv, 6): motion subspace column of each velocity coordinate, world frame;
    v_world (N, nb, 6): spatial velocity of each body, world frame (None without velocities).
    """

    rot: np.ndarray
    pos: np.ndarray
    s_world: np.ndarray
    v_world: np.ndarray | None


class BatchKinematics:
    """Forward kinematics of a Pinocchio tree for N samples at once, in numpy."""

    def __init__(self, model: pin.Model) -> None:
        self.model = model
        self.nb = model.njoints - 1
        self.parent = np.array([model.parents[i] - 1 for i in range(1, model.njoints)])
        self.kind: list[str] = []
        self.axis: list[np.ndarray | None] = []
        self.idx_q = np.array([model.joints[i].idx_q for i in range(1, model.njoints)])
        self.idx_v = np.array([model.joints[i].idx_v for i in range(1, model.njoints)])
        self.nv_joint = np.array([model.joints[i].nv for i in range(1, model.njoints)])
        for i in range(1, model.njoints):
            joint = model.joints[i]
            name = joint.shortname()
            if name in _AXES:
                self.kind.append("R")
                self.axis.append(np.array(_AXES[name]))
            elif name == "JointModelRevoluteUnaligned":
                self.kind.append("R")
                self.axis.append(np.asarray(joint.extract().axis, float).copy())
            elif name == "JointModelFreeFlyer":
                if model.parents[i] != 0:
                    raise UnsupportedJointError("a free-flyer joint is supported only at the root")
                self.kind.append("F")
                self.axis.append(None)
            else:
                raise UnsupportedJointError(f"joint type {name} of {model.names[i]} is not supported")
        self.place_rot = np.array([model.jointPlacements[i].rotation for i in range(1, model.njoints)])
        self.place_pos = np.array([model.jointPlacements[i].translation
                                   for i in range(1, model.njoints)])
        # body index that owns each velocity coordinate, and the support (ancestors, inclusive)
        self.v_body = np.concatenate([[i] * self.nv_joint[i] for i in range(self.nb)])
        self.support: list[np.ndarray] = []
        for i in range(self.nb):
            chain, k = [], i
            while k >= 0:
                chain.append(k)
                k = self.parent[k]
            cols = [c for c in range(model.nv) if self.v_body[c] in chain]
            self.support.append(np.array(cols, dtype=int))
        # revolute joints about +x/+y/+z get a cheaper rotation (index of the axis, else −1)
        self.coordinate_axis = [int(np.flatnonzero(a == 1.0)[0])
                                if a is not None and np.sum(np.abs(a)) == 1.0 and a.max() == 1.0
                                else -1 for a in self.axis]
        # support_mask[i, c]: velocity coordinate c moves body i
        self.support_mask = np.zeros((self.nb, model.nv))
        for i, support in enumerate(self.support):
            self.support_mask[i, support] = 1.0

    def _local_rotation(self, i: int, angle: np.ndarray) -> np.ndarray:
        if self.coordinate_axis[i] >= 0:
            return _placed_rotation(self.place_rot[i], self.coordinate_axis[i], angle)
        axis = self.axis[i]
        assert axis is not None  # only joints with an axis reach here (coordinate_axis < 0)
        return self.place_rot[i] @ rotation_about(axis, angle)

    def forward(self, q: np.ndarray, v: np.ndarray | None = None) -> KinematicsResult:
        q = np.atleast_2d(np.asarray(q, float))
        n = q.shape[0]
        rot = np.empty((n, self.nb, 3, 3))
        pos = np.empty((n, self.nb, 3))
        s_world = np.zeros((n, self.model.nv, 6))
        for i in range(self.nb):
            if self.kind[i] == "F":
                iq = self.idx_q[i]
                quat = q[:, iq + 3:iq + 7]
                local_r = _quat_to_rot(quat)
                r_i = self.place_rot[i] @ local_r
                p_i = self.place_pos[i] + (self.place_rot[i] @ q[:, iq:iq + 3, None])[..., 0]
                rot[:, i], pos[:, i] = r_i, np.broadcast_to(p_i, (n, 3))
                # local twist basis e_k expressed in world frame at the world origin
                iv = self.idx_v[i]
                s_world[:, iv:iv + 3, :3] = np.swapaxes(r_i, -1, -2)
                s_world[:, iv + 3:iv + 6, 3:] = np.swapaxes(r_i, -1, -2)
                s_world[:, iv + 3:iv + 6, :3] = np.cross(pos[:, i, None, :],
                                                         s_world[:, iv + 3:iv + 6, 3:])
                continue
            p = self.parent[i]
            local_r = self._local_rotation(i, q[:, self.idx_q[i]])
            if p < 0:
                rot[:, i] = local_r
                pos[:, i] = self.place_pos[i]
            else:
                rot[:, i] = rot[:, p] @ local_r
                pos[:, i] = pos[:, p] + (rot[:, p] @ self.place_pos[i])
            w_axis = rot[:, i] @ self.axis[i]
            s_world[:, self.idx_v[i], 3:] = w_axis
            s_world[:, self.idx_v[i], :3] = _cross3(pos[:, i], w_axis)
        v_world = None
        if v is not None:
            v = np.atleast_2d(np.asarray(v, float))
            v_world = self.support_mask @ (s_world * v[:, :, None])
        return KinematicsResult(rot, pos, s_world, v_world)


def _cross3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a × b for (N, 3) arrays (np.cross has a large per-call overhead)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[:, 0] = a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1]
    out[:, 1] = a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2]
    out[:, 2] = a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]
    return out


def _placed_rotation(place: np.ndarray, axis: int, angle: np.ndarray) -> np.ndarray:
    """place @ R_axis(angle) for a coordinate axis, without a batched 3×3 product."""
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    a, b = [(1, 2), (2, 0), (0, 1)][axis]
    out = np.empty((angle.shape[0], 3, 3))
    out[:, :, axis] = place[:, axis]
    out[:, :, a] = c * place[:, a] + s * place[:, b]
    out[:, :, b] = c * place[:, b] - s * place[:, a]
    return out


def _quat_to_rot(quat: np.ndarray) -> np.ndarray:
    """(N, 4) quaternions in Pinocchio's (x, y, z, w) order → (N, 3, 3), normalised first."""
    x, y, z, w = (quat / np.linalg.norm(quat, axis=1, keepdims=True)).T
    return np.stack([
        np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
        np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
        np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)
