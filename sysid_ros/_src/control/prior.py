"""The prior θ_e box the controller uses before the identifier's first bounds ("conservative").

It is the identifier's prior B₀ (``identification.prior`` in the robot facts file: the name of
one of ``identification.priors`` or an inline box, resolved by the identifier's own
:func:`~sysid_ros._src.identification.config.load_prior`), so both nodes start from the same
assumption; a ``controller.prior`` section (a box) overrides it. The nominal
is the box centre (no better point is known before identification). A payload-class prior
(every mass above the unloaded end-effector body's, e.g. the Z1's ``dumbbell_1kg``) need not
contain the unloaded body; any other prior must.
"""
from __future__ import annotations

import numpy as np

from sysid_ros._src.control.errors import BoundsError
from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.errors import BoxError
from sysid_ros._src.model.robots import Robot

__all__ = ["prior_box"]


def prior_box(robot: Robot) -> ParameterBox:
    """θ_e prior box of ``robot``; raises ``BoundsError`` naming the missing/malformed field."""
    cfg = robot.config
    for key in ("controller", "identification"):
        section = (cfg.get(key) or {}).get("prior")
        if section is not None:
            break
    else:
        raise BoundsError(f"{robot.config_path}: no 'controller.prior' or 'identification.prior' "
                          "box (lower/upper, 10 values each) for the θ_e prior")
    if isinstance(section, str):
        from sysid_ros._src.identification.config import load_prior
        from sysid_ros._src.identification.errors import IdentificationConfigError
        try:
            _, box = load_prior(section, (cfg.get(key) or {}).get("priors"),
                                frame=robot.ee_joint)
        except IdentificationConfigError as exc:
            raise BoundsError(f"{robot.config_path}: {exc}") from exc
    else:
        try:
            lower = np.asarray(section["lower"], float)
            upper = np.asarray(section["upper"], float)
        except (KeyError, TypeError, ValueError) as exc:
            raise BoundsError(f"{robot.config_path}: {key}.prior needs numeric 'lower' and "
                              f"'upper' ({exc})") from exc
        try:
            box = theta_e_box(lower, upper, frame=robot.ee_joint)
        except BoxError as exc:
            raise BoundsError(f"{robot.config_path}: {key}.prior: {exc}") from exc
    # a prior either admits the unloaded body (any payload, possibly none) or describes a
    # payload class whose every mass lies above it (e.g. a catalogued tool); a box that admits
    # the bare mass but not the bare body is in the wrong frame or order
    unloaded = robot.theta_e()
    loaded_class = box.lower[0] > unloaded[0]
    if not loaded_class and not box.contains(unloaded):
        raise BoundsError(f"{robot.config_path}: {key}.prior does not contain the nominal "
                          "unloaded end-effector body")
    return box
