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

#: name → the module of this package that defines it
_WHERE = {
    "BoxResult": "bounds", "chebyshev_centre": "bounds", "polytope_box": "bounds",
    "IdentificationConfig": "config", "SamplingPlan": "config",
    "load_identification_config": "config", "load_prior": "config",
    "payload_prior_box": "config",
    "Consistency": "diagnostics", "DataSummary": "diagnostics", "box_warnings": "diagnostics",
    "consistency": "diagnostics",
    "IdentificationConfigError": "errors", "IdentificationError": "errors",
    "SampleError": "errors", "UnsupportedRobotError": "errors",
    "METHODS": "options",
    "IdentificationResult": "identifier", "OnlineIdentifier": "identifier",
    "identify": "identifier",
    "PayloadProblem": "problem", "PayloadRows": "problem",
    "MomentumRows": "windows", "MomentumWindows": "windows",
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
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
