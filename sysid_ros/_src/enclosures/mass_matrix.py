"""Sound enclosures of the joint-space mass matrix M(q) = H(q, θ) + diag(I_a) over boxes of q
and θ, and the eigenvalue / inverse-diagonal bounds they give
(docs/theory/controller.md#guarantee-and-the-tracking-error-bound,
docs/theory/planner.md#sound-reachability).

Column j of H is the passivity RNEA of ``chain.passivity_torque`` with q̈_a = e_j, no velocity and
no gravity; run on affine forms (``affine.Affine``) of cos/sin of every joint over a batch of
q-boxes, it gives each entry as

    M_ij(q, θ) ∈ c_ij + Σ_k g_ij,k ε_k ± e_ij,     ε ∈ [−1, 1]^K,   |e_ij| ≤ r_ij,

one noise symbol ε_k per joint whose box has width (the ε are shared by all entries, so the
linear dependence of M on q is kept exactly); the remainder r covers the second-order terms of
the products and of cos/sin (½w²), parameters given as intervals (θ box: |∂M/∂θ|·rad) and
rounding. Symmetry is restored by averaging the (i, j) and (j, i) forms (both enclose the same
true value, so their average does).

Bounds over one box (``MassMatrixEnclosure``): with A(ε) = c + Σ g_k ε_k and any symmetric Δ
with |Δ| ≤ r entrywise, Δ ⪰ −E and Δ ⪯ E for E = diag((r·d)_i / d_i), any d > 0 (D(Δ + E)D is
diagonally dominant with a non-negative diagonal; d = √diag c here), and also for E = ‖r‖₂·I
(Weyl; ‖Δ‖₂ ≤ ‖r‖₂ for |Δ| ≤ r). So every M in the box satisfies

    A(ε) − E ⪯ M ⪯ A(ε) + E   for some ε ∈ [−1, 1]^K.

ε ↦ λ_min(A(ε) − E) is concave (A affine in ε, λ_min concave), so its minimum over the
ε-box is at one of the 2^K vertices — the linear part of M(q) is bounded EXACTLY, only the
second-order remainder is lost (O(w²) for a box of width w). Likewise λ_max is convex, and
ε ↦ (L(ε)⁻¹)_ii is convex where L(ε) = A(ε) − E ≻ 0 (the matrix inverse is operator convex), so
both are maximal at vertices; M ⪰ L ≻ 0 gives (M⁻¹)_ii ≤ (L⁻¹)_ii.

What "sound" rests on: the physical model of ``chain`` (rigid bodies, revolute joints), the
parameter boxes given, and the floating-point assumptions of ``interval.py``; LAPACK's symmetric
eigensolver is backward stable, so each computed eigenvalue is within ``_eig_slack`` (32·n·u·‖A‖_F,
u the unit round-off) of an exact one — subtracted/added; the vertex matrices' own rounding is
added to the remainder. K is at most the number of joints (2^K ≤ 128 vertices for 7 joints).
"""
from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sysid_ros._src.enclosures.affine import Affine, affine_cos_sin
from sysid_ros._src.enclosures.chain import SerialChain, passivity_torque
from sysid_ros._src.enclosures.interval import Interval

__all__ = ["MassMatrixEnclosure", "mass_matrix_columns", "enclose_mass_matrix", "fold_factor",
           "spatial_inertia"]

_EPS = np.finfo(float).eps


def mass_matrix_columns(chain: SerialChain, q: Interval, bodies: Sequence[Sequence | None],
                        n_symbols: int, symbols: Sequence[int | None]) -> list:
    """Rows of H(q, θ) as affine forms: ``rows[i]`` has shape (nb, *batch), entry [j, ...] = H_ij.

    ``q`` is an Interval of shape (*batch, nb) (one box per batch element); joint j gets the
    noise symbol ``symbols[j]`` (None: its radius becomes a remainder, e.g. a zero-width joint);
    ``bodies[i]`` is body i's 10 parameters (floats, Intervals or Affine forms over the same
    ``n_symbols``), None to leave the body out. No armature (add it on the diagonal).
    """
    nb = chain.nb
    batch = q.shape[:-1]
    shape = (nb,) + batch                  # leading axis: the column j of H
    cs = []
    for j in range(nb):
        mid = np.broadcast_to(q.mid[..., j], shape)
        rad = np.broadcast_to(q.rad[..., j], shape)
        x = Interval(mid, rad)
        if symbols[j] is None:
            form = Affine.from_interval(x)
        else:
            form = Affine.from_interval(x, np.full(shape, symbols[j]), n_symbols)
        cs.append(affine_cos_sin(form))
    eye = np.eye(nb)
    unit = [np.broadcast_to(eye[:, j].reshape((nb,) + (1,) * len(batch)), shape)
            for j in range(nb)]
    # zero velocities as exact Python zeros, one list for q̇ and q̇_a: chain's exact-zero rule
    # then drops every velocity term instead of carrying zero arrays through affine products
    # (which only added rounding slack to a zero), and the unpolarised RNEA path applies
    still = [0.0] * nb
    return passivity_torque(chain, cs, still, still, unit, list(bodies), with_gravity=False)


