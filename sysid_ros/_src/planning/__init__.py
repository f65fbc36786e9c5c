"""Safe exciting-trajectory planning (docs/theory/planner.md): degree-5 trajectories linear in k, sound
reachable sets over time sub-intervals (interval / affine arithmetic), and a receding-horizon
planner that only ever returns a k it has verified. No rclpy here."""
from sysid_ros._src.planning.errors import (PlannerConfigError, PlanningError, PlanRequestError,
                                       UnplannableRobotError)
from sysid_ros._src.planning.obstacles import BoxObstacle, obstacles_from_config
from sysid_ros._src.planning.planner import ExcitingPlanner, PlannerConfig, PlanResult, controller_model
from sysid_ros._src.planning.reachability import ControllerModel, Reachability, Verification
from sysid_ros._src.planning.trajectory import QuinticTrajectory

__all__ = ["BoxObstacle", "ControllerModel", "ExcitingPlanner", "PlanResult", "PlannerConfig",
           "PlannerConfigError", "PlanningError", "QuinticTrajectory", "Reachability",
           "PlanRequestError", "UnplannableRobotError", "Verification", "controller_model",
           "obstacles_from_config"]
