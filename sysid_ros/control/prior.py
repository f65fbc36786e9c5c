"""The prior θ_e box the controller uses before the identifier's first bounds ("conservative").

It is the identifier's prior B₀ (``identification.prior`` in the robot facts file: the name of
one of ``identification.priors`` or an inline box, resolved by the identifier's own
:func:`~sysid_ros.identification.config.load_prior`), so both nodes start from the same
assumption; a ``controller.prior`` section (a box) overrides it. The nominal
is the box centre (no better point is known before identification).
"""
from __future__ import annotations

import numpy as np

from sysid_ros.control.controller import ThetaBox
from sysid_ros.control.errors import BoundsError
from sysid_ros.model.robots import Robot

__all__ = ["prior_box"]


def prior_box(robot: Robot) -> ThetaBox:
    """θ_e prior box of ``robot``; raises ``BoundsError`` naming the missing/malformed field."""
    cfg = robot.config
    for key in ("controller", "identification"):
        section = (cfg.get(key) or {}).get("prior")
        if section is not None:
            break
    else:
        raise BoundsError(f"{robot.config_path}: no 'controller.prior' or 'identification.prior' "
                          "box (lower/upper, 10 values each) for the θ_e prior")
    try:
        if isinstance(section, str):
            from sysid_ros.identification.config import load_prior
            from sysid_ros.identification.errors import IdentificationConfigError
            try:
                _, lower, upper = load_prior(section, (cfg.get(key) or {}).get("priors"))
            except IdentificationConfigError as exc:
                raise BoundsError(f"{robot.config_path}: {exc}") from exc
        else:
            lower = np.asarray(section["lower"], float)
            upper = np.asarray(section["upper"], float)
    except (KeyError, TypeError, ValueError) as exc:
        raise BoundsError(f"{robot.config_path}: {key}.prior needs numeric 'lower' and 'upper' "
                          f"({exc})") from exc
    box = ThetaBox(lower, 0.5 * (lower + upper), upper)
    if not np.all((robot.theta_e() >= lower) & (robot.theta_e() <= upper)):
        raise BoundsError(f"{robot.config_path}: {key}.prior does not contain the nominal "
                          "unloaded end-effector body")
    return box
