"""Extra friction/actuation terms of the joint law, each linear in its coefficients.

The base law is τ_f = Fc·σ(q̇) + Fv·q̇ + Ia·q̈ + β per joint. A calibration may adopt more terms
(``sysid_ros._src.calibration.terms`` judges them on held-out data); each is a fixed-shape feature
of the joint's own (q, q̇) with one coefficient per joint and feature column:

- ``tanh(dq/v0)`` (v0 = 0.01, 0.05, 0.2 rad/s): a smooth Coulomb shape;
- ``harmonic h`` (h = 1, 2, 3): sin(h·q) and cos(h·q), position-dependent torque (gear ripple,
  cable drag);
- ``dq*|dq|``: quadratic drag.

Shape constants are part of the name, so a term means the same to the calibration that chose it
and to the identifier that rests on its box. Only functions of the state qualify: a slow offset
drift (a function of the time since a recording started) is a property of one recording, not of
the robot, and is judged but never adopted.

:class:`FrictionTerms` holds the adopted terms with a nominal value and a box per joint and
column (calib.yaml ``friction.terms``; absent = no extra terms).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["TermKind", "TERM_KINDS", "FrictionTerms"]

#: f(q_j, q̇_j) per sample of one joint → (N, width).
StateFeature = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class TermKind:
    """One adoptable term: ``columns`` names its feature columns (each has its own coefficient
    per joint), ``feature`` evaluates them, ``meaning`` says what it stands for.
    ``velocity_error(ε)`` bounds how far each feature moves when q̇ is off by at most ε (None:
    no bound, the term needs exact velocities or a measured noise bound that covers it)."""

    name: str
    columns: tuple[str, ...]
    feature: StateFeature
    meaning: str
    velocity_error: Callable[[float], float] | None

    @property
    def width(self) -> int:
        return len(self.columns)


def _smooth_sign(v0: float) -> StateFeature:
    def f(q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        return np.tanh(dq / v0)[:, None]
    return f


def _harmonic(h: int) -> StateFeature:
    def f(q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        return np.stack([np.sin(h * q), np.cos(h * q)], axis=1)
    return f


def _quadratic_drag(q: np.ndarray, dq: np.ndarray) -> np.ndarray:
    return (dq * np.abs(dq))[:, None]


def _tanh_error(v0: float) -> Callable[[float], float]:
    def err(eps: float) -> float:
        return min(2.0, eps / v0)          # Lipschitz 1/v0, range 2
    return err


def _no_error(eps: float) -> float:
    return 0.0                             # a function of q alone


#: Every adoptable term, by name (the candidates' report order).
TERM_KINDS: dict[str, TermKind] = {
    k.name: k for k in (
        *(TermKind(f"tanh(dq/{v0:g})", (f"tanh(dq/{v0:g})",), _smooth_sign(v0),
                   f"smooth Coulomb shape, v0 = {v0:g} rad/s", _tanh_error(v0))
          for v0 in (0.01, 0.05, 0.2)),
        *(TermKind(f"harmonic {h}", (f"sin({h}q)", f"cos({h}q)"), _harmonic(h),
                   f"sin({h}q), cos({h}q): position-dependent torque (gear ripple, cable drag)",
                   _no_error) for h in (1, 2, 3)),
        TermKind("dq*|dq|", ("dq*|dq|",), _quadratic_drag, "quadratic drag", None),
    )}


def _kind(name: str) -> TermKind:
    kind = TERM_KINDS.get(name)
    if kind is None:
        raise ValueError(f"unknown friction term {name!r} (known: {', '.join(TERM_KINDS)})")
    return kind


@dataclass(frozen=True, eq=False)
class FrictionTerms:
    """Adopted terms with their coefficients' nominal and box.

    Attributes:
        names: the terms, in column order (keys of :data:`TERM_KINDS`).
        nominal, lower, upper: (nj, n_columns) per joint, columns in the order of
            :attr:`columns` (each term's feature columns in turn).
    """

    names: tuple[str, ...]
    nominal: np.ndarray
    lower: np.ndarray
    upper: np.ndarray

    def __post_init__(self) -> None:
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"friction terms: repeated names in {list(self.names)}")
        width = sum(_kind(n).width for n in self.names)
        arrays = [np.asarray(a, float) for a in (self.nominal, self.lower, self.upper)]
        if any(a.ndim != 2 or a.shape[1] != width or a.shape != arrays[0].shape
               for a in arrays):
            raise ValueError(f"friction terms: nominal/lower/upper must be (nj, {width}) "
                             f"arrays, got {[a.shape for a in arrays]}")
        if not all(np.all(np.isfinite(a)) for a in arrays):
            raise ValueError("friction terms: non-finite coefficient")
        if np.any(arrays[1] > arrays[0]) or np.any(arrays[0] > arrays[2]):
            raise ValueError("friction terms: nominal must lie inside [lower, upper]")
        for name, a in zip(("nominal", "lower", "upper"), arrays):
            object.__setattr__(self, name, a)

    @property
    def columns(self) -> tuple[str, ...]:
        """Feature column names, in coefficient order."""
        return tuple(c for n in self.names for c in _kind(n).columns)

    @property
    def width(self) -> int:
        """Number of coefficients per joint."""
        return len(self.columns)

    def velocity_errors(self, eps: float) -> np.ndarray | None:
        """(width,) how far each feature moves under a velocity error ≤ ``eps`` (None if some
        term has no such bound)."""
        out = []
        for n in self.names:
            kind = _kind(n)
            if kind.velocity_error is None:
                return None
            out += [kind.velocity_error(eps)] * kind.width
        return np.asarray(out, float)

    @property
    def centre(self) -> np.ndarray:
        return 0.5 * (self.lower + self.upper)

    @staticmethod
    def features_of(names: Sequence[str], q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """(N, nj, width) the features of terms ``names`` at samples q, q̇ (N, nj)."""
        q, dq = np.asarray(q, float), np.asarray(dq, float)
        if not names:
            return np.zeros((*q.shape, 0))
        return np.stack([np.concatenate([_kind(n).feature(q[:, j], dq[:, j]) for n in names],
                                        axis=1) for j in range(q.shape[1])], axis=1)

    def features(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """(N, nj, width) the features at samples q, q̇ (N, nj): the law adds
        Σ_c coefficient[j, c]·features[:, j, c] to joint j's torque."""
        return self.features_of(self.names, q, dq)

    def torque(self, q: np.ndarray, dq: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
        """(N, nj) the terms' torque at ``coefficients`` (nj, width)."""
        return np.einsum("njc,jc->nj", self.features(q, dq), np.asarray(coefficients, float))

    def as_dict(self) -> dict[str, Any]:
        """calib.yaml form: {term: {nominal|lower|upper: {column: [per joint]}}}."""
        out: dict[str, Any] = {}
        k = 0
        for name in self.names:
            kind = _kind(name)
            sl = slice(k, k + kind.width)
            out[name] = {key: {c: getattr(self, key)[:, i].tolist()
                               for c, i in zip(kind.columns, range(sl.start, sl.stop))}
                         for key in ("nominal", "lower", "upper")}
            k += kind.width
        return out

    @classmethod
    def from_mapping(cls, raw: Any, nj: int) -> FrictionTerms:
        """Parse :meth:`as_dict`'s form; ValueError naming the offending key."""
        if not isinstance(raw, Mapping):
            raise ValueError("expected a mapping term name -> {nominal, lower, upper}")
        names = tuple(str(n) for n in raw)
        tables: dict[str, list[np.ndarray]] = {"nominal": [], "lower": [], "upper": []}
        for name in names:
            kind = _kind(name)
            entry = raw[name]
            if not isinstance(entry, Mapping):
                raise ValueError(f"{name}: expected a mapping with nominal/lower/upper")
            for key, cols in tables.items():
                table = entry.get(key)
                if not isinstance(table, Mapping):
                    raise ValueError(f"{name}.{key}: expected a mapping {list(kind.columns)}")
                for c in kind.columns:
                    vals = table.get(c)
                    ok = (isinstance(vals, list) and len(vals) == nj and all(
                        isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals))
                    if not ok or not np.all(np.isfinite(np.asarray(vals, float))):
                        raise ValueError(f"{name}.{key}.{c}: expected {nj} finite numbers")
                    cols.append(np.asarray(vals, float))
        if not names:
            return cls((), np.zeros((nj, 0)), np.zeros((nj, 0)), np.zeros((nj, 0)))
        return cls(names, *(np.stack(tables[k], axis=1) for k in ("nominal", "lower", "upper")))
