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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from sysid_ros._src.identification.errors import IdentificationConfigError
from sysid_ros._src.model.friction_terms import FrictionTerms
from sysid_ros._src.model.parameters import PARAM_NAMES
from sysid_ros._src.model.robots import FRICTION_NAMES, Robot

__all__ = ["CalibrationConstraints", "column_names", "FORMAT"]

FORMAT = "sysid_calibration_rows/1"


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
    """The calibration's rows with the noise bound they were measured with.

    Attributes:
        robot: robot name the rows belong to.
        columns: names of the columns of ``A`` (:func:`column_names` of that robot).
        A: (n, n_cols) CSR, the Coulomb column at the centre s of ∫σ.
        sign_rad: (n,) s_r, radius of ∫σ.
        c: (n,) ∫τ̂ dt (N·m·s).
        r_fixed: (n,) quadrature and relative-noise allowance (N·m·s).
        t_noise: (n,) T' (s): the row's noise radius is δ_j·T'.
        joint: (n,) joint index.
        noise: (nj,) δ (N·m): the window-averaged error bound the calibration wrote.
        ee_lower, ee_upper: (10,) the end-effector body's box during calibration.
        info: provenance (windows, bags, assumptions), JSON-ready.
    """

    robot: str
    columns: tuple[str, ...]
    A: sp.csr_matrix
    sign_rad: np.ndarray
    c: np.ndarray
    r_fixed: np.ndarray
    t_noise: np.ndarray
    joint: np.ndarray
    noise: np.ndarray
    ee_lower: np.ndarray
    ee_upper: np.ndarray
    info: dict[str, Any]

    def __len__(self) -> int:
        return int(self.c.shape[0])

    def radius(self) -> np.ndarray:
        """Row radius at the written noise bound, without the Coulomb part (N·m·s)."""
        return self.r_fixed + self.noise[self.joint] * self.t_noise

    def save(self, path: str | Path) -> None:
        A = self.A.tocsr()
        np.savez_compressed(
            Path(path), format=np.array(FORMAT), robot=np.array(self.robot),
            columns=np.array(self.columns), A_data=A.data, A_indices=A.indices,
            A_indptr=A.indptr, A_shape=np.array(A.shape), sign_rad=self.sign_rad, c=self.c,
            r_fixed=self.r_fixed, t_noise=self.t_noise, joint=self.joint, noise=self.noise,
            ee_lower=self.ee_lower, ee_upper=self.ee_upper, info=np.array(json.dumps(self.info)))

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
            raise fail(f"format is not {FORMAT} (is this a sysid-calibrate --export-rows file?)")
        try:
            A = sp.csr_matrix((d["A_data"], d["A_indices"], d["A_indptr"]),
                              shape=tuple(int(x) for x in d["A_shape"]))
            out = cls(str(d["robot"]), tuple(str(s) for s in d["columns"]), A,
                      d["sign_rad"].astype(float), d["c"].astype(float),
                      d["r_fixed"].astype(float), d["t_noise"].astype(float),
                      d["joint"].astype(int), d["noise"].astype(float),
                      d["ee_lower"].astype(float), d["ee_upper"].astype(float),
                      json.loads(str(d["info"])))
        except (KeyError, ValueError, TypeError) as exc:
            raise fail(f"malformed ({exc})") from exc
        n = len(out)
        arrays = (out.sign_rad, out.r_fixed, out.t_noise, out.joint)
        if A.shape != (n, len(out.columns)) or any(a.shape != (n,) for a in arrays) \
                or out.ee_lower.shape != (10,) or out.ee_upper.shape != (10,) \
                or not all(np.all(np.isfinite(a)) for a in (out.c, *arrays, A.data, out.noise)):
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
        if self.noise.shape != (robot.nj,) or np.any(self.noise < 0) \
                or (len(self) and (self.joint.min() < 0 or self.joint.max() >= robot.nj)):
            raise fail(f"noise bound / joint indices do not fit {robot.nj} joints")

    def subsample(self, max_rows: int) -> CalibrationConstraints:
        """At most ``max_rows`` rows, evenly spread (0: all). Any subset of true constraints is
        still sound, only looser: what bounds the online LP's cost."""
        if max_rows <= 0 or len(self) <= max_rows:
            return self
        keep = np.unique(np.linspace(0, len(self) - 1, max_rows).round().astype(int))
        return CalibrationConstraints(
            self.robot, self.columns, self.A[keep], self.sign_rad[keep], self.c[keep],
            self.r_fixed[keep], self.t_noise[keep], self.joint[keep], self.noise,
            self.ee_lower, self.ee_upper, self.info)
