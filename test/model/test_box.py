"""ParameterBox (sysid_ros._src.model.box): construction refuses malformed boxes naming the parameter;
centre/radius/width, contains, clip and intersect agree with direct numpy on random boxes; the
dict form round-trips."""
from __future__ import annotations

import json

import numpy as np
import pytest

from sysid_ros._src.errors import SysidError
from sysid_ros._src.model import BoxError, ParameterBox, theta_e_box
from sysid_ros._src.model.box import PARAM_UNITS
from sysid_ros._src.model.parameters import PARAM_NAMES

NAMES = ("joint_1.Fc", "joint_1.Fv", "joint_2.Fc")


def _random_box(rng: np.random.Generator, n: int = 10) -> tuple[np.ndarray, np.ndarray]:
    a, b = rng.normal(size=(2, n)) * rng.uniform(0.1, 10.0, n)
    return np.minimum(a, b), np.maximum(a, b)


@pytest.mark.parametrize("field, lower, nominal, upper, message", [
    ("lower > upper", [0, 2, 0], [0, 1, 0], [1, 1, 1], "'joint_1.Fv': lower > upper"),
    ("nominal below", [0, 0, 0], [0, 0, -1], [1, 1, 1], "'joint_2.Fc': nominal < lower"),
    ("nominal above", [0, 0, 0], [0, 3, 0], [1, 1, 1], "'joint_1.Fv': nominal > upper"),
    ("non-finite", [0, 0, np.nan], [0, 0, 0], [1, 1, 1], "lower: non-finite value for "
                                                          "parameter 'joint_2.Fc'"),
    ("inf", [0, 0, 0], [0, 0, 0], [1, np.inf, 1], "upper: non-finite value for parameter "
                                                  "'joint_1.Fv'"),
    ("shape", [0, 0], [0, 0, 0], [1, 1, 1], "lower: shape (2,), expected (3,)"),
])
def test_construction_errors_name_the_parameter(field, lower, nominal, upper, message):
    with pytest.raises(BoxError, match=message.replace("(", r"\(").replace(")", r"\)")):
        ParameterBox(NAMES, lower=lower, nominal=nominal, upper=upper)


def test_names_and_units_are_checked():
    with pytest.raises(BoxError, match="duplicate"):
        ParameterBox(("a", "a"), lower=[0, 0], nominal=[0, 0], upper=[1, 1])
    with pytest.raises(BoxError, match="2 units for 3 parameters"):
        ParameterBox(NAMES, lower=[0] * 3, nominal=[0] * 3, upper=[1] * 3, units=("N·m", "N·m"))
    with pytest.raises(BoxError, match="no parameters"):
        ParameterBox((), lower=[], nominal=[], upper=[])
    assert issubclass(BoxError, SysidError)


def test_box_is_immutable_and_copies_its_inputs():
    lo = np.zeros(3)
    box = ParameterBox(NAMES, lower=lo, nominal=lo, upper=np.ones(3))
    lo[0] = -5.0                                  # the caller's array, not the box's
    assert box.lower[0] == 0.0
    with pytest.raises(ValueError):
        box.lower[0] = 1.0
    assert box.units == ("", "", "") and box.frame == ""


def test_views_and_contains_agree_with_numpy():
    rng = np.random.default_rng(0)
    for _ in range(50):
        lo, hi = _random_box(rng)
        nominal = rng.uniform(lo, hi)
        box = theta_e_box(lo, hi, nominal, frame="joint_7")
        np.testing.assert_array_equal(box.centre, (lo + hi) / 2)
        np.testing.assert_array_equal(box.radius, (hi - lo) / 2)
        np.testing.assert_array_equal(box.width, hi - lo)
        assert box.names == PARAM_NAMES and box.units == PARAM_UNITS and len(box) == 10
        x = rng.uniform(lo - 0.2 * (hi - lo), hi + 0.2 * (hi - lo))
        inside = bool(np.all((lo <= x) & (x <= hi)))
        assert box.contains(x) == inside
        tol = 0.1
        assert box.contains(x, tol) == bool(np.all((lo - tol <= x) & (x <= hi + tol)))
        np.testing.assert_array_equal(box.clip(x), np.minimum(np.maximum(x, lo), hi))
        assert box.contains(box.clip(x))
        k = int(rng.integers(10))
        assert box.named(PARAM_NAMES[k]) == (lo[k], nominal[k], hi[k])
    assert theta_e_box(np.zeros(10), np.ones(10)).units[:5] == ("kg", "kg·m", "kg·m", "kg·m",
                                                                 "kg·m²")
    with pytest.raises(BoxError, match="no parameter 'mass'"):
        box.index("mass")


