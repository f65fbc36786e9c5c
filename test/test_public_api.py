"""The public surface of ``sysid_ros``: exactly the names below (a change here is an API change,
made on purpose), each one importable and defined where the package says, and ``import
sysid_ros`` loads none of the machinery until a name is used."""
from __future__ import annotations

import subprocess
import sys

import sysid_ros

PUBLIC = [
    "CalibrationOptions", "CalibrationResult", "ControllerRuntime", "ExcitingPlanner",
    "HardwareProfile", "IdentificationConfig", "IdentificationResult", "IdentifierRuntime",
    "JointStateSeries", "OnlineIdentifier", "ParameterBox", "PlannerConfig", "Recording", "Robot",
    "apply_calibration", "calibrate", "identify", "load_identification_config", "load_robot",
    "read_joint_states", "record_hardware_like", "theta_e_box", "write_joint_state_arrays",
]


def test_the_public_names_are_these_and_resolve():
    assert sysid_ros.__all__ == sorted(PUBLIC) == sorted(sysid_ros._WHERE)
    assert len(PUBLIC) <= 25
    for name in PUBLIC:
        obj = getattr(sysid_ros, name)
        assert obj.__name__ == name and obj.__module__.startswith("sysid_ros."), name


def test_an_unknown_name_is_an_attribute_error():
    try:
        sysid_ros.identify_everything  # noqa: B018
    except AttributeError as err:
        assert "identify_everything" in str(err)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_the_package_loads_no_machinery():
    code = ("import sys, sysid_ros; "
            "print(sorted(m for m in sys.modules if m.startswith('sysid_ros.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out
