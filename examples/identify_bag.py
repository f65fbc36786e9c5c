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

import sysid_ros as sr

robot = sr.load_robot("gen3")
truth_mass = None
if len(sys.argv) > 1:
    bag = Path(sys.argv[1])
else:                                            # a 500 Hz log with drops, jitter and noise
    profile = sr.HardwareProfile(rate_hz=500.0, jitter=0.1, drop_prob=0.01, torque_noise=0.3)
    rec = sr.record_hardware_like(robot, np.random.default_rng(1), sr.dumbbell_for(robot, 1.0),
                                  duration=6.0, profile=profile)        # 1 kg dumbbell, 6 s
    bag = sr.write_joint_state_arrays(Path(tempfile.mkdtemp()) / "gen3_bag", rec.t, rec.q, rec.dq,
                                      rec.tau_meas, robot.joint_names)
    truth_mass = rec.truth.theta_e[0]                                    # kg

series = sr.read_joint_states(bag, "/joint_states", robot.joint_names)     # rad, rad/s, N·m
config = sr.load_identification_config(robot, torque_noise_abs=0.3)        # ±0.3 N·m per joint
result = sr.identify(robot, config, series.t, series.position, series.velocity, series.effort)

print(f"status: {result.status} ({result.windows_used} windows)")
print(f"prior: mass ∈ [{config.prior.lower[0]:.3f}, {config.prior.upper[0]:.3f}] kg ({config.prior_name})")
if result.lower is not None and result.upper is not None:
    print(f"mass ∈ [{result.lower[0]:.3f}, {result.upper[0]:.3f}] kg")   # θ_e[0] = m
if truth_mass is not None:
    print(f"true mass {truth_mass:.3f} kg, contained: {result.lower[0] <= truth_mass <= result.upper[0]}")
