"""Folders of simulated payload recordings with known truth, for batch tests and benchmarks.

Each bag is a hardware-like recording (:func:`~sysid_ros._src.simulation.record_hardware_like`) of
the robot file's nominal robot carrying a dumbbell of random mass, published at ``rate_hz``
with dropped samples, stamp jitter and a uniform torque error of at most ``torque_noise`` N·m
(:data:`SAMPLE_TORQUE_NOISE`): ``sysid-identify --torque-noise-abs`` with that bound is sound
on them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sysid_ros._src.model.robots import Robot

__all__ = ["SampleBag", "payload_bags", "SAMPLE_TORQUE_NOISE"]

#: N·m: the torque error bound of the sample bags' sensor.
SAMPLE_TORQUE_NOISE = 0.3


@dataclass(frozen=True)
class SampleBag:
    """A written bag and the true end-effector parameters θ_e (gripper + payload)."""

    path: Path
    theta_e: np.ndarray


def payload_bags(out_dir: str | Path, robot: Robot, count: int, seconds: float, seed: int = 0,
                 rate_hz: float = 500.0, mass_kg: tuple[float, float] = (0.5, 3.0),
                 prefix: str = "rec") -> list[SampleBag]:
    """Write ``count`` bags ``out_dir/<prefix>NN`` of ``seconds`` each (module docstring)."""
    from sysid_ros._src.simulation import HardwareProfile, record_hardware_like, \
        write_joint_states_bag
    from sysid_ros._src.simulation.payload import dumbbell_for

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    profile = HardwareProfile(rate_hz=rate_hz, jitter=0.1, drop_prob=0.01,
                              torque_noise=SAMPLE_TORQUE_NOISE)
    bags = []
    for k in range(count):
        rng = np.random.default_rng([seed, k])
        payload = dumbbell_for(robot, float(rng.uniform(*mass_kg)))
        rec = record_hardware_like(robot, rng, payload, duration=seconds, profile=profile)
        path = write_joint_states_bag(out / f"{prefix}{k:02d}", rec, robot)
        bags.append(SampleBag(path, np.asarray(rec.truth.theta_e, float)))
    return bags
