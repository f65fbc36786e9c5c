"""sysid_ros: sound interval bounds on a robot payload's inertial parameters, the calibration
they rest on, and the safe exciting planner and robust controller that use them.

The public API is the names below; everything else is machinery whose layout may change. They
load on first use, so ``import sysid_ros`` (and every command) stays quick::

    import sysid_ros as sr
    robot = sr.load_robot("gen3")
    config = sr.load_identification_config(robot)
    result = sr.identify(robot, config, t, q, dq, tau)      # result.box: a ParameterBox
"""
from __future__ import annotations

import importlib
from typing import Any

#: public name → the module that defines it
_WHERE = {
    # robots and parameter boxes
    "Robot": "sysid_ros.model.robots",
    "load_robot": "sysid_ros.model.robots",
    "apply_calibration": "sysid_ros.model.calibration_overlay",
    "ParameterBox": "sysid_ros.model.box",
    "theta_e_box": "sysid_ros.model.box",
    # recordings
    "JointStateSeries": "sysid_ros.bagio.reader",
    "read_joint_states": "sysid_ros.bagio.reader",
    "write_joint_state_arrays": "sysid_ros.bagio.writer",
    # identification, offline and online
    "IdentificationConfig": "sysid_ros.identification.config",
    "load_identification_config": "sysid_ros.identification.config",
    "IdentificationResult": "sysid_ros.identification.identifier",
    "identify": "sysid_ros.identification.identifier",
    "OnlineIdentifier": "sysid_ros.identification.identifier",
    "IdentifierRuntime": "sysid_ros.identification.runtime",
    # calibration
    "CalibrationOptions": "sysid_ros.calibration.calibrate",
    "CalibrationResult": "sysid_ros.calibration.calibrate",
    "Recording": "sysid_ros.calibration.data",
    "calibrate": "sysid_ros.calibration.calibrate",
    # planner and controller runtimes
    "ExcitingPlanner": "sysid_ros.planning.planner",
    "PlannerConfig": "sysid_ros.planning.planner",
    "ControllerRuntime": "sysid_ros.control.runtime",
    # simulation
    "HardwareProfile": "sysid_ros.simulation.hardware_like",
    "record_hardware_like": "sysid_ros.simulation.hardware_like",
}

__all__ = [
    "CalibrationOptions", "CalibrationResult", "ControllerRuntime", "ExcitingPlanner",
    "HardwareProfile", "IdentificationConfig", "IdentificationResult", "IdentifierRuntime",
    "JointStateSeries", "OnlineIdentifier", "ParameterBox", "PlannerConfig", "Recording", "Robot",
    "apply_calibration", "calibrate", "identify", "load_identification_config", "load_robot",
    "read_joint_states", "record_hardware_like", "theta_e_box", "write_joint_state_arrays",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'sysid_ros' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