def _as_arrays(rows: list, batch: tuple[int, ...], n_symbols: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Affine rows → centre (*batch, n, n), generators (*batch, n, n, K), remainder."""
    n = len(rows)
    c = np.zeros(batch + (n, n))
    g = np.zeros(batch + (n, n, n_symbols))
    r = np.zeros(batch + (n, n))
    for i, row in enumerate(rows):
        if isinstance(row, (float, int)):        # a row the chain never touches
            continue
        shape = (n,) + batch
        ci = np.broadcast_to(row.c, shape)
        ri = np.broadcast_to(row.r, shape)
        c[..., i, :] = np.moveaxis(ci, 0, -1)
        r[..., i, :] = np.moveaxis(ri, 0, -1)
        if row.g is not None:
            gi = np.broadcast_to(row.g, shape + (n_symbols,))
            g[..., i, :, :] = np.moveaxis(gi, 0, -2)
    return c, g, r


def _sym(a: np.ndarray, axes: tuple[int, int]) -> np.ndarray:
    return 0.5 * (a + np.swapaxes(a, *axes))


def _eig_slack(a: np.ndarray) -> np.ndarray:
    """Backward-error bound of LAPACK's symmetric eigensolver for each matrix in the batch."""
    n = a.shape[-1]
    return 32.0 * n * _EPS * np.linalg.norm(a, axis=(-2, -1)) + np.finfo(float).tiny


@dataclass(frozen=True)
class MassMatrixEnclosure:
    """M over a batch of boxes (module doc): every M in box b equals
    ``centre[b] + Σ_k gen[b, ..., k] ε_k + Δ`` for some ε ∈ [−1, 1]^K and symmetric |Δ| ≤ rem[b]."""

    centre: np.ndarray        # (B, n, n) symmetric
    gen: np.ndarray           # (B, n, n, K) symmetric in the first two matrix axes
    rem: np.ndarray           # (B, n, n) symmetric, ≥ 0

    @property
    def radius(self) -> np.ndarray:
        """Entrywise radius of the interval matrix (generators and remainder together)."""
        return np.abs(self.gen).sum(-1) + self.rem

    def _vertices(self) -> np.ndarray:
        """A at the 2^K vertices of the ε-box: (B, V, n, n)."""
        k = self.gen.shape[-1]
        signs = np.array(list(itertools.product((-1.0, 1.0), repeat=k))) if k else \
            np.zeros((1, 0))
        return self.centre[:, None] + np.einsum("bijk,vk->bvij", self.gen, signs)

    def _rounded_rem(self) -> np.ndarray:
        """``rem`` plus the rounding of c + Σ_k g_k s_k (K additions), entrywise."""
        k = self.gen.shape[-1]
        return self.rem + (k + 4) * _EPS * (np.abs(self.centre) + np.abs(self.gen).sum(-1))

    def relative_lower(self) -> tuple[np.ndarray, np.ndarray]:
        """(V, L): per box a basis V (B, n, n) and lower matrices L (B, 2^K, n, n) with
        VᵀMV ⪰ L[v] for every M of the box at some vertex v of the ε-box — i.e. every M
        satisfies M ⪰ V⁻ᵀ L(ε) V⁻¹ with L(ε) affine in ε and L[v] its vertex values.

        V is the eigenbasis of the centre: there the perturbation Δ̃ = VᵀΔV, |Δ̃| ≤ |V|ᵀ rem |V|,
        is shifted off with the scaling d_k = λ_k^{-1/2} of the diagonal-dominance bound
        (module doc), so a light direction (a wrist with tiny inertia) is charged only the
        perturbation relative to its own eigenvalue, not the heavy joints' absolute remainder.
        V need not be exactly orthogonal: the statement above uses only its invertibility.
        """
        n = self.centre.shape[-1]
        lam0, vec = np.linalg.eigh(self.centre)
        verts = self._vertices()
        vt = np.swapaxes(vec, -1, -2)
        tv = vt[:, None] @ verts @ vec[:, None]                 # Vᵀ A V at every vertex
        av = np.abs(vec)
        avt = np.swapaxes(av, -1, -2)
        # |VᵀΔV| ≤ |V|ᵀ rem |V|, plus the rounding of the two products (n-term sums each)
        rem_t = avt @ (self._rounded_rem() + 4 * n * _EPS * np.abs(verts).max(axis=1)) @ av
        scale = np.sqrt(np.maximum(lam0, 1e-300))          # d_k = 1/scale_k
        shift = np.einsum("bkl,bk,bl->bk", rem_t, scale, 1.0 / scale) * (1.0 + 4 * n * _EPS)
        return vec, tv - _diag(shift)[:, None]

    def _plain_shifts(self) -> list[np.ndarray]:
        """Diagonal E (B, n) with −E ⪯ Δ ⪯ E in the original basis: scaled by √diag(c), and
        Weyl's ‖rem‖₂ (module doc)."""
        n = self.centre.shape[-1]
        rem = self._rounded_rem()
        diag = np.diagonal(self.centre, axis1=-2, axis2=-1)
        d = np.sqrt(np.where(diag > 0, diag, 1.0))
        scaled = np.einsum("bij,bj->bi", rem, d) / d * (1.0 + 4 * n * _EPS)
        weyl = np.linalg.norm(rem, 2, axis=(-2, -1)) * (1.0 + 4 * n * _EPS)
        return [scaled, np.repeat(weyl[:, None], n, axis=1)]

    def lambda_min_lower(self) -> np.ndarray:
        """Lower bound of λ_min(M) over each box (B,)."""
        verts = self._vertices()
        best = np.full(self.centre.shape[0], -np.inf)
        for e in self._plain_shifts():
            low = verts - _diag(e)[:, None]
            lam = np.linalg.eigvalsh(low)[..., 0] - _eig_slack(low)
            best = np.maximum(best, lam.min(axis=1))
        # eigenbasis: M ⪰ V⁻ᵀ L V⁻¹ ⪰ λ_min(L)·(VVᵀ)⁻¹ ⪰ λ_min(L)/‖V‖₂² when λ_min(L) ≥ 0
        vec, low = self.relative_lower()
        lam = (np.linalg.eigvalsh(low)[..., 0] - _eig_slack(low)).min(axis=1)
        vnorm2 = np.linalg.norm(vec, 2, axis=(-2, -1)) ** 2 * (1.0 + 8 * _EPS)
        rel = np.where(lam >= 0, lam / vnorm2, lam * vnorm2)
        return np.maximum(best, rel)

    def lambda_max_upper(self) -> np.ndarray:
        """Upper bound of λ_max(M) over each box (B,)."""
        verts = self._vertices()
        best = np.full(self.centre.shape[0], np.inf)
        for e in self._plain_shifts():
            high = verts + _diag(e)[:, None]
            lam = np.linalg.eigvalsh(high)[..., -1] + _eig_slack(high)
            best = np.minimum(best, lam.max(axis=1))
        return best

    def inverse_diagonal_upper(self) -> np.ndarray:
        """Upper bounds of (M⁻¹)_ii over each box (B, n); +inf where no positive definite lower
        matrix is certified (the box is too wide). From M ⪰ V⁻ᵀ L V⁻¹ ≻ 0 (``relative_lower``):
        M⁻¹ ⪯ V L⁻¹ Vᵀ, convex in ε, so its diagonal is maximal at a vertex."""
        vec, low = self.relative_lower()
        lam, u = np.linalg.eigh(low)
        lam = lam - _eig_slack(low)[..., None]
        ok = np.all(lam > 0, axis=(-1, -2))
        w = vec[:, None] @ u                                     # V·U: L⁻¹ = U Λ⁻¹ Uᵀ
        inv = np.einsum("bvik,bvk->bvi", w * w, 1.0 / np.where(lam > 0, lam, 1.0))
        # the products' rounding and U's orthogonality error (O(n·u)), relative
        inv = inv.max(axis=1) * (1.0 + 64 * low.shape[-1] * _EPS)
        return np.where(ok[:, None], inv, np.inf)


def _diag(e: np.ndarray) -> np.ndarray:
    return np.einsum("bi,ij->bij", e, np.eye(e.shape[-1]))


def fold_factor(chain: SerialChain, joint: int, theta: np.ndarray, half_width: np.ndarray,
                upper: bool) -> np.ndarray:
    """s (or t) per half-width w (B,) with s·I(θ) ⪯ X(δ)ᵀ I(θ) X(δ) (⪯ t·I(θ)) for every
    rotation δ ∈ [−w, w] about ``joint``'s axis — the body's spatial inertia I(θ) re-expressed
    after its own joint turned by δ (module doc of ``enclose_mass_matrix``).

    Principal axes only (u, w the plane of rotation, p the axis): m and h_p, Ī_pp do not move,
    (h_u, h_w) and (Ī_pu, Ī_pw) rotate by δ, the (u, w) block of Ī rotates by 2δ:
    ΔĪ_uu = −ΔĪ_ww = ½(Ī_uu − Ī_ww)(cos 2δ − 1) − Ī_uw sin 2δ, ΔĪ_uw = ½(Ī_uu − Ī_ww) sin 2δ +
    Ī_uw (cos 2δ − 1) — written so, each change is bounded by its own small coefficients (the
    products of cos/sin intervals would lose cos² + sin² = 1). With E ≥ |ΔI| entrywise and
    W = I^{-½}: X I Xᵀ = I + Δ ⪰ (1 − ‖|W| E |W|‖₂)·I. Returns 0 (lower) / inf (upper) when
    I(θ) is not positive definite or the axis is not principal."""
    w = np.asarray(half_width, float)
    p = chain.principal[joint]
    i6 = spatial_inertia(theta)
    lam, vec = np.linalg.eigh(i6)
    if p < 0 or lam[0] <= 32 * 6 * _EPS * abs(lam[-1]):
        return np.full(w.shape, np.inf if upper else 0.0)
    u, v = (p + 1) % 3, (p + 2) % 3
    h = np.asarray(theta[1:4], float)
    ib = spatial_inertia(theta)[3:, 3:]
    c1 = 1.0 - np.cos(np.minimum(w, np.pi))              # |cos δ − 1|
    s1 = np.sin(np.minimum(w, 0.5 * np.pi))              # |sin δ|
    c2 = 1.0 - np.cos(np.minimum(2 * w, np.pi))
    s2 = np.sin(np.minimum(2 * w, 0.5 * np.pi))
    dh = np.zeros(w.shape + (3,))
    dh[..., u] = c1 * abs(h[u]) + s1 * abs(h[v])
    dh[..., v] = s1 * abs(h[u]) + c1 * abs(h[v])
    di = np.zeros(w.shape + (3, 3))
    half = 0.5 * abs(ib[u, u] - ib[v, v])
    di[..., u, u] = di[..., v, v] = half * c2 + abs(ib[u, v]) * s2
    di[..., u, v] = di[..., v, u] = half * s2 + abs(ib[u, v]) * c2
    di[..., p, u] = di[..., u, p] = c1 * abs(ib[p, u]) + s1 * abs(ib[p, v])
    di[..., p, v] = di[..., v, p] = s1 * abs(ib[p, u]) + c1 * abs(ib[p, v])
    e = np.zeros(w.shape + (6, 6))
    hx = np.zeros(w.shape + (3, 3))          # |[Δh]×| entrywise
    hx[..., 0, 1] = hx[..., 1, 0] = dh[..., 2]
    hx[..., 0, 2] = hx[..., 2, 0] = dh[..., 1]
    hx[..., 1, 2] = hx[..., 2, 1] = dh[..., 0]
    e[..., :3, 3:] = hx
    e[..., 3:, :3] = hx
    e[..., 3:, 3:] = di
    e = e * (1.0 + 16 * _EPS) + 4 * _EPS * np.abs(i6)
    wabs = np.abs(vec @ np.diag(lam ** -0.5) @ vec.T)
    rel = np.linalg.norm(wabs @ e @ wabs, 2, axis=(-2, -1)) * (1.0 + 1e-9) + 1e-12
    return 1.0 + rel if upper else np.maximum(1.0 - rel, 0.0)


def spatial_inertia(theta: np.ndarray) -> np.ndarray:
    """Spatial inertia (6×6, [linear; angular], about the body frame origin) of the 10
    parameters [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]; linear in them (Pinocchio's
    ``Inertia.matrix()``)."""
    m, hx, hy, hz, ixx, ixy, iyy, ixz, iyz, izz = (float(x) for x in theta)
    cross = np.array([[0.0, -hz, hy], [hz, 0.0, -hx], [-hy, hx, 0.0]])
    out = np.zeros((6, 6))
    out[:3, :3] = m * np.eye(3)
    out[:3, 3:] = -cross
    out[3:, :3] = cross
    out[3:, 3:] = [[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]
    return out


def enclose_mass_matrix(chain: SerialChain, q_lo: np.ndarray, q_hi: np.ndarray,
                        bodies: Sequence[Sequence | None],
                        armature: np.ndarray | Interval | None = None,
                        fold: str | None = None) -> MassMatrixEnclosure:
    """Enclosure of M(q) = H(q, θ) + diag(armature) for each box [q_lo[b], q_hi[b]] (B, nb).

    ``bodies[i]``: body i's 10 parameters as floats or Intervals (a θ box), None to drop it.
    ``armature``: per joint, float array (nb,) or an Interval; None = 0. Joints whose width is
    zero in every box get no noise symbol (fewer vertices).

    ``fold="lower"`` / ``"upper"``: instead of an enclosure, a one-sided bound M ⪰ (⪯) the
    returned set — the angle of a leaf joint (one with no child: the last joint of an arm)
    moves nothing but its own body's inertia as seen from its parent, and the joint's own axis
    is fixed in both frames; so with the angle at its box's centre and the body's parameters
    scaled by ``fold_factor`` (s ≤ 1 / t ≥ 1 for the box's half-width), M(q) ⪰ (⪯) the matrix
    of the folded model for every q of the box. This removes the leaf joint's width from the
    affine forms, whose second-order remainder for a rotation and its inverse (cos² + sin² = 1
    is lost) would otherwise swamp a light wrist. Float parameters only for folded bodies.
    """
    q_lo, q_hi = np.atleast_2d(np.asarray(q_lo, float)), np.atleast_2d(np.asarray(q_hi, float))
    if fold is not None:
        if fold not in ("lower", "upper"):
            raise ValueError(f"fold must be 'lower', 'upper' or None, got {fold!r}")
        bodies = list(bodies)
        q_lo, q_hi = q_lo.copy(), q_hi.copy()
        for j in range(chain.nb):
            body = bodies[j]
            if j in chain.parent or body is None:
                continue                          # not a leaf, or no body to fold
            w = 0.5 * (q_hi[:, j] - q_lo[:, j])
            if not np.any(w > 0):
                continue
            theta = np.array([float(x) for x in body])
            f = fold_factor(chain, j, theta, w, upper=(fold == "upper"))
            bodies[j] = tuple(f * x for x in theta)
            q_lo[:, j] = q_hi[:, j] = 0.5 * (q_lo[:, j] + q_hi[:, j])
    q = Interval.from_bounds(q_lo, q_hi)
    wide = np.flatnonzero(np.any(q_hi > q_lo, axis=0))
    symbols: list[int | None] = [None] * chain.nb
    for k, jw in enumerate(wide):
        symbols[int(jw)] = k
    rows = mass_matrix_columns(chain, q, bodies, len(wide), symbols)
    c, g, r = _as_arrays(rows, (q_lo.shape[0],), len(wide))
    if armature is not None:
        ia = armature if isinstance(armature, Interval) else Interval(np.asarray(armature, float))
        idx = np.arange(chain.nb)
        c[:, idx, idx] += np.broadcast_to(ia.mid, (chain.nb,))
        r[:, idx, idx] += np.broadcast_to(ia.rad, (chain.nb,)) \
            + 4 * _EPS * np.abs(c[:, idx, idx])
    return MassMatrixEnclosure(_sym(c, (-2, -1)), _sym(g, (-3, -2)),
                               _sym(r, (-2, -1)) + 2 * _EPS * np.abs(c))
