"""Tracking-error bound the robust controller guarantees, and the SOUND mass-matrix bounds it rests
on (docs/theory/controller.md#guarantee-and-the-tracking-error-bound, docs/theory/planner.md#sound-reachability).

Vocabulary (ARMOUR / S3): with e = q_d − q, ė = q̇_d − q̇ and a diagonal gain K_r, the
*composite error* is r = ė + K_r·e. The controller keeps V = ½ rᵀ M(q) r below V_max, where
M(q) = H(q) + diag(I_a) is the real robot's joint-space mass matrix (rigid bodies plus motor
armature, ``Robot.friction``). With λ a lower bound of λ_min(M) and μ_i an upper bound of
(M⁻¹)_ii along the motion,

    ½ λ ‖r‖² ≤ V ≤ V_max  ⇒  ‖r‖ ≤ ρ = √(2·V_max/λ),   |r_i| ≤ ρ_i = √(2·V_max·μ_i)

(the largest |r_i| on the ellipsoid rᵀMr ≤ 2V_max is √(2V_max (M⁻¹)_ii)); ė_i = −K_r,i e_i + r_i
then keeps |e_i| ≤ ρ_i/K_r,i and |ė_i| ≤ 2ρ_i for an error that starts inside.

**The lower mass model** (``lower_mass_model``) — one parameter vector θ_s and one armature
vector with M_true(q) ⪰ M(q; θ_s) + diag(I_a,lo) for EVERY q. It rests on:

- each non-EE body's θ in its box (``model_uncertainty.links_rel`` around the nominal, or a
  calibration's explicit box); the end-effector body = the unloaded nominal EE body within
  ``controller.ee_body_rel`` (default: the same relative box) plus a rigid payload. A payload
  is a physical body: its spatial inertia is ⪰ 0, so dropping it lowers M — every payload,
  whatever the identifier's θ_e box, is covered (the identifier's boxes are not needed);
- the spatial inertia I(θ) (6×6) is linear in θ, so for a body whose θ lies in a box,
  I(θ) ⪰ s·I(θ_ref) holds over the whole box iff it holds at the box's 2^10 vertices
  (λ_min is concave), with s = min over vertices of λ_min(I_ref^{-½} I(θ_v) I_ref^{-½}); each
  body's s is computed that way (s ≤ 0: the body is dropped, it is ⪰ 0 anyway) and then
  VERIFIED in the original coordinates with the eigensolver's backward-error slack. Since
  M = Σ_b J_bᵀ I_b J_b, M_true ⪰ Σ_b s_b J_bᵀ I_b,ref J_b = H(q; θ_s) with θ_s = s_b·θ_b,ref;
- I_a ≥ 0 (an armature is a reflected rotor inertia), so the armature box is clipped at 0.

**Over the workspace** (``mass_matrix_eigen_bounds``): kinetic energy is at least the
rotational energy, ½ rᵀ H(θ_s) r ≥ Σ_b ½ s_b μ_b ‖ω_b‖² with μ_b the smallest principal moment
of body b about its centre of mass and ω_b = Σ_{j ≤ b} z_j r_j (world joint axes z_j). So

    λ_min(M(q)) ≥ λ_min(diag(I_a,lo) + A(q)),   A_jk(q) = (z_j·z_k) · Σ_{b distal to j, k} s_b μ_b,

and A depends on q only through the relative orientation of the joint axes — on the sums of
consecutive parallel joints' angles, without the first joint and the last (Z1: q2+q3+q4 and
q5; a 2-D problem). Its λ_min over the workspace is enclosed by a branch-and-bound on boxes of
those angles with the affine enclosures and eigenvalue bounds of ``enclosures.mass_matrix``
(linear part exact at the vertices, second-order remainder shifted off). This is the sound
workspace bound used for ρ; it is loose where translational energy dominates the light
directions (the Z1: about a fifth of the sampled minimum, see the benchmark), tight where the
armature dominates (the Gen3: within a few per cent). A branch-and-bound on the full M(q)
enclosure does not converge over the workspace: its second-order remainder is O(60·w²·‖M‖) for
boxes of half-width w, against λ_min/‖M‖ ≈ 1e-3 on the Z1 — boxes of ~0.02 rad in five angles,
~1e10 boxes. The full enclosure is therefore used LOCALLY, on the planner's reachable boxes of
each time sub-interval (tiny), where it bounds λ_min and (M⁻¹)_ii tightly
(``Reachability``, docs/theory/planner.md#sound-reachability).

λ_max (reported, not used by a guarantee): the same vertex argument from above,
I(θ) ⪯ t·I(θ_ref), gives an upper model for θ_r; θ_e enters through the box given (default:
the unloaded EE body's box, i.e. only meaningful without payload); Gershgorin with
|H_ij| ≤ √(H_ii H_jj) and q-independent bounds of H_ii from the chain's link lengths give a
coarse but sound λ_max (``_lambda_max_geometric``).

Results are cached in memory and on disk (``$SYSID_ROS_CACHE``, else ``$XDG_CACHE_HOME`` or
``~/.cache``, subdirectory ``sysid_ros/mass_bounds``), keyed by a hash of everything they depend
on (model geometry and inertias, boxes, limits, settings, algorithm version).
"""
from __future__ import annotations

