"""Kinematics and passivity-form inverse dynamics of a fixed-base revolute chain, written ONCE for
three number types: float arrays (nominal values), complex arrays (complex-step derivatives) and
``Interval`` (sound enclosures over time sub-intervals and parameter boxes).

Everything is component-wise: a 3-vector is a tuple of 3 "scalars" (each an array or an
Interval of the batch shape), a rotation a 3×3 nested tuple. Only +, −, × and constant linear maps
are used, so the same code is analytic for complex step and sound for intervals. Joint angles
enter only through (cos q, sin q) pairs, which the caller computes with ``np.cos``/``np.sin`` or
``interval.cos_sin``.

Dynamics (DESIGN §5): with joint velocities q̇ (→ body velocities v) and the controller's
reference q̇_a (→ w), the passivity form τ = H(q)q̈_a + C(q, q̇)q̇_a + g(q) is RNEA with the
bilinear (Christoffel) terms polarised:

    a_i = X_i a_p + S_i q̈_a,i + ½(v_i × S_i q̇_a,i + w_i × S_i q̇_i),   a_0 = −gravity
    f_i = I_i a_i + ½(v_i ×* I_i w_i + w_i ×* I_i v_i),   τ_i = S_iᵀ f_i,   f_p += X_iᵀ f_i,

which equals ``Regressors.Y_p`` (the polarisation ½[Q(a+b) − Q(a) − Q(b)] of RNEA's velocity
term) and reduces to ordinary RNEA when q̇_a = q̇. Spatial vectors are [linear; angular] in each
body's joint frame; θ per body is Pinocchio's [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (h = m·c,
inertia about the joint-frame origin).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from sysid_ros.model.robots import Robot
from sysid_ros.planning.errors import UnsupportedRobotError
from sysid_ros.planning.interval import isum

__all__ = ["SerialChain", "sphere_centres", "passivity_torque", "world_poses"]

_PRINCIPAL = {"JointModelRX": 0, "JointModelRY": 1, "JointModelRZ": 2}


@dataclass(frozen=True)
class SerialChain:
    """Constant data of a fixed-base chain of revolute joints (one per Pinocchio body)."""

    parent: tuple[int, ...]             # parent body index, −1 for the base
    place_rot: np.ndarray               # (nb, 3, 3) joint placement in the parent frame
    place_pos: np.ndarray               # (nb, 3)
    axis: np.ndarray                    # (nb, 3) unit joint axis in the joint frame
    principal: tuple[int, ...]          # 0/1/2 for an x/y/z axis, −1 for an unaligned axis
    gravity: np.ndarray                 # (3,) world gravity
    sphere_body: np.ndarray             # (ns,) body index of each collision sphere
    sphere_offset: np.ndarray           # (ns, 3)
    sphere_radius: np.ndarray           # (ns,)

    @property
    def nb(self) -> int:
        return len(self.parent)

    @classmethod
    def from_robot(cls, robot: Robot) -> "SerialChain":
        model = robot.model
        if robot.floating_base:
            raise UnsupportedRobotError(
                f"{robot.name}: the planner handles fixed-base arms only (floating base found)")
        parent, rot, pos, axis, principal = [], [], [], [], []
        for i in range(1, model.njoints):
            joint = model.joints[i]
            kind = joint.shortname()
            if kind in _PRINCIPAL:
                a = np.zeros(3)
                a[_PRINCIPAL[kind]] = 1.0
                principal.append(_PRINCIPAL[kind])
            elif kind == "JointModelRevoluteUnaligned":
                a = np.asarray(joint.extract().axis, float).copy()
                principal.append(-1)
            else:
                raise UnsupportedRobotError(f"{robot.name}: joint {model.names[i]} of type {kind} "
                                            "is not a revolute joint")
            parent.append(model.parents[i] - 1)
            rot.append(model.jointPlacements[i].rotation.copy())
            pos.append(model.jointPlacements[i].translation.copy())
            axis.append(a)
        if robot.nj != len(parent):
            raise UnsupportedRobotError(f"{robot.name}: every body must be an actuated joint")
        spheres = robot.spheres
        return cls(tuple(parent), np.array(rot), np.array(pos), np.array(axis), tuple(principal),
                   model.gravity.linear.copy(),
                   np.array([s.joint_id - 1 for s in spheres], int),
                   np.array([s.offset for s in spheres]).reshape(-1, 3),
                   np.array([s.radius for s in spheres], float))


# -- component-wise linear algebra --------------------------------------------------------------
def _is_zero(x) -> bool:
    return isinstance(x, (float, int)) and x == 0


def _mul(x, y):
    """x·y with exact zeros short-circuited (constant axes and placements are sparse)."""
    if _is_zero(x) or _is_zero(y):
        return 0.0
    return x * y


def _plus(x, y):
    if _is_zero(x):
        return y
    if _is_zero(y):
        return x
    return x + y


def _minus(x, y):
    if _is_zero(y):
        return x
    if _is_zero(x):
        return -y
    return x - y


def _dot_const(row: Sequence, c: np.ndarray):
    """Σ_k row[k]·c[k] for constant c, skipping exact zeros (fewer ops, tighter intervals)."""
    total = 0.0
    for k in range(len(c)):
        if c[k] != 0.0:
            total = _plus(total, _mul(row[k], float(c[k])))
    return total


def _cmatvec(m: np.ndarray, v: Sequence) -> tuple:
    """Constant 3×3 matrix times a component vector."""
    return tuple(_dot_const(v, m[r]) for r in range(3))


def _matcvec(m: Sequence, c: np.ndarray) -> tuple:
    """Component 3×3 matrix (rows) times a constant vector."""
    return tuple(_dot_const(m[r], c) for r in range(3))


def _ccross(a: np.ndarray, v: Sequence) -> tuple:
    """Constant a × v."""
    return _cmatvec(np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]]), v)


def _cross(a: Sequence, b: Sequence) -> tuple:
    return (_minus(_mul(a[1], b[2]), _mul(a[2], b[1])),
            _minus(_mul(a[2], b[0]), _mul(a[0], b[2])),
            _minus(_mul(a[0], b[1]), _mul(a[1], b[0])))


def _add(a: Sequence, b: Sequence) -> tuple:
    return tuple(_plus(x, y) for x, y in zip(a, b))


def _scale(a: Sequence, s) -> tuple:
    return tuple(_mul(x, s) for x in a)


def _rotate(chain: SerialChain, i: int, cs: tuple, v: Sequence, transpose: bool = False) -> tuple:
    """Rot(axis_i, q_i)·v (or its transpose) given cs = (cos q_i, sin q_i)."""
    c, s = cs
    if transpose:
        s = -s
    p = chain.principal[i]
    if p >= 0:
        # rotation in the plane (u, w) perpendicular to the principal axis; the axis part is
        # unchanged, which keeps intervals tighter than the general Rodrigues form
        u, w = (p + 1) % 3, (p + 2) % 3
        out = list(v)
        out[u] = _minus(_mul(c, v[u]), _mul(s, v[w]))
        out[w] = _plus(_mul(s, v[u]), _mul(c, v[w]))
        return tuple(out)
    a = chain.axis[i]
    along = _dot_const(v, a)
    axv = _ccross(a, v)
    return tuple(c * v[j] + s * axv[j] + (1.0 - c) * (along * a[j]) for j in range(3))


# -- kinematics ---------------------------------------------------------------------------------
def world_poses(chain: SerialChain, cs: Sequence[tuple]) -> tuple[list, list]:
    """World rotation (3×3 nested tuples) and origin (3-tuple) of every joint frame."""
    rots: list = []
    poss: list = []
    for i in range(chain.nb):
        p = chain.parent[i]
        if p < 0:
            m = tuple(tuple(chain.place_rot[i][r]) for r in range(3))
            pos = tuple(chain.place_pos[i])
        else:
            rp = rots[p]
            m = tuple(_cmatvec(chain.place_rot[i].T, rp[r]) for r in range(3))
            pos = _add(poss[p], _matcvec(rp, chain.place_pos[i]))
        # (M·Rot)'s rows are Rotᵀ applied to M's rows
        rots.append(tuple(_rotate(chain, i, cs[i], m[r], transpose=True) for r in range(3)))
        poss.append(pos)
    return rots, poss


def sphere_centres(chain: SerialChain, cs: Sequence[tuple]) -> list[tuple]:
    """World centre (3-tuple) of every collision sphere."""
    rots, poss = world_poses(chain, cs)
    out = []
    for b, off in zip(chain.sphere_body, chain.sphere_offset):
        r, p = rots[b], poss[b]
        out.append(_add(p, _matcvec(r, off)))
    return out


# -- dynamics -----------------------------------------------------------------------------------
def _to_child(chain: SerialChain, i: int, cs: tuple, lin: Sequence, ang: Sequence) -> tuple:
    """Motion vector of the parent frame expressed in joint i's frame."""
    e_t = chain.place_rot[i].T
    r = chain.place_pos[i]
    ang_c = _rotate(chain, i, cs, _cmatvec(e_t, ang), transpose=True)
    shifted = tuple(_minus(lin[k], x) for k, x in enumerate(_ccross(r, ang)))
    lin_c = _rotate(chain, i, cs, _cmatvec(e_t, shifted), transpose=True)
    return lin_c, ang_c


