"""Where the friction law's constant offset β acts, for the controller and the planner
(``controller.torque_offset`` in the robot file).

The calibration and the identifier see β in the torque *reading*, τ̂ = dynamics + β. A torque
the arm needs (a cable's pull, a drive's bias) and an offset of the reading alone (a current
or torque sensor's zero) give the same readings, so data cannot tell them apart. The
controller commands the motor torque: its law and the planner's enclosure need the arm's
share only. The robot file states which it is:

- ``arm`` (default): β acts on the arm; the controller's box is the friction box as given;
- ``either``: the arm's share is anywhere between none and all of it (β_arm = λ·β,
  λ ∈ [0, 1]); the controller's β box is the hull of the given box and 0, its nominal at the
  hull's centre (the smallest radius).

With ``arm`` on a robot whose offset is the reading's (the hardware-like simulator's: its β
never acts on the arm), a calibrated β box that excludes 0 breaks the law's premise "θ_f in
its box" by the distance from 0 to the box: the law then pushes every joint by the calibrated
offset it does not need (:func:`offset_premise_violations` names them).
"""
from __future__ import annotations

import dataclasses

import numpy as np

from sysid_ros._src.control.errors import ControllerConfigError
from sysid_ros._src.model.robots import FrictionModel, Robot

__all__ = ["TORQUE_OFFSETS", "controller_friction", "friction_premise_violations", "torque_offset"]

TORQUE_OFFSETS = ("arm", "either")
_BETA = 3       # column of β in [Fc, Fv, Ia, β]
_COLUMNS = ("Fc", "Fv", "Ia", "beta")


def torque_offset(robot: Robot) -> str:
    """``controller.torque_offset`` of the robot file (module doc), checked."""
    value = str((robot.config.get("controller") or {}).get("torque_offset", "arm"))
    if value not in TORQUE_OFFSETS:
        raise ControllerConfigError(f"{robot.config_path}: controller.torque_offset must be one of "
                                    f"{TORQUE_OFFSETS}, got {value!r}")
    return value


def controller_friction(robot: Robot) -> FrictionModel:
    """The friction box the controller and the planner assume acts on the arm (module doc)."""
    fr = robot.friction
    if torque_offset(robot) == "arm":
        return fr
    lower, upper, nominal = fr.lower.copy(), fr.upper.copy(), fr.nominal.copy()
    lower[:, _BETA] = np.minimum(lower[:, _BETA], 0.0)
    upper[:, _BETA] = np.maximum(upper[:, _BETA], 0.0)
    nominal[:, _BETA] = 0.5 * (lower[:, _BETA] + upper[:, _BETA])
    return dataclasses.replace(fr, nominal=nominal, lower=lower, upper=upper)


def friction_premise_violations(robot: Robot, arm_friction: np.ndarray) -> list[str]:
    """Where the friction acting on the arm, (nj, 4) [Fc, Fv, Ia, β_arm] (a simulator's truth),
    lies outside the controller's box, each with its distance; [] when inside."""
    fr = controller_friction(robot)
    truth = np.asarray(arm_friction, float)
    out = []
    for j, c in zip(*np.nonzero((truth < fr.lower - 1e-9) | (truth > fr.upper + 1e-9))):
        lo, hi, x = fr.lower[j, c], fr.upper[j, c], truth[j, c]
        out.append(f"{robot.joint_names[j]} {_COLUMNS[c]} {x:.3g} outside the controller's "
                   f"[{lo:.3g}, {hi:.3g}] by {max(lo - x, x - hi):.3g}")
    return out