import hashlib
import itertools
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from collections.abc import Callable

import numpy as np
import pinocchio as pin

from sysid_ros._src.control.errors import BoundsError, ControllerConfigError
from sysid_ros._src.model.box import ParameterBox
from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.enclosures.affine import Affine, affine_cos_sin
from sysid_ros._src.enclosures.chain import SerialChain, world_axes
from sysid_ros._src.enclosures.interval import Interval
from sysid_ros._src.enclosures.mass_matrix import MassMatrixEnclosure, spatial_inertia

__all__ = ["LowerMassModel", "MassMatrixBounds", "TrackingErrorBound", "lower_mass_model",
           "mass_matrix_eigen_bounds", "tracking_error_bound", "mass_matrix_extremes",
           "box_lower_body"]

_EPS = np.finfo(float).eps
_VERSION = "sound-2"          # bump when the algorithm changes: invalidates the disk cache


def _eig_slack(a: np.ndarray) -> np.ndarray:
    return 32.0 * a.shape[-1] * _EPS * np.linalg.norm(a, axis=(-2, -1)) + np.finfo(float).tiny


def _box_scale(ref: np.ndarray, lo: np.ndarray, hi: np.ndarray, upper: bool) -> float:
    """Largest s ≥ 0 with I(θ) ⪰ s·I(ref) for every θ in [lo, hi] (``upper``: smallest t with
    I(θ) ⪯ t·I(ref)), from the 2^10 vertices (module doc) and verified in the original
    coordinates. I(ref) must be positive definite."""
    i_ref = spatial_inertia(ref)
    w, u = np.linalg.eigh(i_ref)
    if w[0] <= 0:
        raise BoundsError("a reference body inertia is not positive definite")
    wm = u @ np.diag(w ** -0.5) @ u.T
    verts = np.array([spatial_inertia(np.where(np.array(s, bool), hi, lo))
                      for s in itertools.product((0, 1), repeat=10)])
    rel = np.linalg.eigvalsh(wm @ verts @ wm)
    if upper:
        t = float(rel[:, -1].max()) * (1.0 + 1e-9) + 1e-12
        for _ in range(60):          # verify I(θ_v) ⪯ t·I_ref, growing t on failure
            d = t * i_ref - verts
            if np.all(np.linalg.eigvalsh(d)[:, 0] >= _eig_slack(d)):
                return t
            t *= 1.0 + 1e-6
        raise BoundsError("could not verify an upper inertia scale")
    s = float(rel[:, 0].min()) * (1.0 - 1e-9) - 1e-12
    for _ in range(60):              # verify I(θ_v) ⪰ s·I_ref, shrinking s on failure
        if s <= 0.0:
            return 0.0
        d = verts - s * i_ref
        if np.all(np.linalg.eigvalsh(d)[:, 0] >= _eig_slack(d)):
            return s
        s *= 1.0 - 1e-6
    return 0.0


