"""Payload identification: momentum-regressor windows, sound interval boxes (LP / LP+LMI),
the seed paper's sensitivity bound for comparison, and a physically consistent point estimate.

No rclpy here; the ``identifier`` node and the ``sysid-identify`` CLI are thin wrappers.
"""
from __future__ import annotations

from sysid_ros.identification.bounds import BoxResult, chebyshev_center, polytope_box
from sysid_ros.identification.config import IdentificationConfig, load_identification_config, \
    payload_prior_box
from sysid_ros.identification.errors import IdentificationConfigError, IdentificationError, \
    SampleError, UnsupportedRobotError
from sysid_ros.identification.identifier import METHODS, IdentificationResult, OnlineIdentifier, \
    identify
from sysid_ros.identification.windows import MomentumWindows, WindowRows

__all__ = [
    "BoxResult", "IdentificationConfig", "IdentificationConfigError", "IdentificationError",
    "IdentificationResult", "METHODS", "MomentumWindows", "OnlineIdentifier", "SampleError",
    "UnsupportedRobotError", "WindowRows", "chebyshev_center", "identify",
    "load_identification_config", "payload_prior_box", "polytope_box",
]