def test_centre_radius_round_trip_and_point():
    rng = np.random.default_rng(1)
    lo, hi = _random_box(rng, 3)
    box = ParameterBox.from_centre_radius(NAMES, (lo + hi) / 2, (hi - lo) / 2, units=("N·m",) * 3)
    np.testing.assert_allclose(box.lower, lo, rtol=0, atol=1e-12 * np.abs(lo).max())
    np.testing.assert_allclose(box.upper, hi, rtol=0, atol=1e-12 * np.abs(hi).max())
    np.testing.assert_array_equal(box.nominal, (lo + hi) / 2)
    with pytest.raises(BoxError, match="'joint_1.Fv': negative radius"):
        ParameterBox.from_centre_radius(NAMES, np.zeros(3), [1.0, -1.0, 1.0])
    point = ParameterBox.point(NAMES, lo)
    assert np.all(point.radius == 0) and point.contains(lo) and not point.contains(lo + 1e-9)
    moved = box.with_nominal(box.upper)
    np.testing.assert_array_equal(moved.nominal, box.upper)
    with pytest.raises(BoxError, match="nominal > upper"):
        box.with_nominal(box.upper + 1.0)


def test_intersect_agrees_with_numpy_and_refuses_other_names():
    rng = np.random.default_rng(2)
    overlaps = misses = 0
    for _ in range(200):
        (lo1, hi1), (lo2, hi2) = _random_box(rng, 3), _random_box(rng, 3)
        a = ParameterBox(NAMES, lower=lo1, nominal=rng.uniform(lo1, hi1), upper=hi1)
        b = ParameterBox(NAMES, lower=lo2, nominal=lo2, upper=hi2)
        both = a.intersect(b)
        lo, hi = np.maximum(lo1, lo2), np.minimum(hi1, hi2)
        if np.any(lo > hi):
            assert both is None
            misses += 1
            continue
        overlaps += 1
        assert both is not None
        np.testing.assert_array_equal(both.lower, lo)
        np.testing.assert_array_equal(both.upper, hi)
        np.testing.assert_array_equal(both.nominal, np.clip(a.nominal, lo, hi))
        # a point is in the intersection exactly when it is in both
        x = rng.uniform(np.minimum(lo1, lo2), np.maximum(hi1, hi2))
        assert both.contains(x) == (a.contains(x) and b.contains(x))
    assert overlaps > 10 and misses > 10          # both branches exercised
    c = ParameterBox(("joint_1.Fc", "joint_2.Fc", "joint_1.Fv"), lower=np.zeros(3),
                     nominal=np.zeros(3), upper=np.ones(3))
    with pytest.raises(BoxError, match="parameters"):
        a.intersect(c)
    with pytest.raises(BoxError, match="units/frame"):
        theta_e_box(np.zeros(10), np.ones(10), frame="a").intersect(
            theta_e_box(np.zeros(10), np.ones(10), frame="b"))


def test_dict_form_round_trips_through_json():
    rng = np.random.default_rng(3)
    lo, hi = _random_box(rng)
    box = theta_e_box(lo, hi, rng.uniform(lo, hi), frame="joint_7")
    doc = json.loads(json.dumps(box.as_dict()))
    assert doc["names"] == list(PARAM_NAMES) and doc["units"][9] == "kg·m²"
    assert ParameterBox.from_dict(doc) == box
    assert box != box.with_nominal(box.centre) or np.array_equal(box.nominal, box.centre)
    with pytest.raises(BoxError, match="names, lower and upper"):
        ParameterBox.from_dict({"names": ["m"]})