def _to_parent_force(chain: SerialChain, i: int, cs: tuple, f: Sequence, n: Sequence) -> tuple:
    r = chain.place_pos[i]
    f_p = _cmatvec(chain.place_rot[i], _rotate(chain, i, cs, f))
    n_p = _add(_cmatvec(chain.place_rot[i], _rotate(chain, i, cs, n)), _ccross(r, f_p))
    return f_p, n_p


def _inertia_times(theta: Sequence, lin: Sequence, ang: Sequence) -> tuple:
    """I(θ)·(lin, ang) = (m·lin − h × ang, h × lin + Ī·ang)."""
    m, h = theta[0], theta[1:4]
    ixx, ixy, iyy, ixz, iyz, izz = theta[4:10]
    hxa, hxl = _cross(h, ang), _cross(h, lin)
    rows = ((ixx, ixy, ixz), (ixy, iyy, iyz), (ixz, iyz, izz))
    ia = tuple(_plus(_plus(_mul(r[0], ang[0]), _mul(r[1], ang[1])), _mul(r[2], ang[2]))
               for r in rows)
    return (tuple(_minus(_mul(m, lin[k]), hxa[k]) for k in range(3)),
            tuple(_plus(hxl[k], ia[k]) for k in range(3)))


def _cross_force(v: tuple, f: tuple) -> tuple:
    """v ×* f for motion v = (ν, ω), force f = (f, n): (ω × f, ω × n + ν × f)."""
    (nu, om), (fl, fn) = v, f
    return _cross(om, fl), _add(_cross(om, fn), _cross(nu, fl))


