"""Robot facts and rigid-body regressors (no rclpy): ``load_robot`` reads a robot file
(config/<name>.yaml + its URDF, optionally a calibration overlay) into a :class:`Robot`;
:class:`Regressors` gives the momentum/inverse-dynamics regressors linear in θ
(docs/theory/models.md#parameter-conventions-and-the-dynamics-core);
:class:`ParameterBox` is the one box-of-named-parameters type every package uses."""
from sysid_ros._src.model.box import PARAM_UNITS, ParameterBox, theta_e_box
from sysid_ros._src.model.errors import BoxError, ModelError, RobotConfigError, UnknownRobotError, UnsupportedJointError
from sysid_ros._src.model.regressors import Regressors
from sysid_ros._src.model.robots import (CollisionSphere, FrictionModel, JointLimits, Robot, available_robots,
                                    load_robot)

__all__ = ["BoxError", "CollisionSphere", "FrictionModel", "JointLimits", "ModelError",
           "PARAM_UNITS", "ParameterBox", "Regressors", "Robot", "RobotConfigError",
           "UnknownRobotError", "UnsupportedJointError", "available_robots", "load_robot",
           "theta_e_box"]
