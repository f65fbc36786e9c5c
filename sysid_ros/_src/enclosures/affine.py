"""Affine arithmetic (first-order zonotopes) on numpy arrays, to beat interval wrapping.

An ``Affine`` x = c + Σ_i g_i ε_i + e with shared noise symbols ε_i ∈ [−1, 1] and an independent
remainder |e| ≤ r, batched: c (B...), g (B..., G), r (B...). Plain intervals lose the correlation
between quantities (a rotated box is re-boxed at every joint of an RNEA pass: the "wrapping
effect", tens of N·m on a Gen3); affine forms keep linear correlations exactly, so rotations and
sums cost nothing and only products and trigonometric functions add (second-order) remainders.
This is the first-order cousin of the polynomial zonotopes ARMOUR uses.

Soundness: for every assignment of the ε_i in [−1, 1], every real value the operation can take
lies in the result. Products: (c₁ + l₁ + e₁)(c₂ + l₂ + e₂) with l the linear parts, |l| ≤ s =
Σ|g|: the bilinear terms are bounded by |c₁|r₂ + |c₂|r₁ + (s₁ + r₁)(s₂ + r₂). cos/sin: Taylor
with Lagrange remainder ½w² (|cos''|, |sin''| ≤ 1, w = half-width). Floating-point rounding is
covered as in ``interval.py``: each result's remainder grows by 8u·(|c| + s + r).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from sysid_ros._src.enclosures.interval import Interval

__all__ = ["Affine", "affine_cos_sin"]

_U = 8.0 * np.finfo(float).eps
_TINY = np.finfo(float).tiny


class Affine:
    """x = c + g·ε + e, ε ∈ [−1, 1]^G, |e| ≤ r (module doc). ``s`` ≥ Σ|g| is kept alongside."""

    __slots__ = ("c", "g", "r", "s", "_abs_sum")
    __array_priority__ = 1000

    def __init__(self, c: np.ndarray, g: np.ndarray | None, r: np.ndarray,
                 s: np.ndarray | None = None) -> None:
        self.c = np.asarray(c, float)
        self.g = g
        self.r = np.asarray(r, float)
        self._abs_sum: np.ndarray | None = None
        self.s = self.abs_sum() if s is None else s

    @classmethod
    def _make(cls, c: np.ndarray, g: np.ndarray | None, r: np.ndarray, s: np.ndarray) -> Affine:
        """``Affine(c, g, r, s)`` for float arrays the arithmetic below has just computed: it
        skips the conversions of ``__init__`` (the sound check builds thousands of forms, each
        in a few numpy calls, so per-call overhead is most of its time)."""
        out = cls.__new__(cls)
        out.c, out.g, out.r, out.s, out._abs_sum = c, g, r, s, None
        return out

    def abs_sum(self) -> np.ndarray:
        """Σ_i |g_i| (exact, cached); ``s`` may be a cheaper upper bound."""
        if self._abs_sum is None:
            # the ndarray method: the same reduction as np.sum without its dispatch layer
            self._abs_sum = np.zeros(()) if self.g is None else np.abs(self.g).sum(axis=-1)
        return self._abs_sum

    @classmethod
    def from_interval(cls, x: Interval, symbols: np.ndarray | None = None,
                      n_symbols: int = 0) -> Affine:
        """Each element of ``x`` gets its own symbol (``symbols`` gives its index, same shape as
        x); without symbols the whole radius becomes the remainder."""
        if symbols is None:
            return cls(x.mid, None, x.rad)
        shape = x.shape
        g = np.zeros(shape + (n_symbols,))
        rad = np.broadcast_to(x.rad, shape)
        np.put_along_axis(g, np.broadcast_to(symbols, shape)[..., None], rad[..., None], axis=-1)
        return cls(np.broadcast_to(x.mid, shape), g, np.zeros(shape), rad)

    def to_interval(self) -> Interval:
        rad = self.abs_sum() + self.r
        return Interval(self.c, rad + _U * (np.abs(self.c) + rad) + _TINY)

    @property
    def shape(self) -> tuple[int, ...]:
        return np.broadcast_shapes(self.c.shape, self.r.shape,
                                   () if self.g is None else self.g.shape[:-1])

    def mag(self) -> np.ndarray:
        return self.to_interval().mag()

    def __getitem__(self, idx: Any) -> Affine:
        shape = self.shape
        g = None if self.g is None else np.broadcast_to(self.g, shape + self.g.shape[-1:])[idx]
        return Affine(np.broadcast_to(self.c, shape)[idx], g, np.broadcast_to(self.r, shape)[idx],
                      np.broadcast_to(self.s, shape)[idx])

    # -- arithmetic ------------------------------------------------------------------------------
    def __neg__(self) -> Affine:
        return Affine._make(-self.c, None if self.g is None else -self.g, self.r, self.s)

    def __add__(self, other: Any) -> Affine:
        if isinstance(other, Interval):
            other = Affine(other.mid, None, other.rad)
        if isinstance(other, Affine):
            c = self.c + other.c
            if self.g is None:
                g = other.g
            elif other.g is None:
                g = self.g
            else:
                g = self.g + other.g
            s = self.s + other.s
            r = self.r + other.r
        else:
            c = self.c + np.asarray(other, float)
            g, s, r = self.g, self.s, self.r
        return Affine._make(c, g, r + _U * (np.abs(c) + s + r) + _TINY, s)

    __radd__ = __add__

    def __sub__(self, other: Any) -> Affine:
        if isinstance(other, Affine) and self.g is not None and other.g is not None:
            # self + (−other) without building −other: negation is exact, so these are the
            # same floating-point results (the common case in the chain code)
            c = self.c - other.c
            s = self.s + other.s
            r = self.r + other.r
            return Affine._make(c, self.g - other.g, r + _U * (np.abs(c) + s + r) + _TINY, s)
        return self + (-other)

    def __rsub__(self, other: Any) -> Affine:
        return (-self) + other

    def __mul__(self, other: Any) -> Affine:
        if isinstance(other, Interval):
            other = Affine(other.mid, None, other.rad)
        if isinstance(other, Affine):
            c1, c2 = self.c, other.c
            c = c1 * c2
            if self.g is None and other.g is None:
                g = None
            elif self.g is None:
                g = c1[..., None] * other.g
            elif other.g is None:
                g = c2[..., None] * self.g
            else:
                g = c1[..., None] * other.g
                g_2 = c2[..., None] * self.g
                if g.shape == g_2.shape:
                    g += g_2            # in place: the same sum without a third big array
                else:
                    g = g + g_2
            s1, s2 = self.abs_sum(), other.abs_sum()
            a1, a2 = np.abs(c1), np.abs(c2)
            r = a1 * other.r + a2 * self.r + (s1 + self.r) * (s2 + other.r)
            s = a1 * s2 + a2 * s1
        else:
            k = np.asarray(other, float)
            c = self.c * k
            g = None if self.g is None else self.g * (k[..., None] if k.ndim else k)
            abs_k = np.abs(k)
            r = self.r * abs_k
            s = self.s * abs_k
        return Affine._make(c, g, r + _U * (np.abs(c) + s + r) + _TINY, s)

    __rmul__ = __mul__


def affine_cos_sin(x: Affine) -> tuple[Affine, Affine]:
    """cos x, sin x by first-order Taylor at the centre with remainder ½w² (module doc)."""
    w = x.to_interval().rad
    cc, sc = np.cos(x.c), np.sin(x.c)
    rem = 0.5 * w * w + 4.0 * np.finfo(float).eps
    dev = Affine(np.zeros_like(x.c), x.g, x.r, x.s)            # x − c
    cos = dev * (-sc) + cc
    sin = dev * cc + sc
    return (Affine(cos.c, cos.g, cos.r + rem, cos.s), Affine(sin.c, sin.g, sin.r + rem, sin.s))