def _theta_boxes(robot: Robot, ee_rel: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(reference θ, lower, upper) of every body, (10·nb,): θ_r from the calibration's explicit
    box or the relative box around the nominal; the EE body unloaded ± ee_rel."""
    theta = robot.theta()
    rad = robot.links_rel_uncertainty * np.abs(theta)
    lo, hi = theta - rad, theta + rad
    ee = robot.ee_columns
    if robot.theta_r_box is not None:
        mask = np.ones(theta.size, bool)
        mask[ee] = False
        lo[mask], hi[mask] = robot.theta_r_box
    lo[ee] = theta[ee] - ee_rel * np.abs(theta[ee])
    hi[ee] = theta[ee] + ee_rel * np.abs(theta[ee])
    return theta, lo, hi


def _ee_rel(robot: Robot) -> float:
    rel = (robot.config.get("controller") or {}).get("ee_body_rel", robot.links_rel_uncertainty)
    rel = float(rel)
    if not 0.0 <= rel < 1.0:
        raise ControllerConfigError(f"controller.ee_body_rel must be in [0, 1), got {rel}")
    return rel


@dataclass(frozen=True)
class LowerMassModel:
    """M_true(q) ⪰ M(q; theta) + diag(armature) for every q (module doc for what it rests on).

    theta (10·nb,): s_b·θ_b,ref per body (EE: unloaded nominal); armature (nj,) ≥ 0: the
    lower ends of I_a; scales (nb,): the s_b; mu (nb,): each reference body's smallest
    principal moment about its centre of mass (kg·m²), for the rotational form."""

    theta: np.ndarray
    armature: np.ndarray
    scales: np.ndarray
    mu: np.ndarray


def lower_mass_model(robot: Robot) -> LowerMassModel:
    """The certified lower mass model of ``robot`` (fixed base; see the module doc)."""
    if robot.floating_base:
        raise BoundsError(f"{robot.name}: the mass-matrix bounds are for fixed-base arms")
    theta, lo, hi = _theta_boxes(robot, _ee_rel(robot))
    nb = robot.n_bodies
    scales, mu = np.zeros(nb), np.zeros(nb)
    for b in range(nb):
        sl = slice(10 * b, 10 * b + 10)
        scales[b] = _box_scale(theta[sl], lo[sl], hi[sl], upper=False)
        i_c = pin.Inertia.FromDynamicParameters(theta[sl]).inertia
        mu[b] = max(0.0, float(np.linalg.eigvalsh(i_c)[0] - _eig_slack(i_c)))
    theta_s = np.repeat(scales, 10) * theta
    armature = np.maximum(robot.friction.lower[:, 2], 0.0)
    return LowerMassModel(theta_s, armature, scales, mu)


def box_lower_body(lo: np.ndarray, hi: np.ndarray) -> np.ndarray | None:
    """Parameters s·θ_c of a body below every θ of the box [lo, hi] (I(θ) ⪰ s·I(θ_c), θ_c the
    box centre; the vertex argument of the module doc), or None when the centre is not a
    positive definite inertia or s would be 0 — e.g. the identifier's θ_e box: every payload
    in it then counts in a lower mass model."""
    centre = 0.5 * (lo + hi)
    w = np.linalg.eigvalsh(spatial_inertia(centre))
    if w[0] <= 1e-9 * max(w[-1], 0.0) or w[-1] <= 0:
        return None
    s = _box_scale(centre, lo, hi, upper=False)
    return s * centre if s > 0.0 else None


def _upper_theta(robot: Robot) -> np.ndarray:
    """t_b·θ_b,ref for the non-EE bodies (I_b,true ⪯ t_b·I_b,ref; module doc)."""
    theta, lo, hi = _theta_boxes(robot, _ee_rel(robot))
    out = theta.copy()
    for b in range(robot.n_bodies):
        sl = slice(10 * b, 10 * b + 10)
        out[sl] = _box_scale(theta[sl], lo[sl], hi[sl], upper=True) * theta[sl]
    return out


# -- the rotational form over reduced angles ------------------------------------------------
@dataclass(frozen=True)
class _AngleGroups:
    """Joints merged into groups of consecutive parallel joints with no placement rotation
    between them (their rotations commute: one angle, the sum). ``free``: the groups whose
    angle the joint-axis Gram matrix depends on (not the first, not a last one)."""

    first: tuple[int, ...]              # first joint of each group
    members: tuple[tuple[int, ...], ...]
    free: tuple[int, ...]


def _angle_groups(chain: SerialChain) -> _AngleGroups:
    members: list[list[int]] = []
    for i in range(chain.nb):
        if (members and chain.parent[i] == members[-1][-1]
                and np.allclose(chain.place_rot[i], np.eye(3), atol=1e-12)
                and np.allclose(chain.axis[i], chain.axis[members[-1][-1]], atol=1e-12)):
            members[-1].append(i)
        else:
            members.append([i])
    # the first group rotates every axis alike; a group with no joint after it moves no axis
    has_child = [any(chain.parent[j] in g for j in range(chain.nb) if j not in g)
                 for g in members]
    free = tuple(k for k in range(1, len(members)) if has_child[k])
    return _AngleGroups(tuple(g[0] for g in members), tuple(tuple(g) for g in members), free)


def _rotational_weights(chain: SerialChain, weights: np.ndarray) -> np.ndarray:
    """W_jk = Σ of the body weights over bodies whose angular velocity contains both joints
    j and k (the bodies distal to both, itself included)."""
    nb = chain.nb
    anc = []
    for b in range(nb):
        s, j = set(), b
        while j >= 0:
            s.add(j)
            j = chain.parent[j]
        anc.append(s)
    w = np.zeros((nb, nb))
    for b in range(nb):
        for j in anc[b]:
            for k in anc[b]:
                w[j, k] += weights[b]
    return w


def _rotational_enclosure(chain: SerialChain, groups: _AngleGroups, psi_lo: np.ndarray,
                          psi_hi: np.ndarray, wmat: np.ndarray,
                          armature: np.ndarray) -> MassMatrixEnclosure:
    """Enclosure of diag(armature) + A(ψ) over boxes of the free groups' angles (B, n_free)."""
    nb, n_b = chain.nb, psi_lo.shape[0]
    k = len(groups.free)
    psi = Interval.from_bounds(psi_lo, psi_hi)
    one = (np.ones(n_b), np.zeros(n_b))
    cs: list = [one] * nb
    for s, g in enumerate(groups.free):
        form = Affine.from_interval(psi[:, s], np.full(n_b, s), k)
        cs[groups.first[g]] = affine_cos_sin(form)
    axes = world_axes(chain, cs)
    c = np.zeros((n_b, nb, nb))
    gen = np.zeros((n_b, nb, nb, k))
    rem = np.zeros((n_b, nb, nb))
    for j in range(nb):
        for l in range(j, nb):
            dot_c, dot_g, dot_r = _affine_dot(axes[j], axes[l], n_b, k)
            for (a, b) in ((j, l), (l, j)):
                c[:, a, b] = wmat[j, l] * dot_c
                gen[:, a, b] = wmat[j, l] * dot_g
                # scaling by W_jl rounds each of c, g, r once
                rem[:, a, b] = wmat[j, l] * dot_r + 4 * _EPS * wmat[j, l] * (
                    np.abs(dot_c) + np.abs(dot_g).sum(-1) + dot_r)
    idx = np.arange(nb)
    c[:, idx, idx] += armature
    rem[:, idx, idx] += 4 * _EPS * np.abs(c[:, idx, idx])
    return MassMatrixEnclosure(c, gen, rem)


def _affine_dot(u: tuple, v: tuple, n_b: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """u·v of two 3-vectors (entries Affine or float) as its (c (n_b,), g (n_b, k), r (n_b,))."""
    total = Affine(np.zeros(n_b), np.zeros((n_b, k)), np.zeros(n_b))
    for x, y in zip(u, v):
        x = x if isinstance(x, Affine) else Affine(np.broadcast_to(np.asarray(x, float), (n_b,)),
                                                   None, np.zeros(n_b))
        total = total + x * y
    g = np.zeros((n_b, k)) if total.g is None else np.broadcast_to(total.g, (n_b, k))
    return np.broadcast_to(total.c, (n_b,)), g, np.broadcast_to(total.r, (n_b,))


# -- branch and bound ---------------------------------------------------------------------------
@dataclass
class _BnB:
    bound: float          # sound bound over the whole region (min of the leaves' lower bounds)
    attained: float       # the best value seen at a box centre (bound ≤ true extremum ≤ this)
    at: np.ndarray        # centre of the box with the worst leaf bound
    boxes: int            # boxes evaluated
    converged: bool


def _branch_and_bound(evaluate: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]],
                      lo: np.ndarray, hi: np.ndarray, *, rel_tol: float, max_boxes: int,
                      batch: int = 32) -> _BnB:
    """Minimise over the box [lo, hi]: ``evaluate(lo, hi)`` (B, d) → (sound lower bound over
    each box, the function's value at each box's centre). Best-first: the boxes with the lowest
    bounds are bisected along their widest side until the lowest leaf bound is within
    ``rel_tol`` of the best centre value (or ``max_boxes`` boxes were evaluated). The result's
    ``bound`` is the minimum over the leaves, so it is sound whatever stopped the search."""
    lo, hi = np.atleast_2d(lo).astype(float), np.atleast_2d(hi).astype(float)
    bounds, values = evaluate(lo, hi)
    best = float(values.min())
    boxes = lo.shape[0]
    while True:
        worst = float(bounds.min())
        if worst >= best - rel_tol * abs(best) or boxes >= max_boxes:
            break
        order = np.argsort(bounds)[:batch]
        keep = np.setdiff1d(np.arange(bounds.size), order)
        plo, phi = lo[order], hi[order]
        dim = np.argmax(phi - plo, axis=1)
        rows = np.arange(order.size)
        mid = 0.5 * (plo[rows, dim] + phi[rows, dim])
        lo_a, hi_a = plo.copy(), phi.copy()
        hi_a[rows, dim] = mid
        lo_b, hi_b = plo.copy(), phi.copy()
        lo_b[rows, dim] = mid
        clo, chi = np.vstack([lo_a, lo_b]), np.vstack([hi_a, hi_b])
        cb, cv = evaluate(clo, chi)
        boxes += clo.shape[0]
        best = min(best, float(cv.min()))
        lo, hi = np.vstack([lo[keep], clo]), np.vstack([hi[keep], chi])
        bounds = np.concatenate([bounds[keep], cb])
    k = int(np.argmin(bounds))
    return _BnB(float(bounds[k]), best, 0.5 * (lo[k] + hi[k]), boxes,
                bool(bounds[k] >= best - rel_tol * abs(best)))


