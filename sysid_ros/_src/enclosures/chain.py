"""Kinematics and passivity-form inverse dynamics of a fixed-base revolute chain, written ONCE for
three number types: float arrays (nominal values), complex arrays (complex-step derivatives) and
``Interval`` (sound enclosures over time sub-intervals and parameter boxes).

Everything is component-wise: a 3-vector is a tuple of 3 "scalars" (each an array or an
Interval of the batch shape), a rotation a 3×3 nested tuple. Only +, −, × and constant linear maps
are used, so the same code is analytic for complex step and sound for intervals. Joint angles
enter only through (cos q, sin q) pairs, which the caller computes with ``np.cos``/``np.sin`` or
``interval.cos_sin``.

Dynamics (docs/theory/controller.md#the-passivity-regressor-y_p): with joint velocities q̇ (→ body velocities v) and the
controller's reference q̇_a (→ w), the passivity form τ = H(q)q̈_a + C(q, q̇)q̇_a + g(q) is RNEA
with the bilinear (Christoffel) terms polarised:

    a_i = X_i a_p + S_i q̈_a,i + ½(v_i × S_i q̇_a,i + w_i × S_i q̇_i),   a_0 = −gravity
    f_i = I_i a_i + ½(v_i ×* I_i w_i + w_i ×* I_i v_i),   τ_i = S_iᵀ f_i,   f_p += X_iᵀ f_i,

i.e. the polarisation ½[Q(a+b) − Q(a) − Q(b)] of RNEA's velocity term; on these fixed-base
chains it equals ``Regressors.Y_p`` (body-level factorisation) and it reduces to ordinary RNEA
when q̇_a = q̇. Spatial vectors are [linear; angular] in each
body's joint frame; θ per body is Pinocchio's [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz] (h = m·c,
inertia about the joint-frame origin).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pinocchio as pin

from sysid_ros._src.model.robots import Robot
from sysid_ros._src.enclosures.errors import UnplannableRobotError

__all__ = ["SerialChain", "body_regressor", "sphere_centres", "passivity_torque", "world_poses",
           "world_axes", "reference_torque", "forward_pass"]

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
    def from_robot(cls, robot: Robot) -> SerialChain:
        if robot.floating_base:
            raise UnplannableRobotError(
                f"{robot.name}: the planner handles fixed-base arms only (floating base found)")
        if robot.nj != robot.model.njoints - 1:
            raise UnplannableRobotError(f"{robot.name}: every body must be an actuated joint")
        spheres = robot.spheres
        return cls.from_model(robot.model, robot.name,
                              np.array([s.joint_id - 1 for s in spheres], int),
                              np.array([s.offset for s in spheres]).reshape(-1, 3),
                              np.array([s.radius for s in spheres], float))

    @classmethod
    def from_model(cls, model: pin.Model, name: str, sphere_body: np.ndarray | None = None,
                   sphere_offset: np.ndarray | None = None,
                   sphere_radius: np.ndarray | None = None) -> SerialChain:
        """The chain of a fixed-base Pinocchio model of revolute joints (``name`` for errors);
        no collision spheres unless given."""
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
                raise UnplannableRobotError(f"{name}: joint {model.names[i]} of type {kind} "
                                            "is not a revolute joint")
            parent.append(model.parents[i] - 1)
            rot.append(model.jointPlacements[i].rotation.copy())
            pos.append(model.jointPlacements[i].translation.copy())
            axis.append(a)
        return cls(tuple(parent), np.array(rot), np.array(pos), np.array(axis), tuple(principal),
                   model.gravity.linear.copy(),
                   np.zeros(0, int) if sphere_body is None else sphere_body,
                   np.zeros((0, 3)) if sphere_offset is None else sphere_offset,
                   np.zeros(0) if sphere_radius is None else sphere_radius)


# -- component-wise linear algebra --------------------------------------------------------------
#: an exact zero is a Python number equal to 0 (np.float64 included); arrays never count.
#: _mul/_plus/_minus test it inline: they run tens of thousands of times per NLP evaluation and
#: per sound check, where a helper call per test was a measurable share of the time
_NUMBER = (float, int)


def _mul(x: Any, y: Any) -> Any:
    """x·y with exact zeros short-circuited (constant axes and placements are sparse)."""
    if (isinstance(x, _NUMBER) and x == 0) or (isinstance(y, _NUMBER) and y == 0):
        return 0.0
    return x * y


def _plus(x: Any, y: Any) -> Any:
    if isinstance(x, _NUMBER) and x == 0:
        return y
    if isinstance(y, _NUMBER) and y == 0:
        return x
    return x + y


def _minus(x: Any, y: Any) -> Any:
    if isinstance(y, _NUMBER) and y == 0:
        return x
    if isinstance(x, _NUMBER) and x == 0:
        return -y
    return x - y


def _dot_const(row: Sequence[Any], c: np.ndarray) -> Any:
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


def _scale(a: Sequence[Any], s: Any) -> tuple[Any, ...]:
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


def world_axes(chain: SerialChain, cs: Sequence[tuple]) -> list[tuple]:
    """World direction (3-tuple) of every joint axis; a joint's own angle does not move it."""
    rots, _ = world_poses(chain, cs)
    return [_matcvec(rots[j], chain.axis[j]) for j in range(chain.nb)]


