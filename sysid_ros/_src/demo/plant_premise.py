"""The hardware-like simulator's arm against the robust controller's friction premise.

The law keeps V ≤ V_max only if the friction acting on the arm, [Fc, Fv, Ia, β_arm] per joint,
lies in the controller's box (:func:`sysid_ros._src.control.offset.controller_friction`). With
``--hardware-like`` the demo knows the drawn robot (``simulation.sim_truth`` of the run's facts
and ``--hardware-seed``, what the sim node simulates), so it checks that premise after the run,
as it checks the payload box against the truth. The simulator's offset β is its torque
*reading's* (:mod:`sysid_ros._src.simulation.hardware_like`): the arm's β is 0.
"""
from __future__ import annotations

from sysid_ros._src.control.offset import friction_premise_violations
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.simulation.truth import sim_truth

__all__ = ["simulated_friction_violations"]


def simulated_friction_violations(facts: Robot, controller_robot: Robot,
                                  hardware_seed: int) -> list[str]:
    """Where the arm the sim node draws from ``facts`` (uncalibrated) with ``hardware_seed``
    has friction outside ``controller_robot``'s box (its calibration); [] when inside."""
    arm = sim_truth(facts, hardware_seed).friction.copy()
    arm[:, 3] = 0.0          # the simulator's β shifts the reading only
    return friction_premise_violations(controller_robot, arm)
