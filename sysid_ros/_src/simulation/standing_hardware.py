"""Hardware-like data of a standing floating-base robot (B1 + Z1): the joints as
:mod:`.hardware_like` publishes them and a trunk IMU with a datasheet's bias and noise.

The joint side is the fixed-base arms' hardware-like model applied to every joint of the
standing robot: a :class:`~sysid_ros._src.simulation.truth.HardwareTruth` drawn off the catalogue
(friction, armature, links, sensor offsets, optional reading gain) is what MuJoCo simulates (dry
friction as MuJoCo's ``frictionloss``, legs on real foot contacts), and
:class:`~sysid_ros._src.simulation.hardware_like.HardwareSensor` publishes it: ``rate_hz``, stamp
jitter, i.i.d. drops, quantised encoders, current-based torques (τ̂ = (τ_motor + β)/k + noise,
noise in ±(abs + rel·|τ|)), the profile's velocity field. The arm tracks a random sum of sines
(:func:`~sysid_ros._src.simulation.synthetic.standing_motion`).

The trunk IMU reads the exact angular velocity and specific force with the datasheet's bias
and noise (:class:`~sysid_ros._src.simulation.imu.ImuProfile`, the robot file's
``simulation.hardware_like.imu``). Its samples travel in the same message as the joint states
(Unitree's LowState carries both): one stamp, dropped together, so the identifier never
interpolates between IMU samples.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sysid_ros._src.model.robots import Robot
from sysid_ros._src.simulation.errors import SimConfigError
from sysid_ros._src.simulation.imu import ImuProfile
from sysid_ros._src.simulation.hardware_like import HardwareProfile, HardwareSensor, check_recording
from sysid_ros._src.simulation.payload import Payload
from sysid_ros._src.simulation.simulator import Simulator
from sysid_ros._src.simulation.spec import SimulatorSpec
from sysid_ros._src.simulation.synthetic import standing_motion
from sysid_ros._src.simulation.truth import HardwareTruth, drawn_truth

__all__ = ["ImuStream", "StandingHardwareRecording", "record_standing_hardware_like"]


@dataclass(frozen=True, eq=False)
class ImuStream:
    """IMU samples as published: stamps t (M,) s, angular_velocity and linear_acceleration
    (M, 3) in the IMU frame (the identifier's ``ImuSamples``)."""

    t: np.ndarray
    angular_velocity: np.ndarray
    linear_acceleration: np.ndarray


@dataclass(frozen=True, eq=False)
class StandingHardwareRecording:
    """A hardware-like log of the standing robot and its truth.

    Attributes:
        t, q, dq, tau_meas: the published joint states (as :class:`HardwareRecording`'s; dq
            None when the profile's velocity is missing).
        imu: the published IMU samples (the same stamps: one message).
        imu_exact: the exact IMU at those samples (evaluation only).
        gyro_bias, accel_bias: (3,) the recording's drawn IMU biases.
        truth: the simulated robot (θ_e with the initial payload); profile, imu_profile.
        dq_exact, tau_motor: exact joint velocities and applied motor torques of the published
            samples; trunk_position, trunk_rotation (M, 3) the trunk's pose there.
        swap_time, theta_e_after_swap: as :class:`HardwareRecording`'s.
    """

    t: np.ndarray
    q: np.ndarray
    dq: np.ndarray | None
    tau_meas: np.ndarray
    imu: ImuStream
    imu_exact: ImuStream
    gyro_bias: np.ndarray
    accel_bias: np.ndarray
    truth: HardwareTruth
    profile: HardwareProfile
    imu_profile: ImuProfile
    dq_exact: np.ndarray
    tau_motor: np.ndarray
    trunk_position: np.ndarray
    trunk_rotation: np.ndarray
    swap_time: float | None = None
    theta_e_after_swap: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.t.shape[0])


def record_standing_hardware_like(
        robot: Robot, rng: np.random.Generator, payload: Payload | None, duration: float,
        profile: HardwareProfile | None = None, imu_profile: ImuProfile | None = None,
        truth: HardwareTruth | None = None, *, swap_payload: Payload | None = None,
        swap_time: float | None = None, settle: float = 0.4,
        amplitude: float = 0.35) -> StandingHardwareRecording:
    """Record ``duration`` s of the standing robot's hardware-like data (module docstring).

    Args:
        robot: a floating-base robot with ``arm_joints`` and a trunk IMU (``simulation.imu_body``).
        rng: all randomness (truth if drawn, motion, drops, stamps, noise, IMU bias and noise).
        payload: carried from the start (None: nothing in the gripper).
        duration: seconds of data after ``settle`` (the drop onto the ground).
        profile: publication profile (default ``HardwareProfile.from_robot(robot)``); its rate
            must be a whole number of physics steps (its ``physics_step``).
        imu_profile: default ``ImuProfile.from_robot(robot)``.
        truth: the simulated robot; default drawn with the robot file's truth settings.
        swap_payload, swap_time: the payload becomes ``swap_payload`` ``swap_time`` s into the
            data (a changed grasp: violates the identifier's rigid-payload assumption).
        settle, amplitude: as :func:`~sysid_ros._src.simulation.synthetic.standing_motion`.
    """
    if not robot.floating_base:
        raise SimConfigError(f"record_standing_hardware_like simulates a standing floating-base "
                             f"robot; {robot.name} is fixed-base (use record_hardware_like)")
    check_recording(duration, swap_payload, swap_time)
    profile = HardwareProfile.from_robot(robot) if profile is None else profile
    imu_profile = ImuProfile.from_robot(robot) if imu_profile is None else imu_profile
    every = profile.period / profile.physics_step
    if abs(every - round(every)) > 1e-6:
        raise SimConfigError(f"the period 1/rate_hz = {profile.period:g} s must be a whole "
                             f"number of physics steps ({profile.physics_step:g} s)")
    if truth is None:
        truth = drawn_truth(robot, rng, payload)
    sim = Simulator(SimulatorSpec.hardware_like(robot, payload, profile, truth))
    initial_truth = sim.truth
    assert initial_truth is not None
    swap = None if swap_payload is None or swap_time is None else (swap_time, swap_payload)
    m = standing_motion(robot, sim, rng, duration, settle=settle, amplitude=amplitude,
                        every=int(round(every)), swap=swap)
    pub = HardwareSensor(robot, profile, initial_truth, rng).read(m.t, m.q, m.dq, m.tau)
    r = pub.index
    gyro_bias, accel_bias = imu_profile.draw_bias(rng)
    exact = ImuStream(pub.t, m.gyro[r], m.accel[r])
    imu = ImuStream(pub.t, exact.angular_velocity + gyro_bias
                    + imu_profile.noise(rng, r.size, imu_profile.gyro_sigma),
                    exact.linear_acceleration + accel_bias
                    + imu_profile.noise(rng, r.size, imu_profile.accel_sigma))
    return StandingHardwareRecording(
        t=pub.t, q=pub.q, dq=pub.dq, tau_meas=pub.tau_meas,
        imu=imu, imu_exact=exact, gyro_bias=gyro_bias, accel_bias=accel_bias,
        truth=initial_truth, profile=profile, imu_profile=imu_profile, dq_exact=m.dq[r],
        tau_motor=m.tau[r], trunk_position=m.trunk_position[r],
        trunk_rotation=m.trunk_rotation[r], swap_time=swap_time,
        theta_e_after_swap=None if swap_time is None else sim.true_theta_e())
