"""The robot file's ``simulation:`` section, read in one place with its defaults.

The simulator, the sim node, the identifier's trunk-IMU mount, the legs' contract and the
calibration's state estimator all read this section; :func:`simulation_section` is where its
keys and their defaults are defined. Each user checks the values against what it needs (a
per-joint length, a range) and says which key is wrong.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sysid_ros._src.model.errors import RobotConfigError
from sysid_ros._src.model.robots import Robot

__all__ = ["SimulationSection", "home_posture", "simulation_section"]


def _array(value: Any) -> np.ndarray | None:
    return None if value is None else np.asarray(value, float)


@dataclass(frozen=True)
class SimulationSection:
    """Attributes (``None``: not given, the user's fallback applies):
        physics_dt: MuJoCo step (s).
        home: (nj,) reset posture; None: the robot's neutral configuration.
        encoder_resolution_deg: one count per joint (or one for all); None: exact positions.
        hold_kp, hold_kd: the simulated robot's own joint PD gains.
        leg_standing_posture: the joints that take no command (floating base).
        payload_grip_point, payload_grip_axis: where and along which axis the end effector
            holds a dumbbell's handle (its frame).
        contact_links: the bodies that collide (with the ground).
        imu_body: the body carrying the trunk IMU; "" = the root body.
        hardware_like: the ``hardware_like`` subsection (profile, truth, imu), {} if absent.
    """

    physics_dt: float = 2.5e-4
    home: np.ndarray | None = None
    encoder_resolution_deg: np.ndarray | None = None
    hold_kp: np.ndarray | None = None
    hold_kd: np.ndarray | None = None
    leg_standing_posture: np.ndarray | None = None
    payload_grip_point: tuple[float, ...] = (0.0, 0.0, 0.0)
    payload_grip_axis: tuple[float, ...] = (0.0, 1.0, 0.0)
    contact_links: tuple[str, ...] = ()
    imu_body: str = ""
    hardware_like: Mapping[str, Any] = field(default_factory=dict)


def simulation_section(robot: Robot) -> SimulationSection:
    """The ``simulation:`` section of ``robot``'s file (defaults where a key is absent);
    ``leg_standing_posture`` may also sit at the file's top level."""
    sec = robot.config.get("simulation") or {}
    grip = sec.get("payload_grip") or {}
    default = SimulationSection()
    return SimulationSection(
        physics_dt=float(sec.get("physics_dt", default.physics_dt)),
        home=_array(sec.get("home")),
        encoder_resolution_deg=_array(sec.get("encoder_resolution_deg")),
        hold_kp=_array(sec.get("hold_kp")),
        hold_kd=_array(sec.get("hold_kd")),
        leg_standing_posture=_array(sec.get("leg_standing_posture",
                                            robot.config.get("leg_standing_posture"))),
        payload_grip_point=tuple(grip.get("point", default.payload_grip_point)),
        payload_grip_axis=tuple(grip.get("handle_axis", default.payload_grip_axis)),
        contact_links=tuple(str(b) for b in sec.get("contact_links") or ()),
        imu_body=str(sec.get("imu_body") or default.imu_body),
        hardware_like=dict(sec.get("hardware_like") or {}),
    )


def home_posture(robot: Robot) -> np.ndarray:
    """(nj,) where the simulated robot starts and returns to: ``simulation.home``, else the
    robot's neutral configuration."""
    home = simulation_section(robot).home
    out = home.copy() if home is not None else robot.neutral()[robot.q_index]
    if out.shape != (robot.nj,):
        raise RobotConfigError(f"{robot.config_path}: simulation.home needs {robot.nj} angles, "
                               f"got {out.size}")
    return out
