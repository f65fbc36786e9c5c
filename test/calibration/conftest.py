"""Shared recordings for the calibration tests: hardware-like MuJoCo data with known truth.

Everything is at 500 Hz with dropped samples and short, so the folder stays within its time
budget on a 2-core machine. ``SYSID_CALIB_ROBOTS`` (default 3) sets how many random robots the
soundness test draws; ``python -m bench.bench_calibration`` runs 20.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import pytest

from sysid_ros.calibration import Recording
from sysid_ros.model.robots import load_robot
from sysid_ros.simulation import HardwareProfile, dumbbell_for, random_hardware_truth, \
    record_hardware_like

N_ROBOTS = int(os.environ.get("SYSID_CALIB_ROBOTS", "3"))
RATE_HZ = 500.0
CAL_SECONDS = 12.0
PAYLOAD_SECONDS = 6.0


@dataclass
class RobotCase:
    """One simulated robot: a calibration recording (no payload), a payload recording (3.63 kg
    dumbbell) and its truth."""

    seed: int
    cal: object          # HardwareRecording
    payload: object      # HardwareRecording

    @property
    def cal_recording(self) -> Recording:
        return as_recording(self.cal, f"cal-{self.seed}")


def as_recording(rec, name: str = "<memory>") -> Recording:
    return Recording(rec.t, rec.q, rec.dq, rec.tau_meas, name)


def draw_case(robot, seed: int, cal_seconds: float = CAL_SECONDS,
              payload_seconds: float = PAYLOAD_SECONDS, **profile) -> RobotCase:
    """A random robot (friction/armature up to ±50 % off nominal, Coulomb friction, sensor
    offsets, links ±5 %) recorded at 500 Hz with 1 % drops."""
    rng = np.random.default_rng(7000 + seed)
    prof = HardwareProfile.from_robot(robot, rate_hz=RATE_HZ, physics_dt=None, drop_prob=0.01,
                                      **profile)
    truth = random_hardware_truth(robot, rng, friction_rel=0.5,
                                  fc_max=[2.0] * 4 + [1.0] * 3,
                                  offset_max=[1.0] * 4 + [0.5] * 3, link_rel=0.05)
    cal = record_hardware_like(robot, rng, None, cal_seconds, prof, truth)
    pay = record_hardware_like(robot, rng, dumbbell_for(robot, 3.63), payload_seconds, prof,
                               truth)
    return RobotCase(seed, cal, pay)


@pytest.fixture(scope="session")
def gen3():
    return load_robot("gen3")


@pytest.fixture(scope="session")
def cases(gen3):
    return [draw_case(gen3, k) for k in range(N_ROBOTS)]
