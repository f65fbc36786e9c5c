"""sysid_ros: sound interval bounds on a robot payload's inertial parameters, the calibration
they rest on, and the safe exciting planner and robust controller that use them.

The public API is the names below; everything else lives in ``sysid_ros._src``, machinery whose
layout may change. They load on first use, so ``import sysid_ros`` (and every command) stays quick::

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
    "Robot": "sysid_ros._src.model.robots",
    "load_robot": "sysid_ros._src.model.robots",
    "apply_calibration": "sysid_ros._src.model.calibration_overlay",
    "ParameterBox": "sysid_ros._src.model.box",
    "theta_e_box": "sysid_ros._src.model.box",
    # recordings
    "JointStateSeries": "sysid_ros._src.bagio.reader",
    "read_joint_states": "sysid_ros._src.bagio.reader",
    "write_joint_state_arrays": "sysid_ros._src.bagio.writer",
    # identification, offline and online
    "IdentificationConfig": "sysid_ros._src.identification.config",
    "load_identification_config": "sysid_ros._src.identification.config",
    "IdentificationResult": "sysid_ros._src.identification.payload_identifier",
    "identify": "sysid_ros._src.identification.payload_identifier",
    "OnlineIdentifier": "sysid_ros._src.identification.payload_identifier",
    "IdentifierRuntime": "sysid_ros._src.identification.identifier_runtime",
    # calibration
    "CalibrationOptions": "sysid_ros._src.calibration.calibrate",
    "CalibrationResult": "sysid_ros._src.calibration.calibrate",
    "Recording": "sysid_ros._src.calibration.data",
    "calibrate": "sysid_ros._src.calibration.calibrate",
    # planner and controller runtimes
    "ExcitingPlanner": "sysid_ros._src.planning.planner",
    "PlannerConfig": "sysid_ros._src.planning.planner",
    "ControllerRuntime": "sysid_ros._src.control.controller_runtime",
    # simulation
    "HardwareProfile": "sysid_ros._src.simulation.hardware_like",
    "record_hardware_like": "sysid_ros._src.simulation.hardware_like",
    "dumbbell_for": "sysid_ros._src.simulation.payload",
}

__all__ = [
    "CalibrationOptions", "CalibrationResult", "ControllerRuntime", "ExcitingPlanner",
    "HardwareProfile", "IdentificationConfig", "IdentificationResult", "IdentifierRuntime",
    "JointStateSeries", "OnlineIdentifier", "ParameterBox", "PlannerConfig", "Recording", "Robot",
    "apply_calibration", "calibrate", "dumbbell_for", "identify", "load_identification_config",
    "load_robot", "read_joint_states", "record_hardware_like", "theta_e_box",
    "write_joint_state_arrays",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'sysid_ros' has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
