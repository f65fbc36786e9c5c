"""A trunk IMU's datasheet error model for hardware-like data (no ROS import).

:class:`ImuProfile` (the robot file's ``simulation.hardware_like.imu``) corrupts the trunk's exact
angular velocity and specific force, per axis, with

- a constant bias drawn uniform in ±``gyro_bias`` / ±``accel_bias`` per recording: a MEMS
  part's zero-rate / zero-g offset (the datasheet's bound; in-run drift over a recording of
  seconds is far below it);
- white noise of the datasheet's density times √bandwidth (the filter setting the robot
  runs), Gaussian, truncated at ``noise_sigmas`` standard deviations — the per-sample bound the
  identifier is given (:meth:`ImuProfile.identifier_bounds`); a real part exceeds 4σ on about
  6·10⁻⁵ of its samples per axis, which that bound does not cover.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from sysid_ros._src.model.robots import Robot
from sysid_ros._src.model.simulation_section import simulation_section
from sysid_ros._src.simulation.errors import SimConfigError

__all__ = ["ImuProfile", "imu_settings"]


@dataclass(frozen=True)
class ImuProfile:
    """A trunk IMU's error model (module docstring); SI units per axis.

    Attributes:
        gyro_bias: bound of the gyro's constant zero-rate offset (rad/s).
        gyro_noise_density: gyro rate noise density (rad/s/√Hz).
        gyro_bandwidth_hz: the gyro's filter bandwidth (Hz).
        accel_bias: bound of the accelerometer's constant zero-g offset (m/s²).
        accel_noise_density: accelerometer noise density (m/s²/√Hz).
        accel_bandwidth_hz: the accelerometer's filter bandwidth (Hz).
        noise_sigmas: the Gaussian noise is truncated at this many standard deviations.
    """

    gyro_bias: float
    gyro_noise_density: float
    gyro_bandwidth_hz: float
    accel_bias: float
    accel_noise_density: float
    accel_bandwidth_hz: float
    noise_sigmas: float = 4.0

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            try:
                x = float(v)
            except (TypeError, ValueError):
                raise SimConfigError(f"ImuProfile.{f.name} must be a number, got {v!r}") from None
            positive = f.name.endswith("_hz") or f.name == "noise_sigmas"
            if not (math.isfinite(x) and (x > 0 if positive else x >= 0)):
                raise SimConfigError(f"ImuProfile.{f.name} must be finite and "
                                     f"{'> 0' if positive else '>= 0'}, got {v!r}")
            object.__setattr__(self, f.name, x)

    @property
    def gyro_sigma(self) -> float:
        """Standard deviation of the gyro noise per sample (rad/s)."""
        return self.gyro_noise_density * math.sqrt(self.gyro_bandwidth_hz)

    @property
    def accel_sigma(self) -> float:
        """Standard deviation of the accelerometer noise per sample (m/s²)."""
        return self.accel_noise_density * math.sqrt(self.accel_bandwidth_hz)

    def identifier_bounds(self) -> dict[str, float]:
        """The identifier's ``imu`` error bounds for these readings: the bias bounds and the
        truncation of the noise (``gyro_bias_abs``, ``gyro_noise_abs``, ``accel_bias_abs``,
        ``accel_noise_abs``)."""
        return {"gyro_bias_abs": self.gyro_bias,
                "gyro_noise_abs": self.noise_sigmas * self.gyro_sigma,
                "accel_bias_abs": self.accel_bias,
                "accel_noise_abs": self.noise_sigmas * self.accel_sigma}

    @classmethod
    def from_mapping(cls, values: Mapping[str, object], where: str = "imu profile"
                     ) -> ImuProfile:
        if not isinstance(values, Mapping):
            raise SimConfigError(f"{where} must be a mapping, got {type(values).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        missing = sorted(k for k in known - set(values) if k != "noise_sigmas")
        if unknown or missing:
            raise SimConfigError(f"{where}: unknown keys {unknown}, missing keys {missing}; "
                                 f"known: {sorted(known)}")
        try:
            return cls(**values)  # type: ignore[arg-type]
        except SimConfigError as err:
            raise SimConfigError(f"{where}: {err}") from None

    @classmethod
    def from_robot(cls, robot: Robot) -> ImuProfile:
        """The robot file's ``simulation.hardware_like.imu`` (SimConfigError without one)."""
        section = simulation_section(robot).hardware_like
        where = f"{robot.config_path}: simulation.hardware_like.imu"
        if "imu" not in section:
            raise SimConfigError(f"{where}: missing (the trunk IMU's datasheet error model)")
        return cls.from_mapping(section["imu"], where)

    def draw_bias(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """(gyro, accel) constant biases of one recording, uniform in ± the bounds per axis."""
        return (self.gyro_bias * rng.uniform(-1.0, 1.0, 3),
                self.accel_bias * rng.uniform(-1.0, 1.0, 3))

    def noise(self, rng: np.random.Generator, n: int, sigma: float) -> np.ndarray:
        """(n, 3) Gaussian noise of standard deviation ``sigma`` truncated at ``noise_sigmas``
        of it (the tail is redrawn)."""
        z = rng.standard_normal((n, 3))
        out = np.abs(z) > self.noise_sigmas
        while out.any():
            z[out] = rng.standard_normal(int(out.sum()))
            out = np.abs(z) > self.noise_sigmas
        return sigma * z


def imu_settings(robot: Robot) -> dict[str, Any]:
    """The identifier's ``imu`` mapping for this robot's hardware-like IMU: the robot file's
    ``identification.imu`` rate bounds and gap with the datasheet model's error bounds."""
    base = dict((robot.config.get("identification", {}) or {}).get("imu", {}) or {})
    return base | ImuProfile.from_robot(robot).identifier_bounds()