def passivity_torque(chain: SerialChain, cs: Sequence[tuple], dq: Sequence, dq_a: Sequence,
                     ddq_a: Sequence, theta: Sequence[Sequence | None],
                     with_gravity: bool = True) -> list:
    """τ = H(q)q̈_a + C(q, q̇)q̇_a + g(q) per joint (module doc), rigid bodies only (no friction).

    ``theta[i]`` is body i's 10 parameters (scalars of any supported type), or None to leave the
    body out (e.g. only the end-effector body, to build its regressor with unit θ columns).
    ``with_gravity=False`` drops g(q) (e.g. columns of the mass matrix with q̈_a = e_j).
    """
    nb = chain.nb
    zero3 = (0.0, 0.0, 0.0)
    base = (tuple(-g for g in chain.gravity) if with_gravity else zero3, zero3)
    vel: list = [None] * nb
    wel: list = [None] * nb
    acc: list = [None] * nb
    for i in range(nb):
        p = chain.parent[i]
        a = chain.axis[i]
        v_p = (zero3, zero3) if p < 0 else vel[p]
        w_p = (zero3, zero3) if p < 0 else wel[p]
        a_p = base if p < 0 else acc[p]
        v_l, v_a = _to_child(chain, i, cs[i], *v_p) if p >= 0 else (zero3, zero3)
        w_l, w_a = _to_child(chain, i, cs[i], *w_p) if p >= 0 else (zero3, zero3)
        a_l, a_a = _to_child(chain, i, cs[i], *a_p)
        v_a = _add(v_a, _scale(a, dq[i]))
        w_a = _add(w_a, _scale(a, dq_a[i]))
        # ½(v × S q̇_a + w × S q̇) with S = (0, axis): x × (0, a·s) = s·(x_lin × a, x_ang × a)
        bil_l = _add(_scale(_cross(v_l, a), dq_a[i]), _scale(_cross(w_l, a), dq[i]))
        bil_a = _add(_scale(_cross(v_a, a), dq_a[i]), _scale(_cross(w_a, a), dq[i]))
        a_l = _add(a_l, _scale(bil_l, 0.5))
        a_a = _add(_add(a_a, _scale(a, ddq_a[i])), _scale(bil_a, 0.5))
        vel[i], wel[i], acc[i] = (v_l, v_a), (w_l, w_a), (a_l, a_a)
    force: list = [None] * nb
    for i in range(nb):
        th = theta[i]
        if th is None:
            continue
        ia = _inertia_times(th, *acc[i])
        iw = _inertia_times(th, *wel[i])
        iv = _inertia_times(th, *vel[i])
        c1, c2 = _cross_force(vel[i], iw), _cross_force(wel[i], iv)
        force[i] = (_add(ia[0], _scale(_add(c1[0], c2[0]), 0.5)),
                    _add(ia[1], _scale(_add(c1[1], c2[1]), 0.5)))
    tau: list = [None] * nb
    for i in range(nb - 1, -1, -1):
        if force[i] is None:
            tau[i] = 0.0
            continue
        fl, fn = force[i]
        a = chain.axis[i]
        tau[i] = _dot_const(fn, a)
        p = chain.parent[i]
        if p >= 0:
            fp = _to_parent_force(chain, i, cs[i], fl, fn)
            force[p] = fp if force[p] is None else (_add(force[p][0], fp[0]),
                                                    _add(force[p][1], fp[1]))
    return tau


def reference_torque(robot: Robot, q: np.ndarray, dq: np.ndarray, dq_a: np.ndarray,
                     ddq_a: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Pinocchio value of the same quantity, for tests: Y_p θ via RNEA polarisation."""
    model = robot.model.copy()
    for i in range(1, model.njoints):
        model.inertias[i] = pin.Inertia.FromDynamicParameters(theta[10 * (i - 1):10 * i])
    data = model.createData()
    m0 = model.copy()
    m0.gravity.setZero()
    d0 = m0.createData()
    z = np.zeros(model.nv)
    out = pin.rnea(model, data, q, z, ddq_a).copy()
    out += 0.5 * (pin.rnea(m0, d0, q, dq + dq_a, z) - pin.rnea(m0, d0, q, dq, z)
                  - pin.rnea(m0, d0, q, dq_a, z))
    return out
