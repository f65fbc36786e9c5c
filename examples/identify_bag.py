"""Identify a payload from a recorded joint-state bag (offline, the same code as `sysid-identify`).

Usage: python examples/identify_bag.py [BAG]   (no BAG: records a 6 s hardware-like Gen3 bag first)

Prints the sound mass interval of the end-effector body θ_e (gripper + payload) and, for the
simulated bag, the true mass. The box contains the truth whenever the robot file's torque-noise,
friction and link-parameter bounds hold (docs/theory/identification.md).
"""
import sys
import tempfile
from pathlib import Path

import numpy as np

from sysid_ros._src.bagio import read_joint_states
from sysid_ros._src.identification import identify, load_identification_config
from sysid_ros._src.model import load_robot
from sysid_ros._src.simulation import HardwareProfile, record_hardware_like, write_joint_states_bag
from sysid_ros._src.simulation.payload import dumbbell_for

robot = load_robot("gen3")
truth_mass = None
if len(sys.argv) > 1:
    bag = Path(sys.argv[1])
else:                                            # a 500 Hz log with drops, jitter and noise
    profile = HardwareProfile(rate_hz=500.0, jitter=0.1, drop_prob=0.01, torque_noise=0.3)
    rec = record_hardware_like(robot, np.random.default_rng(1), dumbbell_for(robot, 1.0),
                               duration=6.0, profile=profile)            # 1 kg dumbbell, 6 s
    bag = write_joint_states_bag(Path(tempfile.mkdtemp()) / "gen3_bag", rec, robot)
    truth_mass = rec.truth.theta_e[0]                                    # kg

series = read_joint_states(bag, "/joint_states", robot.joint_names)     # rad, rad/s, N·m
config = load_identification_config(robot, torque_noise_abs=0.3)        # ±0.3 N·m per joint
result = identify(robot, config, series.t, series.position, series.velocity, series.effort)

print(f"status: {result.status} ({result.windows_used} windows)")
print(f"prior: mass ∈ [{config.prior.lower[0]:.3f}, {config.prior.upper[0]:.3f}] kg ({config.prior_name})")
if result.lower is not None and result.upper is not None:
    print(f"mass ∈ [{result.lower[0]:.3f}, {result.upper[0]:.3f}] kg")   # θ_e[0] = m
if truth_mass is not None:
    print(f"true mass {truth_mass:.3f} kg, contained: {result.lower[0] <= truth_mass <= result.upper[0]}")
