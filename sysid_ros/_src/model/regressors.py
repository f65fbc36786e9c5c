"""Dynamics regressors, vectorised over samples: every quantity is linear in θ.

Shapes: q (N, nq), q̇ and friends (N, nv); each regressor is (N, nv, 10·n_bodies) with columns in
Pinocchio order (``Robot.theta()``), so ``R @ θ`` gives (N, nv).

- ``Y(q, q̇, q̈)``: inverse dynamics, Y·θ = H q̈ + C q̇ + g (``pin.computeJointTorqueRegressor``).
- ``W_m(q, q̇)``: momentum, W_m·θ = p = H(q) q̇ = ∂K/∂q̇.
- ``W_c(q, q̇)``: W_c·θ = C(q, q̇)ᵀq̇ − g(q), so that ṗ = τ − τ_f + W_c θ (S3-7..9). For a
  fixed base this is ∂L/∂q with L = K − U.
- ``Y_p(q, q̇, q̇_a, q̈_a)``: passivity form, Y_p·θ = H q̈_a + C(q, q̇) q̇_a + g, with Pinocchio's
  C (body-level factorisation, docs/theory/controller.md#the-passivity-regressor-y_p; closed form
  below, no per-sample loop).
- ``kinetic``/``potential``: (N, 10·n_bodies) rows with K = row·θ, U = row·θ.
- ``friction(q̇, q̈[, q])``: (N, nv, 4·nj) for τ_f = Fc sign q̇ + Fv q̇ + Ia q̈ + β per actuated
  joint, followed (with q) by the calibrated extra terms' columns.

W_m and W_c come from closed-form spatial algebra (``spatial.py``), not finite differences:
with body velocity v_i, the joint's motion subspace S_j and the body-frame gravity g_i, all in
body i's frame, and j in the support of i,

    ∂K_i/∂q̇_j = vᵢᵀ Iᵢ S_j,     ∂v_i/∂q_j = −S_j × v_j,     ∂U_i/∂q_j = −(g_i, 0)ᵀ Iᵢ S_j,

where v_j is the velocity of joint j's own body. For the free-flyer root (body-frame velocity)
the same expression with v_j = base velocity is the Euler–Poincaré term that makes the identity
ṗ = τ + Cᵀq̇ − g hold with Pinocchio's Coriolis matrix; the tests check both against Pinocchio.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.spatial import (BatchKinematics, KinematicsResult, bilinear_matrix, bilinear_regressor,
                                     cross_motion, inverse_action, inverse_action_matrix)

__all__ = ["Regressors"]


def _as_batch(x: np.ndarray, width: int, name: str) -> np.ndarray:
    arr = np.asarray(x, float)
    if arr.ndim == 1:
        arr = arr[None]
    if arr.ndim != 2 or arr.shape[1] != width:
        raise ValueError(f"{name}: expected shape (N, {width}), got {np.shape(x)}")
    return arr


class Regressors:
    """All regressors of one robot. Not thread-safe (owns Pinocchio ``Data``)."""

    def __init__(self, robot: Robot) -> None:
        self.robot = robot
        self.model = robot.model
        self.data = self.model.createData()
        self.kin = BatchKinematics(self.model)
        self.nb = self.kin.nb
        self.n_theta = 10 * self.nb

    # -- closed-form, batched -------------------------------------------------------------
    def _body_terms(self, q: np.ndarray, dq: np.ndarray) -> tuple[KinematicsResult, np.ndarray]:
        k = self.kin.forward(q, dq)
        assert k.v_world is not None  # velocities were given
        v_own = k.v_world[:, self.kin.v_body]                       # (N, nv, 6)
        t_world = -cross_motion(k.s_world, v_own)                   # ∂v/∂q_j, world frame
        return k, t_world

    def W_m(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """Momentum regressor: W_m(q, q̇)·θ = H(q) q̇."""
        return self.momentum_pair(q, dq)[0]

    def W_c(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """W_c(q, q̇)·θ = C(q, q̇)ᵀ q̇ − g(q)."""
        return self.momentum_pair(q, dq)[1]

    def momentum_pair(self, q: np.ndarray, dq: np.ndarray,
                      bodies: np.ndarray | None = None,
                      gravity: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(W_m, W_c) sharing one kinematics pass; ``bodies`` (0-based) restricts the columns.

        ``gravity`` (N, 3), world frame, replaces the model's gravity sample by sample (W_c is
        affine in it; the floating-base identifier feeds the IMU's effective gravity).

        With ``bodies`` given, the result has 10·len(bodies) columns in that order. The bilinear
        forms of every body are folded with Ad⁻¹ into (10, 6) maps acting on world-frame motions,
        so each regressor is one batched matmul against the world-frame columns S_j and
        ∂v/∂q_j, masked to the kinematic support (exact zeros elsewhere).
        """
        q = _as_batch(q, self.model.nq, "q")
        dq = _as_batch(dq, self.model.nv, "dq")
        if q.shape[0] != dq.shape[0]:
            raise ValueError("q and dq must have the same number of samples")
        bodies = np.arange(self.nb) if bodies is None else np.asarray(bodies, int)
        n = q.shape[0]
        w_m = np.empty((n, self.model.nv, 10 * len(bodies)))
        w_c = np.empty_like(w_m)
        # chunks keep the (chunk, nv, 10·nb) temporaries in cache: memory traffic, not flops,
        # is what this costs
        for a in range(0, n, self.CHUNK):
            b = min(n, a + self.CHUNK)
            g = None if gravity is None else gravity[a:b]
            w_m[a:b], w_c[a:b] = self._momentum_chunk(q[a:b], dq[a:b], bodies, g)
        return w_m, w_c

    CHUNK = 1024

    def _momentum_chunk(self, q: np.ndarray, dq: np.ndarray, bodies: np.ndarray,
                        gravity: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        kin, t_world = self._body_terms(q, dq)
        assert kin.v_world is not None  # velocities were given
        n, nb = q.shape[0], len(bodies)
        rot, pos = kin.rot[:, bodies], kin.pos[:, bodies]
        x_inv = inverse_action_matrix(rot, pos)                                 # (N, nb, 6, 6)
        v_b = (x_inv @ kin.v_world[:, bodies, :, None])[..., 0]
        p_map = np.swapaxes((bilinear_matrix(v_b) @ x_inv).reshape(n, 10 * nb, 6), -1, -2)
        mask = self._mask(bodies)                                                # (nv, 10·nb)
        w_m = kin.s_world @ p_map
        w_m *= mask
        w_c = t_world @ p_map
        # −∂U_i/∂q_j in the world frame: U_i = −g·(m p_i + R_i h), and q_j moves the point p_i
        # with s_l + s_a × p_i and rotates R_i h with s_a, so only the m and h rows are non-zero.
        g = (np.broadcast_to(self.model.gravity.linear, (n, 3)) if gravity is None
             else np.asarray(gravity, float))[:, None, :]                        # (N, 1, 3)
        s_l, s_a = kin.s_world[..., :3], kin.s_world[..., 3:]
        g_x_sa = np.cross(g, s_a)                                                # (N, nv, 3)
        grav = np.zeros((n, self.model.nv, nb, 10))
        grav[..., 0] = np.sum(s_l * g, axis=-1)[:, :, None] + g_x_sa @ np.swapaxes(pos, -1, -2)
        grav[..., 1:4] = np.swapaxes(g_x_sa[:, None] @ rot, 1, 2)
        w_c += grav.reshape(n, self.model.nv, 10 * nb)
        w_c *= mask
        return w_m, w_c

    def _mask(self, bodies: np.ndarray) -> np.ndarray:
        return np.repeat(self.kin.support_mask[bodies], 10, axis=0).T

    def kinetic(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """Kinetic-energy row regressor (N, 10·n_bodies): K = row·θ."""
        q = _as_batch(q, self.model.nq, "q")
        kin = self.kin.forward(q, _as_batch(dq, self.model.nv, "dq"))
        assert kin.v_world is not None  # velocities were given
        out = np.empty((q.shape[0], self.n_theta))
        for i in range(self.nb):
            v_i = inverse_action(kin.rot[:, i], kin.pos[:, i], kin.v_world[:, i:i + 1])[:, 0]
            out[:, 10 * i:10 * i + 10] = 0.5 * bilinear_regressor(v_i, v_i)
        return out

    def potential(self, q: np.ndarray) -> np.ndarray:
        """Potential-energy row regressor (N, 10·n_bodies): U = −g·(m p + R h) = row·θ."""
        q = _as_batch(q, self.model.nq, "q")
        kin = self.kin.forward(q)
        g = self.model.gravity.linear
        out = np.zeros((q.shape[0], self.n_theta))
        for i in range(self.nb):
            out[:, 10 * i] = -kin.pos[:, i] @ g
            out[:, 10 * i + 1:10 * i + 4] = -(np.swapaxes(kin.rot[:, i], -1, -2) @ g)
        return out

    # -- Pinocchio per sample ----------------------------------------------------------
    def _torque_regressor(self, model: pin.Model, data: pin.Data, q: np.ndarray,
                          v: np.ndarray, a: np.ndarray) -> np.ndarray:
        out = np.empty((q.shape[0], model.nv, self.n_theta))
        for k in range(q.shape[0]):
            out[k] = pin.computeJointTorqueRegressor(model, data, q[k], v[k], a[k])
        return out

    def Y(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        """Inverse-dynamics regressor: Y·θ = H q̈ + C q̇ + g."""
        nq, nv = self.model.nq, self.model.nv
        q, dq, ddq = _as_batch(q, nq, "q"), _as_batch(dq, nv, "dq"), _as_batch(ddq, nv, "ddq")
        return self._torque_regressor(self.model, self.data, q, dq, ddq)

    def Y_p(self, q: np.ndarray, dq: np.ndarray, dq_a: np.ndarray, ddq_a: np.ndarray,
            bodies: np.ndarray | None = None) -> np.ndarray:
        """Passivity regressor: Y_p·θ = H q̈_a + C(q, q̇) q̇_a + g, with Pinocchio's C.

        Body-level factorisation (Echeandia & Wensing), per body i in its own frame, with the
        body Jacobian J_i, v_i = J_i q̇, u_i = J_i q̇_a, a_i = J_i q̈_a + J̇_i q̇_a − (g_i, 0):

            Y_p θ = Σ_i J_iᵀ [I_i a_i + B_i(v_i) u_i],
            B(v) = ½[(v×*)I − I(v×) + (I v)×̄*],   ((f)×̄* u := u ×* f),

        which is the C with Ḣ = C + Cᵀ that Pinocchio's ``computeCoriolisMatrix`` returns, also
        for the free-flyer root (the polarisation of RNEA's velocity term is not, there). Each
        row is a sum of ``bilinear_regressor`` terms, so the whole batch is closed-form numpy.
        ``bodies`` (0-based) restricts the columns as in ``momentum_pair``.
        """
        nq, nv = self.model.nq, self.model.nv
        q, dq = _as_batch(q, nq, "q"), _as_batch(dq, nv, "dq")
        dq_a, ddq_a = _as_batch(dq_a, nv, "dq_a"), _as_batch(ddq_a, nv, "ddq_a")
        kin = self.kin.forward(q, dq)
        assert kin.v_world is not None  # velocities were given
        s_dot = cross_motion(kin.v_world[:, self.kin.v_body], kin.s_world)   # d/dt S_j (world)
        u_cols = kin.s_world * dq_a[:, :, None]
        a_cols = s_dot * dq_a[:, :, None] + kin.s_world * ddq_a[:, :, None]
        bodies = np.arange(self.nb) if bodies is None else np.asarray(bodies, int)
        out = np.zeros((q.shape[0], nv, 10 * len(bodies)))
        g_world = self.model.gravity.linear
        for col, i in enumerate(bodies):
            sup = self.kin.support[i]
            rot, pos = kin.rot[:, i], kin.pos[:, i]
            s_i = inverse_action(rot, pos, kin.s_world[:, sup])
            v_i = inverse_action(rot, pos, kin.v_world[:, i:i + 1])
            u_i = inverse_action(rot, pos, u_cols[:, sup].sum(axis=1, keepdims=True))
            a_i = inverse_action(rot, pos, a_cols[:, sup].sum(axis=1, keepdims=True))
            a_i[..., :3] -= (np.swapaxes(rot, -1, -2) @ g_world)[:, None]
            out[:, sup, 10 * col:10 * col + 10] = (
                bilinear_regressor(s_i, a_i)
                - 0.5 * (bilinear_regressor(cross_motion(v_i, s_i), u_i)
                         + bilinear_regressor(s_i, cross_motion(v_i, u_i))
                         + bilinear_regressor(cross_motion(u_i, s_i), v_i)))
        return out

    def friction(self, dq: np.ndarray, ddq: np.ndarray | None = None,
                 q: np.ndarray | None = None) -> np.ndarray:
        """Friction regressor (N, nv, 4·nj), columns [Fc, Fv, Ia, β] per actuated joint; with
        ``q`` given and calibrated extra terms on the robot (``robot.friction.terms``), their
        columns follow: (N, nv, (4 + width)·nj), per joint in the terms' coefficient order."""
        dq = _as_batch(dq, self.model.nv, "dq")
        ddq = np.zeros_like(dq) if ddq is None else _as_batch(ddq, self.model.nv, "ddq")
        rows = self.robot.v_index
        terms = self.robot.friction.terms
        width = 0 if q is None or terms is None else terms.width
        out = np.zeros((dq.shape[0], self.model.nv, (4 + width) * len(rows)))
        for j, r in enumerate(rows):
            out[:, r, 4 * j] = np.sign(dq[:, r])
            out[:, r, 4 * j + 1] = dq[:, r]
            out[:, r, 4 * j + 2] = ddq[:, r]
            out[:, r, 4 * j + 3] = 1.0
        if width:
            assert terms is not None and q is not None
            qa = _as_batch(q, self.model.nq, "q")[:, self.robot.q_index]
            feat = terms.features(qa, dq[:, rows])                    # (N, nj, width)
            base = 4 * len(rows)
            for j, r in enumerate(rows):
                out[:, r, base + width * j:base + width * (j + 1)] = feat[:, j]
        return out

    # -- θ_e / θ_r split ----------------------------------------------------------------
    def split(self, regressor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(columns of θ_e, remaining body columns) of a (…, 10·n_bodies) regressor."""
        ee = self.robot.ee_columns
        mask = np.ones(regressor.shape[-1], bool)
        mask[ee] = False
        return regressor[..., ee], regressor[..., mask]

    def theta_r_bodies(self) -> np.ndarray:
        """Nominal θ of the non-end-effector bodies, matching ``split(...)[1]``'s columns."""
        theta = self.robot.theta()
        mask = np.ones(theta.size, bool)
        mask[self.robot.ee_columns] = False
        return theta[mask]
