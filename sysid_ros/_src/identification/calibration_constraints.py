"""Calibration rows as constraints of the payload LP (docs/guide/calibrate.md#limits-and-open-questions).

A calibration (:mod:`sysid_ros._src.calibration`) measures the robot from recordings without payload:
its momentum rows say, per window w and joint j,

    |W·θ + Fc_j·S + Fv_j·Δq + Ia_j·Δq̇ + β_j·T − ∫τ̂ dt| ≤ r_fixed + δ_j·T',   S ∈ [s ± s_r],

with θ *every* body's parameters. The calibration file keeps only their projection onto boxes
(a friction box per coefficient, a θ_r box per parameter), which forgets what the rows pin down
far better: base-parameter *combinations* of the links, and each gravity-loaded joint's offset
β jointly with the link gravity. Passed to the identifier, the same rows become extra
constraints on the shared unknowns of the payload LP — δθ_r (``theta_r_unknowns``) and the
friction unknowns φ — next to the payload rows:

- θ of the links = θ_r^c + δθ_r (the identifier's own θ_r unknowns; an entry whose box has no
  width is the constant θ_r^c);
- θ of the end-effector body *during calibration* is its own 10 unknowns, bounded by the
  calibration's prior of that body (the unloaded body ± ``links_rel``, plus any stated payload):
  it is not θ_e (the payload was not there), so calibration rows carry no θ_e column;
- φ = the identifier's friction unknowns (a coefficient whose box has no width is its centre);
- Fc·S: Fc ≥ 0 and Fc ≤ Fc_max (the identifier's box), so Fc·S = Fc·s ± Fc_max·s_r, the same
  treatment as the payload rows (:mod:`.problem`).

Sound under the stated assumptions: the true θ_r, φ and calibration-time EE body satisfy every
calibration row whenever the calibration's noise bound δ held on its recordings (calibration
assumption 2, measured, docs/guide/calibrate.md#assumptions-the-bounds-rest-on), and the robot is
the same — the same links, the
same friction and the same torque offsets β in both recordings (a re-zeroed torque sensor or a
different robot violates this; the LP then usually turns empty: ``inconsistent``). Adding true
constraints never removes the truth from Θ. Rows are kept as they are (no compaction): an outer
parallelotope in the rows' principal directions (support function, 2 LPs per direction) lost
most of the gain on the Gen3 (0.50 kg with the rows, 0.75 kg with 88 or 119 directions, 0.87 kg
without), because the payload rows read (θ_r, φ) through configuration-dependent combinations no
small set of directions bounds tightly.

File: ``.npz`` (numpy, no pickle) written by ``sysid-calibrate --export-rows``; columns are
named (``m[joint_1]`` …, ``Fc[joint_1]`` …), so the file is checked against the robot it is
applied to.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from sysid_ros._src.identification.errors import IdentificationConfigError
from sysid_ros._src.model.friction_terms import FrictionTerms
from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.robots import FRICTION_NAMES, Robot

__all__ = ["CalibrationConstraints", "CalibrationRows", "column_names", "friction_column",
           "FORMAT"]

FORMAT = "sysid_calibration_rows/2"


def friction_column(n_theta: int, joint: int | np.ndarray, k: int | np.ndarray) -> np.ndarray:
    """Column of coefficient k (0 Fc, 1 Fv, 2 Ia, 3 β) of ``joint`` in x = [θ | φ]."""
    return n_theta + 4 * np.asarray(joint) + np.asarray(k)


@dataclass(frozen=True)
class CalibrationRows:
    """One pair of one-sided constraints per (window, joint): the one container of calibration
    rows, from the calibration's solves to the identifier's LP (built and derived in
    :mod:`sysid_ros._src.calibration.rows`).

    Attributes:
        A: (n, n_x) CSR, the row with the Coulomb coefficient at its centre s.
        sign_rad: (n,) s_r, the radius of ∫σ (the Fc column is s ∓ s_r in the two sides).
        c: (n,) ∫τ̂ dt (N·m·s).
        r_fixed: (n,) quadrature and relative-noise allowance (N·m·s).
        t_noise: (n,) T' (s): the row's radius grows by δ_j·T'.
        joint: (n,) joint index; ``t_start``/``t_end`` (n,) window span (s); ``start``/``end``
            (n,) its first/last sample index in its recording; ``source`` (n,) index of the
            recording the row came from.
        n_theta: number of body-parameter columns (the friction columns follow).
        r_timing: (n,) what the compensated torque lag's radius moves ∫τ by,
            radius_j·|τ̂_end − τ̂_start| (N·m·s; zero without a lag). Not in ``r_fixed``: the
            noise bound is measured without it (so it covers the timing error too), and
            :meth:`with_timing` adds it for the boxes, which a lag off by its radius biases.
        r_quad: (n,) the share of ``r_fixed`` that is the torque's quadrature allowance
            (``quadrature_safety`` × |Simpson − trapezoid| of ∫τ̂): what absorbs a torque
            transient, reported with it (:mod:`sysid_ros._src.identification.transients`).
        known: (n,) the known payload's share W_e·θ_p subtracted from ∫τ̂ in ``c`` (N·m·s;
            0 for a recording without one).
        speed_abs: (n,) ∫|q̇| dt of the row's joint over its window (rad).
    """

    A: sp.csr_matrix
    sign_rad: np.ndarray
    c: np.ndarray
    r_fixed: np.ndarray
    t_noise: np.ndarray
    joint: np.ndarray
    t_start: np.ndarray
    t_end: np.ndarray
    start: np.ndarray
    end: np.ndarray
    source: np.ndarray
    n_theta: int
    r_timing: np.ndarray
    r_quad: np.ndarray
    known: np.ndarray
    speed_abs: np.ndarray

    def __len__(self) -> int:
        return int(self.c.shape[0])

    @property
    def n_x(self) -> int:
        return int(self.A.shape[1])

    def with_timing(self) -> CalibrationRows:
        """The rows with the torque lag's radius in their allowance: what the boxes of the
        parameters rest on (a lag off by up to its radius biases every row by up to r_timing)."""
        return replace(self, r_fixed=self.r_fixed + self.r_timing,
                       r_timing=np.zeros_like(self.r_timing))

    def mean_speed(self) -> np.ndarray:
        """(n,) ∫|q̇| dt/T of each row's joint over its window (rad/s)."""
        return self.speed_abs / (self.t_end - self.t_start)

    def with_noise_speed(self, kappa: np.ndarray) -> CalibrationRows:
        """The rows with a speed-dependent noise radius: T' times (1 + κ_j·v_w), so that a
        bound δ_j on the noise term means δ_j + δ_j·κ_j·v_w at the window's mean |speed| v_w
        (κ = 0: the rows themselves)."""
        kappa = np.asarray(kappa, float)
        if not np.any(kappa):
            return self
        return replace(self, t_noise=self.t_noise * (1.0 + kappa[self.joint] * self.mean_speed()))

    def sides(self) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        """(A_up, A_lo): the Fc column at s − s_r and at s + s_r
        (:mod:`sysid_ros._src.calibration.rows`)."""
        n = len(self)
        fc_col = friction_column(self.n_theta, self.joint, 0)
        shift = sp.csr_matrix((self.sign_rad, (np.arange(n), fc_col)), shape=self.A.shape)
        return (self.A - shift).tocsr(), (self.A + shift).tocsr()

    def take(self, index: np.ndarray | slice) -> CalibrationRows:
        """Rows selected by an index array or boolean mask."""
        index = np.arange(len(self))[index]
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in out.items():
            if name != "n_theta":
                out[name] = value[index]
        return CalibrationRows(**out)

    @staticmethod
    def concat(parts: list[CalibrationRows]) -> CalibrationRows:
        parts = [p for p in parts if len(p)]
        if not parts:
            raise ValueError("CalibrationRows.concat: no rows")
        out = {}
        for f in fields(CalibrationRows):
            vals = [getattr(p, f.name) for p in parts]
            if f.name == "A":
                out[f.name] = sp.vstack(vals).tocsr()
            elif f.name == "n_theta":
                out[f.name] = vals[0]
            else:
                out[f.name] = np.concatenate(vals)
        return CalibrationRows(**out)

    def signed_residual(self, x: np.ndarray) -> np.ndarray:
        """A·x − c at x with the Coulomb interval used in x's favour (N·m·s): 0 where the
        interval of A·x − c contains 0, else its endpoint nearest to 0."""
        base = self.A @ x - self.c
        fc = x[friction_column(self.n_theta, self.joint, 0)]
        lo = base - fc * self.sign_rad
        hi = base + fc * self.sign_rad
        return np.where(lo > 0, lo, np.where(hi < 0, hi, 0.0))

    def residual(self, x: np.ndarray) -> np.ndarray:
        """Excess of each row beyond its allowance r_fixed at x (N·m·s; ≤ 0 inside): what the
        noise term δ_j·T' must cover for x to satisfy the row."""
        return np.abs(self.signed_residual(x)) - self.r_fixed


