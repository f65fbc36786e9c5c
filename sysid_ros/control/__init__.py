"""Robust passivity controller (ARMOUR-style) and the tracking-error bound it guarantees."""
from sysid_ros.control.bounds import (MassMatrixBounds, TrackingErrorBound,
                                      mass_matrix_eigen_bounds, tracking_error_bound)
from sysid_ros.control.errors import (BoundsError, ControlError, ControllerConfigError,
                                      TrajectoryError)

__all__ = ["MassMatrixBounds", "TrackingErrorBound", "mass_matrix_eigen_bounds",
           "tracking_error_bound", "BoundsError", "ControlError", "ControllerConfigError",
           "TrajectoryError"]
