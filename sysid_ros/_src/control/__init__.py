"""Robust passivity controller (ARMOUR-style), trajectories, and the tracking-error bound it
guarantees. No rclpy here: the node lives in ``sysid_ros._src.nodes.robust_controller``."""
from sysid_ros._src.control.tracking_bounds import (LowerMassModel, MassMatrixBounds, TrackingErrorBound,
                                      lower_mass_model, mass_matrix_eigen_bounds,
                                      tracking_error_bound)
from sysid_ros._src.control.controller import (MODES, ControllerGains, ControlOutput, PidGains,
                                          RobustController, TorqueInterval,
                                          gains_from_config)
from sysid_ros._src.control.errors import (BoundsError, ControlError, ControllerConfigError,
                                      TrajectoryError)
from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.control.trajectory import JointTrajectoryArrays, Reference, TrajectoryQueue
from sysid_ros._src.model.box import ParameterBox, theta_e_box

__all__ = ["LowerMassModel", "MassMatrixBounds", "TrackingErrorBound", "lower_mass_model",
           "mass_matrix_eigen_bounds", "tracking_error_bound", "MODES", "ControllerGains",
           "ControlOutput", "PidGains", "RobustController", "TorqueInterval",
           "gains_from_config", "BoundsError", "ControlError", "ControllerConfigError",
           "TrajectoryError", "prior_box", "JointTrajectoryArrays", "Reference", "TrajectoryQueue",
           "ParameterBox", "theta_e_box"]
