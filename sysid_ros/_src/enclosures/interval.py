"""Mid-radius interval arithmetic on numpy arrays, vectorised over any batch shape.

An ``Interval`` holds ``mid`` and ``rad`` arrays (same or broadcastable shapes) and stands for every
real x with |x − mid| ≤ rad, element-wise. It supports the operations the planner's reachability
needs (±, ×, sums, sin/cos, hull, intersection tests); each result encloses the exact real result
of the operation applied to every pair of members.

Soundness assumptions (stated once, relied on everywhere in ``sysid_ros._src.planning``):

- IEEE-754 binary64 with round-to-nearest, and numpy's +, −, × correctly rounded; ``np.sin``/
  ``np.cos`` accurate to a few ulp (glibc's are < 1 ulp). Every operation widens the radius by
  ``_SLACK``·(|mid| + rad) + the smallest normal number, which dominates the rounding error of
  computing ``mid`` and ``rad`` themselves (a few ulp of the magnitude; Rump, "Fast and parallel
  interval arithmetic", BIT 1999, uses the same mid-rad bound). The slack is ~1e-15 relative: far
  below every physical margin.
- Multiplication uses |xy − m_x m_y| ≤ |m_x| r_y + r_x |m_y| + r_x r_y, exact for independent
  operands. Correlations between operands are ignored (the "dependency problem"), which only
  widens results, never shrinks them.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Union

import numpy as np

__all__ = ["Interval", "Scalar", "as_interval", "isum", "cos_sin"]

_EPS = np.finfo(float).eps
_SLACK = 8.0 * _EPS
_TINY = np.finfo(float).tiny

_PLAIN = (np.ndarray, float, int, np.floating, np.integer)

Scalar = Union["Interval", np.ndarray, float]


def _widen(mid: np.ndarray, rad: np.ndarray) -> np.ndarray:
    return rad + _SLACK * (np.abs(mid) + rad) + _TINY


class Interval:
    """A box {x : |x − mid| ≤ rad} of arrays (see module doc for the soundness assumptions).

    A number type, not a parameter box: it has no names, any shape, and every operation widens
    it for rounding, so it stays in the mid/rad spelling of the interval-arithmetic literature
    (Rump). Boxes of named parameters (θ_e bounds, priors) are ``model.box.ParameterBox``; the
    reachability analysis turns one into Intervals where it starts computing."""

    __slots__ = ("mid", "rad")
    __array_priority__ = 1000  # ndarray ∘ Interval dispatches to Interval's reflected operators

    def __init__(self, mid: np.ndarray | float, rad: np.ndarray | float = 0.0) -> None:
        self.mid = np.asarray(mid, float)
        self.rad = np.asarray(rad, float)

    # -- construction / views -----------------------------------------------------------------
    @classmethod
    def from_bounds(cls, lo: np.ndarray, hi: np.ndarray) -> Interval:
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        if np.any(lo > hi):
            raise ValueError("Interval.from_bounds: lower bound above upper bound")
        mid = 0.5 * (lo + hi)
        rad = np.maximum(hi - mid, mid - lo)
        return cls(mid, _widen(mid, rad))

    @property
    def lo(self) -> np.ndarray:
        return self.mid - self.rad

    @property
    def hi(self) -> np.ndarray:
        return self.mid + self.rad

    @property
    def shape(self) -> tuple[int, ...]:
        return np.broadcast_shapes(self.mid.shape, self.rad.shape)

    def __getitem__(self, idx: Any) -> Interval:
        shape = self.shape
        return Interval(np.broadcast_to(self.mid, shape)[idx], np.broadcast_to(self.rad, shape)[idx])

    def mag(self) -> np.ndarray:
        """max |x| over the interval."""
        return np.abs(self.mid) + self.rad

    def contains(self, x: np.ndarray) -> np.ndarray:
        return (x >= self.lo) & (x <= self.hi)

    def __repr__(self) -> str:
        return f"Interval(mid={self.mid!r}, rad={self.rad!r})"

    # -- arithmetic -----------------------------------------------------------------------------
    def __neg__(self) -> Interval:
        return Interval(-self.mid, self.rad)

    def __add__(self, other: Scalar) -> Interval:
        if isinstance(other, Interval):
            mid = self.mid + other.mid
            return Interval(mid, _widen(mid, self.rad + other.rad))
        if not isinstance(other, _PLAIN):
            return NotImplemented
        mid = self.mid + other
        return Interval(mid, _widen(mid, self.rad))

    __radd__ = __add__

    def __sub__(self, other: Scalar) -> Interval:
        if not isinstance(other, (Interval,) + _PLAIN):
            return NotImplemented
        return self + (-other)

    def __rsub__(self, other: Scalar) -> Interval:
        return (-self) + other

    def __mul__(self, other: Scalar) -> Interval:
        if isinstance(other, Interval):
            mid = self.mid * other.mid
            rad = (np.abs(self.mid) * other.rad + self.rad * np.abs(other.mid)
                   + self.rad * other.rad)
            return Interval(mid, _widen(mid, rad))
        if not isinstance(other, _PLAIN):
            return NotImplemented
        other = np.asarray(other, float)
        mid = self.mid * other
        return Interval(mid, _widen(mid, self.rad * np.abs(other)))

    __rmul__ = __mul__

    def hull(self, other: Interval) -> Interval:
        return Interval.from_bounds(np.minimum(self.lo, other.lo), np.maximum(self.hi, other.hi))

    def widen(self, extra: np.ndarray | float) -> Interval:
        """Enlarge the radius by ``extra`` ≥ 0 (e.g. a tracking-error bound)."""
        return Interval(self.mid, _widen(self.mid, self.rad + extra))


def as_interval(x: Scalar) -> Interval:
    return x if isinstance(x, Interval) else Interval(np.asarray(x, float), 0.0)


def isum(terms: Iterable[Scalar]) -> Scalar:
    """Sum of a non-empty iterable of intervals/arrays (plain ``sum`` would add a leading 0)."""
    it = iter(terms)
    total = next(it)
    for t in it:
        total = total + t
    return total


def cos_sin(angle: Interval) -> tuple[Interval, Interval]:
    """Tight enclosures of cos and sin over each angle interval.

    The range of cos on [lo, hi] is spanned by the end values and by ±1 wherever a multiple of π
    (cos extremum) lies inside; same for sin with π/2 + multiples of π. Widths ≥ 2π give [−1, 1].
    """
    lo, hi = angle.lo, angle.hi

    def rng(f: Callable[[np.ndarray], np.ndarray], shift: float) -> Interval:
        a, b = f(lo), f(hi)
        low, high = np.minimum(a, b), np.maximum(a, b)
        # extremum points shift + nπ inside [lo, hi]: maxima when n even, minima when n odd
        n_first = np.ceil((lo - shift) / np.pi)
        n_last = np.floor((hi - shift) / np.pi)
        has = n_last >= n_first
        has_two = n_last >= n_first + 1
        first_is_max = np.mod(n_first, 2.0) == 0.0
        high = np.where(has & (first_is_max | has_two), 1.0, high)
        low = np.where(has & (~first_is_max | has_two), -1.0, low)
        mid = 0.5 * (low + high)
        rad = 0.5 * (high - low) + 4.0 * _EPS
        return Interval(mid, _widen(mid, rad))

    return rng(np.cos, 0.0), rng(np.sin, 0.5 * np.pi)
