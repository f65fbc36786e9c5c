"""Calibration of the robot facts the payload identifier rests on (no rclpy).

From recordings of the robot moving without payload (or with a known one), measure per joint a
bound on the torque error the identifier must allow and boxes of the friction/armature/offset
coefficients [Fc, Fv, Ia, β] (and of body parameters where the data tighten them), plus point
estimates, and write them as the calibration overlay ``calib.yaml``
(:mod:`sysid_ros._src.model.calibration_overlay`). Velocities can be estimated from positions first
(:mod:`.state`). See docs/guide/calibrate.md; the CLI is ``sysid-calibrate`` (:mod:`.calibrate_cli`).
"""
from __future__ import annotations

from sysid_ros._src.calibration.calibrate import CalibrationOptions, CalibrationResult, calibrate
from sysid_ros._src.calibration.data import Recording, read_recording
from sysid_ros._src.calibration.document import calibration_document, summary_json, \
    write_calibration
from sysid_ros._src.calibration.errors import CalibrationError, CalibrationInconsistentError, \
    CalibrationInputError
from sysid_ros._src.calibration.state import StateEstimate, butterworth_derivative, encoder_sigma, \
    estimate_state, rts_smoother
from sysid_ros._src.calibration.validate import Validation, validate

__all__ = ["CalibrationError", "CalibrationInconsistentError", "CalibrationInputError",
           "CalibrationOptions", "CalibrationResult", "Recording", "StateEstimate",
           "Validation", "butterworth_derivative", "calibrate", "calibration_document",
           "encoder_sigma", "estimate_state", "read_recording", "rts_smoother", "summary_json",
           "validate", "write_calibration"]
