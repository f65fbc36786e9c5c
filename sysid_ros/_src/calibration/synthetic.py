"""Simulated calibration cases with known truth, for tests and benchmarks (no ROS).

A *case* is one random robot — friction and armature up to ±50 % off the robot file, Coulomb
friction, torque-sensor offsets, links ±5 % (:func:`~sysid_ros._src.simulation.random_hardware_truth`)
— recorded hardware-like (MuJoCo dry friction, the robot's sensor noise, stamp jitter, dropped
samples; :func:`~sysid_ros._src.simulation.record_hardware_like`): calibration recordings without
payload, and a recording with a dumbbell, all of the same robot.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from sysid_ros._src.calibration.data import Recording
from sysid_ros._src.model.robots import Robot

__all__ = ["CalibrationCase", "GainCase", "draw_case", "draw_gain_case", "as_recording",
           "GEN3_TRUTH"]

#: Truth draw for the Gen3 (the robot file's hardware_like.truth values, spelled out so that a
#: test or benchmark does not change when someone edits the robot file).
GEN3_TRUTH = dict(friction_rel=0.5, fc_max=[2.0] * 4 + [1.0] * 3,
                  offset_max=[1.0] * 4 + [0.5] * 3, link_rel=0.05)


def as_recording(rec, name: str = "<memory>") -> Recording:
    """A :class:`~sysid_ros._src.simulation.HardwareRecording` as the calibration reads it."""
    return Recording(rec.t, rec.q, rec.dq, rec.tau_meas, name)


@dataclass
class CalibrationCase:
    """One simulated robot: ``cal`` recordings without payload and ``payload`` (a
    HardwareRecording carrying the dumbbell, or None); ``seed`` identifies the draw."""

    seed: int
    cal: list = field(default_factory=list)
    payload: object = None

    @property
    def truth(self):
        return self.cal[0].truth

    def recordings(self) -> list[Recording]:
        return [as_recording(r, f"cal-{self.seed}-{k}") for k, r in enumerate(self.cal)]


def draw_case(robot: Robot, seed: int, cal_seconds=(12.0,), payload_seconds: float = 6.0,
              payload_kg: float = 3.63, rate_hz: float = 500.0, drop_prob: float = 0.01,
              truth: dict | None = None, ripple: np.ndarray | None = None,
              ripple_order: int = 2, **profile) -> CalibrationCase:
    """Record one random robot (module docstring).

    Args:
        robot: a fixed-base robot (Gen3, Z1).
        seed: the draw (truth, motions, sensors).
        cal_seconds: one calibration recording per entry (s), each with its own motion.
        payload_seconds: the dumbbell recording (s); 0 for none.
        payload_kg: dumbbell mass (``dumbbell_for``).
        rate_hz, drop_prob, profile: publication profile overrides (the robot file's profile
            otherwise), e.g. ``velocity="missing"``.
        truth: keyword arguments of ``random_hardware_truth`` (default :data:`GEN3_TRUTH`).
        ripple, ripple_order: a position-dependent load torque (nj, 2) of that harmonic order
            added to the drawn robot (``HardwareTruth.ripple``); None for none.
    """
    from sysid_ros._src.simulation import HardwareProfile, dumbbell_for, random_hardware_truth, \
        record_hardware_like

    rng = np.random.default_rng(7000 + seed)
    prof = HardwareProfile.from_robot(robot, rate_hz=rate_hz, physics_dt=None,
                                      drop_prob=drop_prob, **profile)
    hw = random_hardware_truth(robot, rng, **(truth or GEN3_TRUTH))
    if ripple is not None:
        hw = replace(hw, ripple=ripple, ripple_order=ripple_order)
    cal = [record_hardware_like(robot, rng, None, float(d), prof, hw) for d in cal_seconds]
    pay = None
    if payload_seconds > 0:
        pay = record_hardware_like(robot, rng, dumbbell_for(robot, payload_kg),
                                   payload_seconds, prof, hw)
    return CalibrationCase(seed, cal, pay)


@dataclass
class GainCase:
    """One robot whose torque reading has a drawn constant gain per joint: ``cal`` without
    payload, ``loaded`` with the ``known`` payload (a Payload), ``payload`` with another one
    to identify; ``truth.torque_gain`` is the gain."""

    truth: object
    known: object
    cal: object
    loaded: object
    payload: object


def draw_gain_case(robot: Robot, seed: int, gain_rel: float = 0.1, known_kg: float = 1.0,
                   payload_kg: float = 1.5, seconds: tuple[float, float, float] = (30.0, 30.0, 20.0),
                   known_class: str | None = None, **profile) -> GainCase:
    """The robot file's truth draw with a reading gain in 1 ± ``gain_rel`` per joint, recorded
    with the robot file's profile (``profile`` overrides, e.g. ``velocity="exact"``): without
    payload, with the known ``known_kg`` dumbbell and with a ``payload_kg`` one (``seconds``).
    With ``known_class`` (a prior of the robot file, a payload class) the known payload is
    drawn in that class off its centre instead (``seed``), as a catalogued payload is."""
    import dataclasses

    from sysid_ros._src.identification import load_identification_config
    from sysid_ros._src.simulation import HardwareProfile, dumbbell_for, hardware_truth_settings, \
        random_hardware_truth, record_hardware_like
    from sysid_ros._src.simulation.offcentre import draw_in_class

    rng = np.random.default_rng(seed)
    prof = dataclasses.replace(HardwareProfile.from_robot(robot), **profile)
    settings = {**hardware_truth_settings(robot), "torque_gain_rel": gain_rel}
    truth = random_hardware_truth(robot, rng, **settings)
    if known_class is None:
        known = dumbbell_for(robot, known_kg)
    else:
        box = load_identification_config(robot, prior=known_class).prior
        known = draw_in_class(robot, box.lower, box.upper, seed).payload
    cal = record_hardware_like(robot, rng, None, seconds[0], prof, truth)
    loaded = record_hardware_like(robot, rng, known, seconds[1], prof, truth)
    pay = record_hardware_like(robot, rng, dumbbell_for(robot, payload_kg), seconds[2], prof,
                               truth)
    return GainCase(truth, known, cal, loaded, pay)