def sphere_centres(chain: SerialChain, cs: Sequence[tuple],
                   poses: tuple[list, list] | None = None) -> list[tuple]:
    """World centre (3-tuple) of every collision sphere; ``poses``: ``world_poses(chain, cs)``
    when the caller has it already (shared with ``body_regressor``)."""
    rots, poss = poses if poses is not None else world_poses(chain, cs)
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


def forward_pass(chain: SerialChain, cs: Sequence[tuple], dq: Sequence, dq_a: Sequence,
                 ddq_a: Sequence, with_gravity: bool = True,
                 base: tuple[Sequence, Sequence] | None = None) -> tuple[list, list, list]:
    """Body velocities v (from q̇), w (from q̇_a) and accelerations a, each (lin, ang) per body:
    RNEA's forward pass, which ``passivity_torque`` and ``body_regressor`` can share.
    ``base``: the base frame's spatial acceleration (lin, ang) in its own frame, in place of
    −gravity (``with_gravity``) or zero — e.g. a moving trunk's (``enclosures.disturbance``)."""
    nb = chain.nb
    zero3 = (0.0, 0.0, 0.0)
    same = dq_a is dq                # ordinary RNEA: w = v, no polarisation needed
    if base is None:
        base = (tuple(-g for g in chain.gravity) if with_gravity else zero3, zero3)
    vel: list = [None] * nb
    wel: list = [None] * nb
    acc: list = [None] * nb
    for i in range(nb):
        p = chain.parent[i]
        a = chain.axis[i]
        a_l, a_a = _to_child(chain, i, cs[i], *(base if p < 0 else acc[p]))
        v_l, v_a = _to_child(chain, i, cs[i], *vel[p]) if p >= 0 else (zero3, zero3)
        v_a = _add(v_a, _scale(a, dq[i]))
        if same:
            w_l, w_a = v_l, v_a
            # v × S q̇ with S = (0, axis): x × (0, a·s) = s·(x_lin × a, x_ang × a)
            bil_l = _scale(_cross(v_l, a), dq[i])
            bil_a = _scale(_cross(v_a, a), dq[i])
        else:
            w_l, w_a = _to_child(chain, i, cs[i], *wel[p]) if p >= 0 else (zero3, zero3)
            w_a = _add(w_a, _scale(a, dq_a[i]))
            # ½(v × S q̇_a + w × S q̇)
            bil_l = _scale(_add(_scale(_cross(v_l, a), dq_a[i]), _scale(_cross(w_l, a), dq[i])),
                           0.5)
            bil_a = _scale(_add(_scale(_cross(v_a, a), dq_a[i]), _scale(_cross(w_a, a), dq[i])),
                           0.5)
        a_l = _add(a_l, bil_l)
        a_a = _add(_add(a_a, _scale(a, ddq_a[i])), bil_a)
        vel[i], wel[i], acc[i] = (v_l, v_a), (w_l, w_a), (a_l, a_a)
    return vel, wel, acc


def _body_force(theta: Sequence, v: tuple, w: tuple, a: tuple, same: bool) -> tuple:
    """I a + ½(v ×* I w + w ×* I v) (= I a + v ×* I v when w is v)."""
    ia = _inertia_times(theta, *a)
    if same:
        c = _cross_force(v, _inertia_times(theta, *v))
        return _add(ia[0], c[0]), _add(ia[1], c[1])
    c1 = _cross_force(v, _inertia_times(theta, *w))
    c2 = _cross_force(w, _inertia_times(theta, *v))
    return (_add(ia[0], _scale(_add(c1[0], c2[0]), 0.5)),
            _add(ia[1], _scale(_add(c1[1], c2[1]), 0.5)))


