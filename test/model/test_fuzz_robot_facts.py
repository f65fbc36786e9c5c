"""Hypothesis fuzz of the robot-facts and calibration loaders (model/robots.py,
model/calibration_overlay.py): a malformed value anywhere they read gives a ModelError that names the
file and the key — never a TypeError/ValueError/AttributeError from deep inside, and never a
robot built from a value that is not what the file claims (non-finite, wrong length)."""
from __future__ import annotations

import copy
import tempfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sysid_ros._src.model.errors import ModelError
from sysid_ros._src.model.robots import load_robot

ROOT = Path(__file__).resolve().parents[2]
GEN3 = yaml.safe_load((ROOT / "config" / "gen3.yaml").read_text())
# keys the loaders read at load time (dotted paths)
ROBOT_KEYS = ["joints", "end_effector_joint", "tool_frame", "limits.position_lower_deg",
              "limits.position_upper_deg", "limits.velocity_deg_s", "limits.torque_Nm",
              "friction.Fc", "friction.Fv", "friction.Ia", "friction.beta",
              "friction.uncertainty.rel.Fc", "friction.uncertainty.abs.Fv",
              "model_uncertainty.links_rel", "collision_spheres", "model.floating_base",
              "model.locked_joints", "limits", "friction"]
CALIB_KEYS = ["friction", "friction.nominal", "friction.lower.Fv", "friction.upper.Ia",
              "friction.nominal.beta", "links", "links.joint_2", "links.joint_2.nominal",
              "links.joint_2.lower", "identification", "robot", "sysid_calibration"]
BAD = st.one_of(st.none(), st.booleans(), st.text(max_size=4), st.integers(-3, 3),
                st.floats(allow_nan=True, allow_infinity=True),
                st.lists(st.one_of(st.floats(allow_nan=True), st.text(max_size=2), st.none(),
                                   st.integers(-2, 2)), max_size=9),
                st.dictionaries(st.sampled_from(["a", "Fc", "nominal"]), st.integers(), max_size=2))
SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _set(doc: dict, key: str, value) -> dict:
    doc = copy.deepcopy(doc)
    node = doc
    parts = key.split(".")
    for part in parts[:-1]:
        if not isinstance(node.get(part), dict):
            node[part] = {}
        node = node[part]
    node[parts[-1]] = value
    return doc


def _check(err: ModelError, path: Path, key: str) -> None:
    text = str(err)
    assert path.name in text, text
    # the message names the key (or, for a value inside a section, that section)
    assert any(seg in text for seg in key.split(".")), (key, text)


@SETTINGS
@given(key=st.sampled_from(ROBOT_KEYS), value=BAD)
def test_robot_facts_loader(key, value):
    doc = _set(GEN3, key, value)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "robot_fuzz.yaml"
        path.write_text(yaml.safe_dump(doc))
        try:
            robot = load_robot("gen3", path)
        except ModelError as err:
            _check(err, path, key)
            return
    lim = robot.limits
    assert np.all(np.isfinite(lim.dq_max)) and np.all(np.isfinite(lim.tau_max))
    assert np.all(np.isfinite(robot.friction.nominal))
    assert len(robot.joint_names) == robot.nj


def _calibration(robot) -> dict:
    nom = robot.friction.nominal
    table = lambda a: {k: a[:, i].tolist() for i, k in enumerate(("Fc", "Fv", "Ia", "beta"))}  # noqa: E731
    th = robot.model.inertias[2].toDynamicParameters()
    return {"sysid_calibration": 1, "robot": robot.name,
            "friction": {"nominal": table(nom), "lower": table(nom - 0.1),
                         "upper": table(nom + 0.1)},
            "links": {"joint_2": {"nominal": th.tolist(), "lower": (th - 0.01).tolist(),
                                  "upper": (th + 0.01).tolist()}},
            "identification": {"torque_noise_abs": [0.1] * robot.nj, "window_s": 0.4,
                               "stride_s": 0.1},
            "complete": True}


@SETTINGS
@given(key=st.sampled_from(CALIB_KEYS), value=BAD)
def test_calibration_loader(key, value):
    robot = load_robot("gen3")
    doc = _set(_calibration(robot), key, value)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "calib_fuzz.yaml"
        path.write_text(yaml.safe_dump(doc))
        try:
            calibrated = load_robot("gen3", calibration=path)
        except ModelError as err:
            _check(err, path, key)
            return
    assert np.all(np.isfinite(calibrated.friction.nominal))
    assert np.all(calibrated.friction.lower <= calibrated.friction.upper)


def test_the_unmodified_documents_load():
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "calib.yaml"
        path.write_text(yaml.safe_dump(_calibration(load_robot("gen3"))))
        assert load_robot("gen3", calibration=path).friction.nominal.shape == (7, 4)


def test_a_calibration_file_cut_short_is_refused_naming_what_is_missing():
    """Valid YAML with the format version, the robot and a provenance, but no friction or noise
    section: refused at load time, never applied as if the robot were calibrated."""
    full = _calibration(load_robot("gen3"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "calib.yaml"
        for cut, named in (({k: v for k, v in full.items() if k != "friction"}, "friction"),
                           ({k: v for k, v in full.items() if k != "identification"},
                            "identification"),
                           (_set(full, "identification", {"window_s": 0.4, "stride_s": 0.1}),
                            "identification.torque_noise_abs")):
            cut = {**cut, "provenance": {"tool": "sysid-calibrate"}}
            path.write_text(yaml.safe_dump(cut))
            with pytest.raises(ModelError, match=named.replace(".", r"\.")) as err:
                load_robot("gen3", calibration=path)
            assert path.name in str(err.value)


@SETTINGS
@given(cut=st.floats(0.0, 1.0, exclude_max=True))
def test_a_calibration_file_cut_anywhere_is_refused(cut):
    """The file as sysid-calibrate writes it (write_calibration), cut at any byte before its
    end (a full disk, an interrupted copy): refused naming the file, never half applied."""
    from sysid_ros._src.calibration.document import write_calibration

    robot = load_robot("gen3")
    doc = {k: v for k, v in _calibration(robot).items() if k != "complete"}
    with tempfile.TemporaryDirectory() as tmp:
        path = write_calibration(Path(tmp) / "calib.yaml", doc)
        text = path.read_bytes()
        assert load_robot("gen3", calibration=path).nj == robot.nj      # whole: it loads
        path.write_bytes(text[:int(cut * (len(text) - 1))])             # the last newline kept
        with pytest.raises(ModelError) as err:
            load_robot("gen3", calibration=path)
        assert path.name in str(err.value)
