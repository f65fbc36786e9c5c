"""Payload identification: momentum-regressor windows, sound interval boxes (LP / LP+LMI) with
friction and torque offsets as shared unknowns, diagnostics that say why, the seed paper's
sensitivity bound for comparison, and a physically consistent point estimate.

No rclpy here; the ``identifier`` node and the ``sysid-identify`` CLI are thin wrappers. The
names below load on first use: importing a light module of this package (the command's parser,
its batch driver, the option values) loads no solver, robot model or bag reader.
"""
from __future__ import annotations

import importlib
from typing import Any

#: name → the module that defines it
_WHERE = {
    "BoxResult": "sysid_ros._src.identification.feasible_set",
    "chebyshev_centre": "sysid_ros._src.identification.feasible_set",
    "polytope_box": "sysid_ros._src.identification.feasible_set",
    "IdentificationConfig": "sysid_ros._src.identification.config",
    "SamplingPlan": "sysid_ros._src.identification.config",
    "load_identification_config": "sysid_ros._src.identification.config",
    "load_prior": "sysid_ros._src.identification.config",
    "payload_prior_box": "sysid_ros._src.identification.config",
    "Consistency": "sysid_ros._src.identification.diagnostics",
    "DataSummary": "sysid_ros._src.identification.diagnostics",
    "box_warnings": "sysid_ros._src.identification.diagnostics",
    "consistency": "sysid_ros._src.identification.diagnostics",
    "IdentificationConfigError": "sysid_ros._src.identification.errors",
    "IdentificationError": "sysid_ros._src.identification.errors",
    "SampleError": "sysid_ros._src.identification.errors",
    "UnsupportedRobotError": "sysid_ros._src.identification.errors",
    "METHODS": "sysid_ros._src.identification.options",
    "IdentificationResult": "sysid_ros._src.identification.payload_identifier",
    "OnlineIdentifier": "sysid_ros._src.identification.payload_identifier",
    "identify": "sysid_ros._src.identification.payload_identifier",
    "PayloadProblem": "sysid_ros._src.identification.problem",
    "PayloadRows": "sysid_ros._src.identification.problem",
    "MomentumRows": "sysid_ros._src.identification.windows",
    "MomentumWindows": "sysid_ros._src.identification.windows",
}

__all__ = [
    "BoxResult", "Consistency", "DataSummary", "IdentificationConfig",
    "IdentificationConfigError", "IdentificationError", "IdentificationResult", "METHODS",
    "MomentumRows", "MomentumWindows", "OnlineIdentifier", "PayloadProblem", "PayloadRows",
    "SampleError", "SamplingPlan", "UnsupportedRobotError", "box_warnings", "chebyshev_centre",
    "consistency", "identify", "load_identification_config", "load_prior", "payload_prior_box",
    "polytope_box",
]


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_WHERE[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
