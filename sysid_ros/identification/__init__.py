"""Payload identification: momentum-regressor windows, sound interval boxes (LP / LP+LMI) with
friction and torque offsets as shared unknowns, diagnostics that say why, the seed paper's
sensitivity bound for comparison, and a physically consistent point estimate.

No rclpy here; the ``identifier`` node and the ``sysid-identify`` CLI are thin wrappers.
"""
from __future__ import annotations

from sysid_ros.identification.bounds import BoxResult, chebyshev_centre, polytope_box
from sysid_ros.identification.config import IdentificationConfig, SamplingPlan, \
    load_identification_config, load_prior, payload_prior_box
from sysid_ros.identification.diagnostics import Consistency, DataSummary, box_warnings, \
    consistency
from sysid_ros.identification.errors import IdentificationConfigError, IdentificationError, \
    SampleError, UnsupportedRobotError
from sysid_ros.identification.identifier import METHODS, IdentificationResult, OnlineIdentifier, \
    identify
from sysid_ros.identification.problem import PayloadProblem, PayloadRows
from sysid_ros.identification.windows import MomentumRows, MomentumWindows

__all__ = [
    "BoxResult", "Consistency", "DataSummary", "IdentificationConfig",
    "IdentificationConfigError", "IdentificationError", "IdentificationResult", "METHODS",
    "MomentumRows", "MomentumWindows", "OnlineIdentifier", "PayloadProblem", "PayloadRows",
    "SampleError", "SamplingPlan", "UnsupportedRobotError", "box_warnings", "chebyshev_centre",
    "consistency", "identify", "load_identification_config", "load_prior", "payload_prior_box",
    "polytope_box",
]