def column_names(robot: Robot, terms: FrictionTerms | None = None) -> list[str]:
    """Names of x = [θ of every body (Pinocchio order) | φ (per joint [Fc, Fv, Ia, β]) | ψ (per
    joint the extra terms' coefficients, when ``terms``)]: the calibration's column layout
    (:mod:`sysid_ros._src.calibration.rows`)."""
    bodies = [robot.model.names[i] for i in range(1, robot.model.njoints)]
    extra = () if terms is None else terms.columns
    return ([f"{p}[{b}]" for b in bodies for p in PARAM_NAMES]
            + [f"{k}[{j}]" for j in robot.joint_names for k in FRICTION_NAMES]
            + [f"{k}[{j}]" for j in robot.joint_names for k in extra])


@dataclass(frozen=True)
class CalibrationConstraints:
    """The calibration's rows as the identifier uses them: the rows in the model's columns
    [θ | φ | ψ] with the noise bound they were measured with, and what checks they belong to
    the robot they are applied to.

    Attributes:
        robot: robot name the rows belong to.
        columns: names of the columns of ``rows.A`` (:func:`column_names` of that robot).
        rows: the rows (``c``, ``r_fixed``, ``t_noise`` on the torque reading as recorded).
        noise: (nj,) δ (N·m): the window-averaged error bound the calibration wrote.
        ee_lower, ee_upper: (10,) the end-effector body's box during calibration.
        info: provenance (windows, bags, assumptions), JSON-ready.
    """

    robot: str
    columns: tuple[str, ...]
    rows: CalibrationRows
    noise: np.ndarray
    ee_lower: np.ndarray
    ee_upper: np.ndarray
    info: dict[str, Any]

    def __len__(self) -> int:
        return len(self.rows)

    def radius(self) -> np.ndarray:
        """Row radius at the written noise bound, without the Coulomb part (N·m·s)."""
        return self.rows.r_fixed + self.noise[self.rows.joint] * self.rows.t_noise

    def save(self, path: str | Path) -> None:
        A = self.rows.A.tocsr()
        arrays = {f"row_{f.name}": getattr(self.rows, f.name) for f in fields(CalibrationRows)
                  if f.name not in ("A", "n_theta")}
        np.savez_compressed(
            Path(path), format=np.array(FORMAT), robot=np.array(self.robot),
            columns=np.array(self.columns), A_data=A.data, A_indices=A.indices,
            A_indptr=A.indptr, A_shape=np.array(A.shape), n_theta=np.array(self.rows.n_theta),
            noise=self.noise, ee_lower=self.ee_lower, ee_upper=self.ee_upper,
            info=np.array(json.dumps(self.info)), **arrays)

    @classmethod
    def load(cls, path: str | Path, robot: Robot | None = None,
             terms: FrictionTerms | None = None) -> CalibrationConstraints:
        """Read a file written by :meth:`save`; with ``robot``, check it belongs to it.
        Raises IdentificationConfigError naming the file and what is wrong."""
        path = Path(path)

        def fail(why: str) -> IdentificationConfigError:
            return IdentificationConfigError(f"identification.calibration_rows: {path}: {why}")

        try:
            with np.load(path, allow_pickle=False) as z:
                d = {k: z[k] for k in z.files}
        except (OSError, ValueError) as exc:
            raise fail(f"not a readable .npz ({exc})") from exc
        if str(d.get("format", "")) != FORMAT:
            raise fail(f"format is not {FORMAT} (is this a sysid-calibrate --export-rows file "
                       "of this version? export the rows again)")
        try:
            out = cls(str(d["robot"]), tuple(str(s) for s in d["columns"]), _rows_of(d),
                      d["noise"].astype(float), d["ee_lower"].astype(float),
                      d["ee_upper"].astype(float), json.loads(str(d["info"])))
        except (KeyError, ValueError, TypeError) as exc:
            raise fail(f"malformed ({exc})") from exc
        rows, n = out.rows, len(out)
        arrays = [getattr(rows, f.name) for f in fields(CalibrationRows)
                  if f.name not in ("A", "n_theta")]
        if rows.A.shape != (n, len(out.columns)) or any(a.shape != (n,) for a in arrays) \
                or out.ee_lower.shape != (10,) or out.ee_upper.shape != (10,) \
                or not all(np.all(np.isfinite(a)) for a in (*arrays, rows.A.data, out.noise)):
            raise fail("inconsistent array shapes or non-finite values")
        if robot is not None:
            out.check(robot, fail, terms)
        return out

    def check(self, robot: Robot, fail: Any = None, terms: FrictionTerms | None = None) -> None:
        """Raise unless the rows belong to ``robot`` with the extra friction ``terms`` (name,
        column layout, joint count)."""
        fail = fail or (lambda why: IdentificationConfigError(
            f"identification.calibration_rows: {why}"))
        if self.robot != robot.name:
            raise fail(f"made for robot {self.robot!r}, applied to {robot.name!r}")
        if list(self.columns) != column_names(robot, terms):
            raise fail(f"column layout differs from {robot.name}'s with extra friction terms "
                       f"{list(terms.names) if terms else []} (bodies/joints renamed, or rows "
                       "of another calibration?)")
        joint = self.rows.joint
        if self.noise.shape != (robot.nj,) or np.any(self.noise < 0) \
                or (len(self) and (joint.min() < 0 or joint.max() >= robot.nj)):
            raise fail(f"noise bound / joint indices do not fit {robot.nj} joints")

    def subsample(self, max_rows: int) -> CalibrationConstraints:
        """At most ``max_rows`` rows, evenly spread (0: all). Any subset of true constraints is
        still sound, only looser: what bounds the online LP's cost."""
        if max_rows <= 0 or len(self) <= max_rows:
            return self
        keep = np.unique(np.linspace(0, len(self) - 1, max_rows).round().astype(int))
        return replace(self, rows=self.rows.take(keep))


def _rows_of(d: dict[str, np.ndarray]) -> CalibrationRows:
    """The rows stored by :meth:`CalibrationConstraints.save`."""
    A = sp.csr_matrix((d["A_data"], d["A_indices"], d["A_indptr"]),
                      shape=tuple(int(x) for x in d["A_shape"]))
    ints = ("joint", "start", "end", "source")
    kw: dict[str, Any] = {f.name: d[f"row_{f.name}"].astype(int if f.name in ints else float)
                          for f in fields(CalibrationRows) if f.name not in ("A", "n_theta")}
    return CalibrationRows(A=A, n_theta=int(d["n_theta"]), **kw)