def passivity_torque(chain: SerialChain, cs: Sequence[tuple], dq: Sequence, dq_a: Sequence,
                     ddq_a: Sequence, theta: Sequence[Sequence | None],
                     with_gravity: bool = True,
                     forward: tuple[list, list, list] | None = None) -> list:
    """τ = H(q)q̈_a + C(q, q̇)q̇_a + g(q) per joint (module doc), rigid bodies only (no friction).

    ``theta[i]`` is body i's 10 parameters (scalars of any supported type), or None to leave the
    body out. Pass the same object for ``dq_a`` and ``dq`` for ordinary inverse dynamics (cheaper).
    ``with_gravity=False`` drops g(q) (e.g. columns of the mass matrix with q̈_a = e_j).
    ``forward``: ``forward_pass`` of the same arguments, when the caller has it already.
    """
    nb = chain.nb
    same = dq_a is dq
    vel, wel, acc = forward if forward is not None else forward_pass(chain, cs, dq, dq_a, ddq_a,
                                                                     with_gravity)
    force: list[tuple[Any, ...] | None] = []
    for i in range(nb):
        body = theta[i]
        force.append(None if body is None else _body_force(body, vel[i], wel[i], acc[i], same))
    tau: list = [0.0] * nb
    for i in range(nb - 1, -1, -1):
        f_i = force[i]
        if f_i is None:
            continue
        fl, fn = f_i
        tau[i] = _dot_const(fn, chain.axis[i])
        p = chain.parent[i]
        if p >= 0:
            fp = _to_parent_force(chain, i, cs[i], fl, fn)
            f_p = force[p]
            force[p] = fp if f_p is None else (_add(f_p[0], fp[0]), _add(f_p[1], fp[1]))
    return tau


def body_regressor(chain: SerialChain, cs: Sequence[tuple], dq: Sequence, ddq: Sequence,
                   body: int, forward: tuple[list, list, list] | None = None,
                   poses: tuple[list, list] | None = None) -> np.ndarray:
    """Columns of the inverse-dynamics regressor Y(q, q̇, q̈) belonging to ``body``'s 10
    parameters, shape (..., nb, 10), for float or complex arrays (not Intervals).

    Only that body exerts a force, f = A(v, a)·θ_b (A from the unit-θ forces); joint j feels
    S_jᵀ f with S_j expressed in the body's frame, so no backward pass over 10 columns is needed.
    ``forward`` (``forward_pass(chain, cs, dq, dq, ddq)``) and ``poses`` (``world_poses``): when
    the caller has them already (the NLP shares them with the constraints).
    """
    vel, _, acc = forward if forward is not None else forward_pass(chain, cs, dq, dq, ddq, True)
    v, a = vel[body], acc[body]
    # column p of A is the force for θ = e_p; Python-number unit parameters let the exact-zero
    # rule skip the other nine (a one-hot array would multiply every term at 10× the size)
    unit = np.eye(10)
    columns = [_body_force(tuple(float(x) for x in unit[p]), v, v, a, True) for p in range(10)]
    force = np.swapaxes(_stacked([f_l + f_n for f_l, f_n in columns]), -1, -2)  # (..., 6, 10)
    rots, poss = poses if poses is not None else world_poses(chain, cs)
    rb = _stack_matrix(rots[body])                                             # (..., 3, 3)
    pb = np.stack(np.broadcast_arrays(*poss[body]), -1)
    # every joint j that carries the body at once (axis J): its world axis z_j and origin p_j
    support = [j for j in range(chain.nb) if _in_support(chain, j, body)]
    z = _stacked([_matcvec(rots[j], chain.axis[j]) for j in support])         # (..., J, 3)
    pj = _stacked([poss[j] for j in support])
    lin_w = np.cross(pj, z)                       # world motion of joint j at the origin
    # S_j in the body frame, rows (..., J, 6): R_bᵀ applied to row vectors is @ R_b (matmul:
    # batched einsum with an ellipsis was several times slower here)
    s_b = np.concatenate([(lin_w - np.cross(pb[..., None, :], z)) @ rb, z @ rb], -1)
    if len(support) == chain.nb:       # e.g. the end effector: every joint carries it
        return s_b @ force
    out = np.zeros(force.shape[:-2] + (chain.nb, 10), dtype=force.dtype)
    out[..., support, :] = s_b @ force
    return out


def _stacked(vectors: Sequence[Sequence]) -> np.ndarray:
    """Component vectors (scalars or arrays, broadcast together) → array (..., len, dim)."""
    comps = np.broadcast_arrays(*(x for vec in vectors for x in vec))
    dim = len(vectors[0])
    return np.stack([np.stack(comps[i:i + dim], -1) for i in range(0, len(comps), dim)], -2)


def _stack_matrix(m: Sequence) -> np.ndarray:
    rows = [np.stack(np.broadcast_arrays(*row), -1) for row in m]
    return np.stack(np.broadcast_arrays(*rows), -2)


def _in_support(chain: SerialChain, j: int, body: int) -> bool:
    while body >= 0:
        if body == j:
            return True
        body = chain.parent[body]
    return False


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
