"""One type for a box of named parameters: :class:`ParameterBox`.

A box is ``lower ≤ x ≤ upper`` element-wise over named parameters, with a ``nominal`` point inside
it (the identifier's point estimate, or the centre when none is known), the ``units`` of each
parameter and the ``frame`` they are expressed in ("" when that does not apply). It is what the
identifier produces, what the controller and the planner assume, what ``/sysid/payload_bounds``
carries and what reports print — one spelling everywhere: ``lower``/``upper``/``nominal`` for the
ends and the point, ``centre``/``radius`` for the midpoint and the half-width (``width`` = upper −
lower). Conversions between boxes are by name, never by position (``intersect`` refuses boxes over
other names).

Not a box in this sense: ``sysid_ros._src.enclosures.interval.Interval`` is interval *arithmetic* (a
number type of the reachability analysis, any shape, widened for rounding at every operation);
``control.controller.TorqueInterval`` is one evaluation of the control law's torque enclosure.

``theta_e_box`` builds the box of the end-effector body's 10 inertial parameters θ_e (Pinocchio
order ``model.parameters.PARAM_NAMES``, in kg, kg·m and kg·m²).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from sysid_ros._src.model.errors import BoxError
from sysid_ros._src.model.parameters import PARAM_NAMES

__all__ = ["PARAM_UNITS", "ParameterBox", "theta_e_box"]

#: units of θ (one body) in ``PARAM_NAMES`` order: mass, first moment m·c, inertia about the origin
PARAM_UNITS: tuple[str, ...] = ("kg",) + ("kg·m",) * 3 + ("kg·m²",) * 6


def _vector(field: str, value: Any, names: tuple[str, ...]) -> np.ndarray:
    """A read-only float copy of ``value`` with one finite entry per name (BoxError otherwise)."""
    try:
        arr = np.array(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise BoxError(f"box {field}: not numeric ({exc})") from None
    if arr.shape != (len(names),):
        raise BoxError(f"box {field}: shape {arr.shape}, expected ({len(names)},) for parameters "
                       f"{list(names)}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise BoxError(f"box {field}: non-finite value for parameter {names[bad[0]]!r}")
    arr.setflags(write=False)       # the box is frozen: its arrays too
    return arr


@dataclass(frozen=True, eq=False)
class ParameterBox:
    """``lower ≤ nominal ≤ upper`` over ``names`` (each a (n,) float array), with ``units`` per
    parameter (empty = unitless) and the ``frame`` they are expressed in. Validated on
    construction (:class:`~sysid_ros._src.model.errors.BoxError` naming the parameter); immutable (the
    arrays are read-only copies). Build it with keywords: ``ParameterBox(names, lower=…,
    nominal=…, upper=…)``."""

    names: tuple[str, ...]
    lower: np.ndarray
    nominal: np.ndarray
    upper: np.ndarray
    units: tuple[str, ...] = ()
    frame: str = ""

    def __post_init__(self) -> None:
        names = tuple(str(n) for n in self.names)
        if not names:
            raise BoxError("box names: no parameters")
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise BoxError(f"box names: duplicate parameter names {dup}")
        units = tuple(str(u) for u in self.units) or ("",) * len(names)
        if len(units) != len(names):
            raise BoxError(f"box units: {len(units)} units for {len(names)} parameters")
        lower = _vector("lower", self.lower, names)
        upper = _vector("upper", self.upper, names)
        nominal = _vector("nominal", self.nominal, names)
        for what, bad in (("lower > upper", lower > upper),
                          ("nominal < lower", nominal < lower),
                          ("nominal > upper", nominal > upper)):
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise BoxError(f"box parameter {names[i]!r}: {what} (lower {lower[i]:.9g}, "
                               f"nominal {nominal[i]:.9g}, upper {upper[i]:.9g})")
        for name, value in (("names", names), ("units", units), ("lower", lower),
                            ("nominal", nominal), ("upper", upper), ("frame", str(self.frame))):
            object.__setattr__(self, name, value)

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_centre_radius(cls, names: tuple[str, ...], centre: Any, radius: Any, *,
                           nominal: Any = None, units: tuple[str, ...] = (),
                           frame: str = "") -> ParameterBox:
        """[centre − radius, centre + radius] (radius ≥ 0), nominal = the centre by default."""
        c, r = np.asarray(centre, float), np.asarray(radius, float)
        if np.any(r < 0):
            i = int(np.flatnonzero(r < 0)[0])
            raise BoxError(f"box parameter {tuple(names)[i]!r}: negative radius {r[i]:.9g}")
        return cls(tuple(names), lower=c - r, nominal=c if nominal is None else nominal,
                   upper=c + r, units=units, frame=frame)

    @classmethod
    def point(cls, names: tuple[str, ...], values: Any, *, units: tuple[str, ...] = (),
              frame: str = "") -> ParameterBox:
        """The zero-width box {values} (a model taken as exact)."""
        return cls(tuple(names), lower=values, nominal=values, upper=values, units=units,
                   frame=frame)

    @classmethod
    def from_dict(cls, doc: dict[str, Any]) -> ParameterBox:
        """Inverse of :meth:`as_dict` (JSON reports); ``nominal`` null or absent = the centre."""
        try:
            names = tuple(doc["names"])
            lower, upper = np.asarray(doc["lower"], float), np.asarray(doc["upper"], float)
        except (KeyError, TypeError, ValueError) as exc:
            raise BoxError(f"box document: needs names, lower and upper ({exc})") from None
        nominal = doc.get("nominal")
        return cls(names, lower=lower, upper=upper,
                   nominal=0.5 * (lower + upper) if nominal is None else nominal,
                   units=tuple(doc.get("units") or ()), frame=str(doc.get("frame") or ""))

    def with_nominal(self, nominal: Any) -> ParameterBox:
        """The same box with another nominal (must lie inside it)."""
        return ParameterBox(self.names, lower=self.lower, nominal=nominal, upper=self.upper,
                            units=self.units, frame=self.frame)

    def with_bounds(self, lower: Any, upper: Any, nominal: Any = None) -> ParameterBox:
        """The same parameters over another box; the nominal is this one's clipped into it
        unless given."""
        lo, hi = np.asarray(lower, float), np.asarray(upper, float)
        nom = np.clip(self.nominal, lo, hi) if nominal is None else nominal
        return ParameterBox(self.names, lower=lo, nominal=nom, upper=hi, units=self.units,
                            frame=self.frame)

    # -- views ----------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.names)

    @property
    def centre(self) -> np.ndarray:
        """Midpoint ½(lower + upper)."""
        return 0.5 * (self.lower + self.upper)

    @property
    def radius(self) -> np.ndarray:
        """Half-width ½(upper − lower)."""
        return 0.5 * (self.upper - self.lower)

    @property
    def width(self) -> np.ndarray:
        """upper − lower."""
        return self.upper - self.lower

    def index(self, name: str) -> int:
        """Position of parameter ``name`` (BoxError if absent)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise BoxError(f"box: no parameter {name!r} (have {list(self.names)})") from None

    def named(self, name: str) -> tuple[float, float, float]:
        """(lower, nominal, upper) of parameter ``name``."""
        i = self.index(name)
        return float(self.lower[i]), float(self.nominal[i]), float(self.upper[i])

    def contains(self, x: Any, tol: float = 0.0) -> bool:
        """Every x_i within [lower_i − tol, upper_i + tol] (x in this box's name order)."""
        x = np.asarray(x, float)
        return bool(np.all(x >= self.lower - tol) and np.all(x <= self.upper + tol))

    def clip(self, x: Any) -> np.ndarray:
        """x projected onto the box (element-wise clip)."""
        return np.clip(np.asarray(x, float), self.lower, self.upper)

    def intersect(self, other: ParameterBox) -> ParameterBox | None:
        """The box of points in both, or **None when they do not overlap** (for sound boxes that
        means the assumptions behind one of them failed: the caller decides what that is).
        Both must name the same parameters in the same order, in the same units and frame
        (BoxError otherwise). The nominal is this box's, clipped into the intersection."""
        if other.names != self.names:
            raise BoxError(f"box intersect: parameters {list(other.names)} != "
                           f"{list(self.names)}")
        if other.units != self.units or other.frame != self.frame:
            raise BoxError(f"box intersect: units/frame {other.units}/{other.frame!r} != "
                           f"{self.units}/{self.frame!r}")
        lower, upper = np.maximum(self.lower, other.lower), np.minimum(self.upper, other.upper)
        if np.any(lower > upper):
            return None
        return self.with_bounds(lower, upper)

    def as_dict(self) -> dict[str, Any]:
        """Plain lists and strings (JSON/YAML reports): names, units, frame, lower, nominal,
        upper."""
        return {"names": list(self.names), "units": list(self.units), "frame": self.frame,
                "lower": self.lower.tolist(), "nominal": self.nominal.tolist(),
                "upper": self.upper.tolist()}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ParameterBox):
            return NotImplemented
        return (self.names == other.names and self.units == other.units
                and self.frame == other.frame and np.array_equal(self.lower, other.lower)
                and np.array_equal(self.nominal, other.nominal)
                and np.array_equal(self.upper, other.upper))

    __hash__ = None  # type: ignore[assignment]   # mutable-looking arrays: not hashable


def theta_e_box(lower: Any, upper: Any, nominal: Any = None, *, frame: str = "") -> ParameterBox:
    """Box on θ_e (10,) in ``PARAM_NAMES`` order and ``PARAM_UNITS``; nominal = the centre unless
    given. ``frame``: the joint frame the parameters are expressed in, when known (the robot's
    ``ee_joint``)."""
    lo, hi = np.asarray(lower, float), np.asarray(upper, float)
    return ParameterBox(PARAM_NAMES, lower=lo, upper=hi,
                        nominal=0.5 * (lo + hi) if nominal is None else nominal,
                        units=PARAM_UNITS, frame=frame)
