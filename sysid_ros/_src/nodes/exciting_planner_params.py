"""The ``exciting_planner`` node's parameter table (docs/reference/parameters.md), without ROS:
the node and the in-process demo graph (``sysid_ros._src.demo.pipeline``) read the same defaults."""
from __future__ import annotations

from sysid_ros._src.nodes.params import Param
from sysid_ros._src.param_table import defaults_of
from sysid_ros._src.planning.receding import RecedingHorizon
from sysid_ros._src.planning.nominal import OBJECTIVES

__all__ = ["PARAMETERS"]

_HORIZON = defaults_of(RecedingHorizon)     # the library's defaults: the node's too
PARAMETERS = (
    Param("robot", "string", "registry name (gen3, z1) or robot-facts file path", "gen3"),
    Param("robot_config", "string", "robot-facts file overriding the named robot's"),
    Param("calibration", "string", "sysid-calibrate result (calib.yaml): calibrated friction and "
          "link facts"),
    Param("obstacles", "string", "absent: the robot file's planner.obstacles; 'none'; or a YAML "
          "file of boxes {name, center, half_extents, rpy}"),
    Param("t_f", "double", "plan duration (absent: planner.t_f)", None, (1e-3, 60.0), unit="s"),
    Param("t_p", "double", "planning period, ≤ t_f (absent: planner.t_p)", None, (1e-3, 60.0),
          unit="s"),
    Param("max_solve_time", "double", "solve budget per cycle, < t_p (absent: "
          "planner.max_solve_time)", None, (1e-3, 60.0), unit="s"),
    Param("objective", "string", "what the NLP minimises: cond (log cond(Y_e)), box (predicted "
          "variances of mass and first moments), staged (first moments while the CoM is "
          "uncertain by more than stage_com_width, then cond), radius (mass variance of the "
          "rows weighted by their torque radius) or width (the mass width of the box those "
          "rows leave, by LP); absent: planner.objective", None,
          choices=OBJECTIVES),
    Param("stage_com_width", "double", "staged: CoM uncertainty max_i w(m·c_i)/m_lower above "
          "which the first moments are the objective (absent: planner.stage_com_width)", None,
          (1e-6, 10.0), unit="m"),
    Param("max_trajectories", "int", "stop after this many published plans (0: no limit)", _HORIZON["max_trajectories"],
          (0, 1_000_000)),
    Param("shrink_tolerance", "double", "relative shrink of the bounds' total width that counts "
          "as progress", _HORIZON["shrink_tolerance"], (0.0, 1.0)),
    Param("stall_cycles", "int", "stop after this many published cycles without progress "
          "(0: never)", _HORIZON["stall_cycles"], (0, 1_000_000)),
)
