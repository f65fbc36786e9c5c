"""Calibration of the robot facts the payload identifier rests on (no rclpy).

From recordings of the robot moving without payload (or with a known one), measure per joint a
bound on the torque error the identifier must allow and boxes of the friction/armature/offset
coefficients [Fc, Fv, Ia, β] (and of body parameters where the data tighten them), plus point
estimates, and write them as the calibration overlay ``calib.yaml``
(:mod:`sysid_ros.model.calibration`). See docs/calibration.md.
"""
from __future__ import annotations

from sysid_ros.calibration.calibrate import CalibrationOptions, CalibrationResult, calibrate
from sysid_ros.calibration.data import Recording, read_recording
from sysid_ros.calibration.errors import CalibrationError, CalibrationInconsistentError, \
    CalibrationInputError

__all__ = ["CalibrationError", "CalibrationInconsistentError", "CalibrationInputError",
           "CalibrationOptions", "CalibrationResult", "Recording", "calibrate", "read_recording"]