def _workspace(robot: Robot) -> tuple[np.ndarray, np.ndarray]:
    """Joint limits with continuous joints as ±π (per actuated joint)."""
    lo = np.where(np.isfinite(robot.limits.q_lower), robot.limits.q_lower, -np.pi)
    hi = np.where(np.isfinite(robot.limits.q_upper), robot.limits.q_upper, np.pi)
    return lo, hi


def _lambda_min_rotational(robot: Robot, chain: SerialChain, low: LowerMassModel, *,
                           rel_tol: float, max_boxes: int) -> tuple[_BnB, np.ndarray]:
    """Sound lower bound of λ_min(diag(I_a,lo) + A(q)) over the workspace (module doc);
    returns the search and the joint configuration of its worst box (group angle on the
    group's first joint, 0 on the others)."""
    groups = _angle_groups(chain)
    wmat = _rotational_weights(chain, low.scales * low.mu)
    qlo, qhi = _workspace(robot)
    glo = np.array([sum(qlo[j] for j in groups.members[g]) for g in groups.free])
    ghi = np.array([sum(qhi[j] for j in groups.members[g]) for g in groups.free])
    # cos/sin are 2π-periodic: a group's range wider than a turn is one full turn
    wide = ghi - glo >= 2.0 * np.pi
    glo, ghi = np.where(wide, -np.pi, glo), np.where(wide, np.pi, ghi)
    floor = float(low.armature.min()) * (1.0 - 4 * _EPS)

    def evaluate(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        enc = _rotational_enclosure(chain, groups, lo, hi, wmat, low.armature)
        # A is a Gram form with non-negative weights, A ⪰ 0 exactly: the armature alone is a
        # floor; the affine centre is the form's value at the box centre (mid-angles)
        bound = np.maximum(enc.lambda_min_lower(), floor)
        return bound, np.linalg.eigvalsh(enc.centre)[:, 0]

    if groups.free:
        res = _branch_and_bound(evaluate, glo, ghi, rel_tol=rel_tol, max_boxes=max_boxes)
    else:                          # no free angle: A is constant
        bound, value = evaluate(np.zeros((1, 0)), np.zeros((1, 0)))
        res = _BnB(float(bound[0]), float(value[0]), np.zeros(0), 1, True)
    q = robot.neutral().copy()
    qa = np.zeros(robot.nj)
    for s, g in enumerate(groups.free):
        qa[groups.first[g]] = res.at[s]
    q[robot.q_index] = qa
    return res, q


def _lambda_max_geometric(robot: Robot, chain: SerialChain,
                          theta_e_box: tuple[np.ndarray, np.ndarray]) -> float:
    """A sound but coarse upper bound of λ_max(M) over the workspace (module doc):
    λ_max ≤ max_i (I_a,i + H_ii + Σ_{j≠i} √(H_ii H_jj)) (Gershgorin with |H_ij| ≤ √(H_ii H_jj),
    H ⪰ 0), and H_ii ≤ Σ_{b distal to i} S_iᵀ I_b S_i bounded with q-independent geometry:
    the joint's unit twist seen by body b has angular part of norm 1 and linear part of norm
    ≤ d_ib, the length of the chain of joint offsets from joint i to body b's frame."""
    theta_t = _upper_theta(robot)
    ee = robot.ee_joint_id - 1
    e_lo, e_hi = theta_e_box
    nb = chain.nb
    h_max = np.zeros(nb)
    for i in range(nb):
        for b in range(nb):
            j, dist = b, 0.0
            while j > i:                 # walk from body b up to joint i
                dist += float(np.linalg.norm(chain.place_pos[j]))
                j = chain.parent[j]
            if j != i:
                continue                 # body b is not distal to joint i
            if b == ee:
                m = e_hi[0]
                h = np.maximum(np.abs(e_lo[1:4]), np.abs(e_hi[1:4]))
                i_o = Interval.from_bounds(spatial_inertia(e_lo)[3:, 3:],
                                           spatial_inertia(e_hi)[3:, 3:])
                rot = float(np.linalg.norm(np.abs(i_o.mid) + i_o.rad, 2))
            else:
                th = theta_t[10 * b:10 * b + 10]
                m, h = th[0], np.abs(th[1:4])
                rot = float(np.linalg.eigvalsh(spatial_inertia(th)[3:, 3:])[-1])
            # Sᵀ I S = m‖v‖² + 2 ωᵀ(h × v) + ωᵀ Ī_o ω with ‖ω‖ = 1, ‖v‖ ≤ dist
            h_max[i] += m * dist ** 2 + 2.0 * float(np.linalg.norm(h)) * dist + rot
    h_max *= 1.0 + 1e-9
    root = np.sqrt(h_max)
    ia = robot.friction.upper[:, 2]
    return float(np.max(ia + h_max + root * (root.sum() - root)))


# -- results, cache -----------------------------------------------------------------------------
@dataclass(frozen=True)
class MassMatrixBounds:
    """Sound bounds of the eigenvalues of H(q) + diag(I_a) over the workspace and the parameter
    boxes (module doc), with what the searches found.

    lambda_min / lambda_max: the bounds (kg·m²); lambda_min_attained: the smallest value of the
    bounding form found at a box centre (bound ≤ its minimum ≤ attained: the gap is the search's
    slack; the true λ_min of M is above both); q_at_min: a configuration of the worst box;
    boxes: boxes evaluated; seconds: wall time of the computation (a cached result keeps the
    original time); scales: the lower model's s_b; converged: the search closed its gap to
    ``rel_tol`` (else the budget stopped it: still sound, looser)."""

    lambda_min: float
    lambda_max: float
    lambda_min_attained: float
    q_at_min: np.ndarray
    boxes: int
    seconds: float
    scales: np.ndarray
    converged: bool


@dataclass(frozen=True)
class TrackingErrorBound:
    """ρ bounds ‖r‖; per joint |e| ≤ e_max = ρ/K_r and |ė| ≤ de_max = 2ρ (see module doc)."""

    rho: float
    e_max: np.ndarray
    de_max: np.ndarray
    lambda_min: float
    lambda_max: float


def _cache_dir() -> Path:
    root = os.environ.get("SYSID_ROS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
        "sysid_ros")
    return Path(root) / "mass_bounds"


def _key(robot: Robot, theta_e_box: tuple[np.ndarray, np.ndarray] | None, settings: dict) -> str:
    chain = SerialChain.from_robot(robot)
    parts = {
        "version": _VERSION, "name": robot.name, "theta": robot.theta().tolist(),
        "friction_lo": robot.friction.lower.tolist(), "friction_hi": robot.friction.upper.tolist(),
        "q_lo": robot.limits.q_lower.tolist(), "q_hi": robot.limits.q_upper.tolist(),
        "rel": robot.links_rel_uncertainty, "ee_rel": _ee_rel(robot),
        "theta_r_box": None if robot.theta_r_box is None else
        [np.asarray(b).tolist() for b in robot.theta_r_box],
        "rot": chain.place_rot.tolist(), "pos": chain.place_pos.tolist(),
        "axis": chain.axis.tolist(), "parent": list(chain.parent),
        "box": None if theta_e_box is None else [np.asarray(b).tolist() for b in theta_e_box],
        "settings": settings,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def _to_json(b: MassMatrixBounds) -> str:
    d = asdict(b)
    for k, v in d.items():
        if isinstance(v, np.ndarray):
            d[k] = v.tolist()
    return json.dumps(d)


def _from_json(text: str) -> MassMatrixBounds:
    d = json.loads(text)
    for k in ("q_at_min", "scales"):
        d[k] = np.asarray(d[k], float)
    return MassMatrixBounds(**d)


# (hash) -> bounds: computed once per process
_MEMO: dict[str, MassMatrixBounds] = {}


def mass_matrix_eigen_bounds(robot: Robot, theta_e: ParameterBox | None = None, *,
                             rel_tol: float = 0.02, max_boxes: int = 4000,
                             cache: bool = True) -> MassMatrixBounds:
    """Sound λ_min / λ_max bounds of H(q) + diag(I_a) over the workspace (module doc).

    ``theta_e`` (a θ_e box, names ``PARAM_NAMES``) only affects λ_max (λ_min covers every
    payload); default: the unloaded EE body's box. ``rel_tol``: the λ_min search stops when its bound is within
    this fraction of the best value found; ``max_boxes``: its budget (the bound stays sound
    when the budget stops the search, only looser).
    ``cache``: reuse a result computed with the same facts and settings (memory, then disk).
    """
    if not 0.0 < rel_tol < 1.0:
        raise ControllerConfigError(f"rel_tol must be in (0, 1), got {rel_tol}")
    # (lower, upper): the form the cache key (unchanged: cached results stay valid) and λ_max read
    theta_e_box: tuple[np.ndarray, np.ndarray] | None = None
    if theta_e is not None:
        if theta_e.names != PARAM_NAMES:
            raise BoundsError(f"theta_e box: parameters {list(theta_e.names)} != "
                              f"{list(PARAM_NAMES)}")
        theta_e_box = (theta_e.lower, theta_e.upper)
    settings = {"rel_tol": rel_tol, "max_boxes": max_boxes}
    key = _key(robot, theta_e_box, settings)
    if cache and key in _MEMO:
        return _MEMO[key]
    path = _cache_dir() / f"{key}.json"
    if cache and path.is_file():
        try:
            _MEMO[key] = _from_json(path.read_text())
            return _MEMO[key]
        except (ValueError, KeyError, TypeError):
            pass                  # a damaged cache file is recomputed and overwritten
    start = time.perf_counter()
    chain = SerialChain.from_robot(robot)
    low = lower_mass_model(robot)
    res_min, q_min = _lambda_min_rotational(robot, chain, low, rel_tol=rel_tol,
                                            max_boxes=max_boxes)
    if res_min.bound <= 0.0:
        raise BoundsError(f"{robot.name}: no positive lower bound of the mass matrix's "
                          f"eigenvalues ({res_min.bound:.3g}): a Lyapunov tracking bound needs "
                          "one (bodies with no certified inertia, no armature?)")
    if theta_e_box is None:
        _, lo_b, hi_b = _theta_boxes(robot, _ee_rel(robot))
        theta_e_box = (lo_b[robot.ee_columns], hi_b[robot.ee_columns])
    out = MassMatrixBounds(res_min.bound, _lambda_max_geometric(robot, chain, theta_e_box),
                           res_min.attained, q_min, res_min.boxes,
                           time.perf_counter() - start, low.scales, res_min.converged)
    _MEMO[key] = out
    if cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(_to_json(out))
            tmp.replace(path)           # atomic: concurrent processes never read half a file
        except OSError:
            pass                        # a read-only home: keep the in-memory result
    return out


def mass_matrix_extremes(robot: Robot, q: np.ndarray, theta: np.ndarray | None = None,
                         armature: np.ndarray | None = None) -> tuple[float, float]:
    """Exact eigenvalue extremes of H(q; θ) + diag(I_a) at the samples q (N, nq) with
    Pinocchio's CRBA (default: the nominal θ and I_a) — an independent reference for tests."""
    model = robot.model.copy()
    if theta is not None:
        for i in range(1, model.njoints):
            model.inertias[i] = pin.Inertia.FromDynamicParameters(theta[10 * (i - 1):10 * i])
    data = model.createData()
    ia = np.zeros(robot.nv)
    ia[robot.v_index] = robot.friction.nominal[:, 2] if armature is None else armature
    lo, hi = np.inf, -np.inf
    for qk in np.atleast_2d(q):
        h = pin.crba(model, data, qk)
        h = np.triu(h) + np.triu(h, 1).T
        ev = np.linalg.eigvalsh(h + np.diag(ia))
        lo, hi = min(lo, ev[0]), max(hi, ev[-1])
    return float(lo), float(hi)


def tracking_error_bound(robot: Robot, Kr: float | np.ndarray, V_max: float, *,
                         eigen_bounds: MassMatrixBounds | None = None) -> TrackingErrorBound:
    """ρ = √(2·V_max/λ_min), e_max = ρ/K_r, de_max = 2ρ per joint with the sound workspace
    λ_min (``mass_matrix_eigen_bounds``, cached); pass ``eigen_bounds`` to reuse a result."""
    kr = np.broadcast_to(np.asarray(Kr, float), (robot.nj,)).copy()
    if np.any(~np.isfinite(kr)) or np.any(kr <= 0):
        raise ControllerConfigError(f"Kr must be positive and finite, got {Kr}")
    if not np.isfinite(V_max) or V_max <= 0:
        raise ControllerConfigError(f"V_max must be positive and finite, got {V_max}")
    eb = eigen_bounds or mass_matrix_eigen_bounds(robot)
    rho = float(np.sqrt(2.0 * V_max / eb.lambda_min))
    return TrackingErrorBound(rho, rho / kr, np.full(robot.nj, 2.0 * rho), eb.lambda_min,
                              eb.lambda_max)
