"""Every input file is checked against its schema (sysid_ros._src.schema): a damaged or foreign file
given to a tool is exit 2 with a message naming the file, the key and what was expected — never
a silent partial use. Through the CLIs (sysid-identify, sysid-import, sysid-launch) and the
identifier node (test/nodes/test_identifier_bad_inputs.py)."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sysid_ros._src.bagio.import_cli import main as import_main
from sysid_ros._src.calibration.document import write_calibration
from sysid_ros._src.identification.identify_cli import main as identify_main
from sysid_ros._src.launcher.launch_cli import main as launch_main
from sysid_ros._src.model.robots import load_robot

ROOT = Path(__file__).resolve().parents[1]
GEN3_FILE = ROOT / "config" / "gen3.yaml"


def _calibration_doc() -> dict:
    robot = load_robot("gen3")
    nom = robot.friction.nominal
    table = lambda a: {k: a[:, i].tolist() for i, k in enumerate(("Fc", "Fv", "Ia", "beta"))}  # noqa: E731
    return {"sysid_calibration": 1, "robot": "gen3", "joints": list(robot.joint_names),
            "provenance": {"tool": "sysid-calibrate"},
            "friction": {"nominal": table(nom), "lower": table(nom - 0.1),
                         "upper": table(nom + 0.1)},
            "identification": {"torque_noise_abs": [0.1] * robot.nj, "window_s": 0.4,
                               "stride_s": 0.1}}


def _edit(doc: dict, key: str, value) -> dict:
    doc = copy.deepcopy(doc)
    node = doc
    *parents, last = key.split(".")
    for part in parents:
        node = node[part]
    if value is _DROP:
        del node[last]
    else:
        node[last] = value
    return doc


_DROP = object()
PRIOR = {"lower": [0.0] * 10, "upper": [1.0] * 10}


def _identify(tmp_path: Path, capsys, *args: str) -> tuple[int, str]:
    rc = identify_main(["--robot", "gen3", "--bag", str(tmp_path / "no_bag"), "--out",
                        str(tmp_path / "r.json"), "--no-progress", *args])
    return rc, capsys.readouterr().err


@pytest.mark.parametrize("edit, named", [
    (("robot", "z1"), "robot"),                                       # another robot's file
    (("joints", ["joint_2", "joint_1", "joint_3", "joint_4", "joint_5", "joint_6", "joint_7"]),
     "joints"),                                                       # reordered joints
    (("frition", {}), "unknown key 'frition'"),                       # a misspelt section
    (("identification.window_s", "fast"), "identification.window_s: expected a positive number"),
    (("identification.torque_noise_abs", [0.1] * 6), "identification.torque_noise_abs: "
     "expected 7 finite numbers"),                                    # another joint count
    (("friction.lower.Fv", _DROP), "friction.lower.Fv: missing"),
    (("identification.torque_noise_ab", [0.1] * 7), "unknown key 'identification."
     "torque_noise_ab'"),
    (("sysid_calibration", 2), "sysid_calibration: expected format version 1"),
])
def test_a_damaged_calibration_is_refused_naming_file_and_key(tmp_path, capsys, edit, named):
    path = write_calibration(tmp_path / "calib.yaml", _edit(_calibration_doc(), *edit))
    rc, err = _identify(tmp_path, capsys, "--calibration", str(path))
    assert rc == 2 and str(path) in err and named in err, err


def test_a_calibration_cut_short_or_foreign_is_refused(tmp_path, capsys):
    path = write_calibration(tmp_path / "calib.yaml", _calibration_doc())
    path.write_text(path.read_text().replace("complete: true\n", ""))
    rc, err = _identify(tmp_path, capsys, "--calibration", str(path))
    assert rc == 2 and "calib.yaml: calibration complete: missing" in err, err
    for foreign in (GEN3_FILE, ROOT / "config" / "identifier.yaml"):
        rc, err = _identify(tmp_path, capsys, "--calibration", str(foreign))
        assert rc == 2 and str(foreign) in err and "sysid_calibration" in err, err


@pytest.mark.parametrize("doc, named", [
    ({"lower": [0.0] * 9, "upper": [1.0] * 10}, "lower: expected 10 finite numbers"),
    ({"lower": [0.0] * 10}, "upper: missing"),
    ({**PRIOR, "mass": 3.0}, "unknown key 'mass'"),
    ({"prior": {**PRIOR, "upper": [1.0] * 9 + [float("nan")]}}, "prior.upper: expected 10"),
    ({"sysid_calibration": 1, **PRIOR}, "unknown key 'sysid_calibration'"),       # foreign
])
def test_a_damaged_prior_file_is_refused_naming_file_and_key(tmp_path, capsys, doc, named):
    path = tmp_path / "prior.yaml"
    path.write_text(yaml.safe_dump(doc))
    rc, err = _identify(tmp_path, capsys, "--prior", str(path))
    assert rc == 2 and str(path) in err and named in err, err


def test_a_damaged_or_foreign_robot_file_is_refused(tmp_path, capsys):
    cfg = yaml.safe_load(GEN3_FILE.read_text())
    cfg["frction"] = cfg.pop("friction")
    path = tmp_path / "gen3_edit.yaml"
    path.write_text(yaml.safe_dump(cfg))
    rc, err = _identify(tmp_path, capsys, "--config", str(path))
    assert rc == 2 and str(path) in err and "unknown key 'frction'" in err, err
    calib = write_calibration(tmp_path / "calib.yaml", _calibration_doc())
    rc, err = _identify(tmp_path, capsys, "--config", str(calib))
    assert rc == 2 and str(calib) in err and "calibration overlay" in err, err


def test_a_foreign_import_mapping_is_refused(tmp_path, capsys):
    calib = write_calibration(tmp_path / "calib.yaml", _calibration_doc())
    rc = import_main(["--mapping", str(calib), "--out", str(tmp_path / "bag")])
    err = capsys.readouterr().err
    assert rc == 2 and str(calib) in err and "unknown key 'sysid_calibration'" in err, err
    assert not (tmp_path / "bag").exists()


@pytest.mark.parametrize("arg, named", [("controller_mode:=fast", "controller_mode: 'fast'"),
                                        ("record:=maybe", "record: 'maybe'")])
def test_a_launch_argument_outside_its_choices_is_refused(capsys, arg, named):
    assert launch_main(["sim.launch.yaml", arg, "--print"]) == 2
    err = capsys.readouterr().err
    assert "sim.launch.yaml" in err and named in err and "is not one of" in err, err
    assert launch_main(["sim.launch.yaml", "controller_mode:=pid", "--print"]) == 0


VALUES = st.one_of(st.none(), st.booleans(), st.text(max_size=3), st.floats(allow_nan=True),
                   st.lists(st.floats(-2.0, 2.0), min_size=9, max_size=11),
                   st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                                      st.text(max_size=2)), min_size=10, max_size=10))


@settings(max_examples=20, deadline=None)
@given(doc=st.dictionaries(st.sampled_from(["lower", "upper", "description", "prior", "mass"]),
                           VALUES, max_size=4),
       base=st.booleans())
def test_a_prior_file_is_used_whole_or_refused_naming_it(doc, base):
    """Any prior file: either the box is exactly the file's bounds, or an error names the
    file — never a box from part of it."""
    import tempfile

    from sysid_ros._src.identification import IdentificationConfigError, load_prior

    if base:
        doc = {**PRIOR, **doc}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "prior.yaml"
        path.write_text(yaml.safe_dump(doc))
        try:
            _, box = load_prior(str(path))
        except IdentificationConfigError as err:
            assert str(path) in str(err)
            return
    assert set(doc) <= {"lower", "upper", "description"}
    assert box.lower.tolist() == doc["lower"] and box.upper.tolist() == doc["upper"]


def test_a_robot_file_read_again_is_a_fresh_copy_and_an_edit_is_seen(tmp_path):
    """Robot files are parsed once per process (batches read one per recording): the robot
    loaded again equals one loaded from the file alone, a caller editing its copy changes no
    later load, and an edited file is read afresh."""
    original = Path(load_robot("gen3").config_path)
    first = load_robot("gen3")
    first.config["limits"]["edited"] = True
    first.model.inertias[first.ee_joint_id].mass += 1.0
    again = load_robot("gen3")
    assert "edited" not in again.config["limits"]
    assert again.theta_e()[0] == pytest.approx(first.theta_e()[0] - 1.0)
    doc = yaml.safe_load(original.read_text())
    assert again.config == doc
    copy_path = tmp_path / "gen3.yaml"
    copy_path.write_text(original.read_text())
    assert load_robot("gen3", copy_path).config == doc
    doc["limits"]["torque_Nm"] = [1.0] * len(doc["joints"])
    copy_path.write_text(yaml.safe_dump(doc))
    assert list(load_robot("gen3", copy_path).limits.tau_max) == [1.0] * len(doc["joints"])
