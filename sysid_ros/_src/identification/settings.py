"""The identification settings a command line or a node parameter may override: each defined
once here (name, type, range, unit, meaning), without a default: absent means the robot file's
``identification:`` value, else the config's default (:data:`.config.SECTION_DEFAULTS`).
``sysid-identify``'s options and the ``identifier`` node's parameters are made from these."""
from __future__ import annotations

from sysid_ros._src.identification.options import GAP_RULE, VELOCITY_NOISE_SCOPES
from sysid_ros._src.param_table import Param

__all__ = ["OVERRIDE_SETTINGS"]

_S = (1e-4, 3600.0)       # a duration in seconds
OVERRIDE_SETTINGS = (
    Param("prior", "string", "prior box B0: a name of the robot file's identification.priors "
          "(gen3: 2f85, none) or a YAML file"),
    Param("torque_noise_abs", "double|double[]", "torque-noise bound: one value for every joint "
          "or one per joint", None, (0.0, 1e4), unit="N·m"),
    Param("torque_noise_rel", "double", "torque-noise bound, fraction of |τ|", None, (0.0, 0.99)),
    Param("robot_uncertainty_rel", "double", "θ_r box radius, fraction of |nominal| per "
          "parameter", None, (0.0, 10.0)),
    Param("window_s", "double", "momentum window length", None, _S, unit="s"),
    Param("stride_s", "double", "time between window starts", None, _S, unit="s"),
    Param("max_sample_gap", "double", f"samples further apart split the windows; 0: {GAP_RULE}",
          None, (0.0, 3600.0), unit="s"),
    Param("window", "int", "window length in samples (overrides window_s)", None, (2, 10**7)),
    Param("stride", "int", "stride in samples (overrides stride_s)", None, (1, 10**7)),
    Param("velocity_noise_abs", "double|double[]", "bound of the reported joint velocities' "
          "error: one value for every joint or one per joint (0: exact)", None,
          (0.0, 10.0), unit="rad/s"),
    Param("velocity_noise_scope", "string", "what of the velocity error the rows state: all, or "
          "payload (only the payload's momentum; needs a calibration made from the same "
          "velocities, whose bound absorbed the rest)", None, choices=VELOCITY_NOISE_SCOPES),
)
