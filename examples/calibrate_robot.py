"""Calibrate the robot itself, then identify a payload with the calibrated facts.

Usage: python examples/calibrate_robot.py

A simulated Gen3 whose friction and armature are up to ±50 % off its robot file, with Coulomb
friction, torque-sensor offsets β and links ±5 % off, is recorded for 12 s without payload at
500 Hz (drops, jitter, noise). `calibrate` bounds per joint the torque error and [Fc, Fv, Ia, β]
(docs/guide/calibrate.md). Identification with the robot file's guessed facts (a 0.1 N·m torque-noise
bound, the built-in simulator's sensor) is refused as `inconsistent` on this hardware-like data —
the stated assumption is violated, and the diagnosis says by how much; with the calibration
overlay calib.yaml the payload box is `ok` and contains the truth.
"""
import numpy as np

import sysid_ros as sr

robot = sr.load_robot("gen3")
rng = np.random.default_rng(7003)
profile = sr.HardwareProfile.from_robot(robot, rate_hz=500.0, physics_dt=None, drop_prob=0.01)
# a robot drawn the way the robot file's simulation.hardware_like.truth says; 12 s, no payload
cal = sr.record_hardware_like(robot, rng, None, 12.0, profile)
rec = sr.record_hardware_like(robot, rng, sr.dumbbell_for(robot, 3.63), 6.0, profile, cal.truth)
result = sr.calibrate(robot, [sr.Recording(cal.t, cal.q, cal.dq, cal.tau_meas, "cal")])
truth = cal.truth.friction                             # (nj, 4): Fc, Fv, Ia, β per joint

print("joint  noise bound  Fv box (N·m·s/rad) ∋ truth      β box (N·m) ∋ truth")
for j, name in enumerate(robot.joint_names):
    fv_lo, fv_hi = result.friction_lower[j, 1], result.friction_upper[j, 1]
    b_lo, b_hi = result.friction_lower[j, 3], result.friction_upper[j, 3]
    print(f"{name:8s} {result.noise[j]:6.3f} N·m  [{fv_lo:6.2f}, {fv_hi:6.2f}] ∋ {truth[j, 1]:5.2f}"
          f"   [{b_lo:5.2f}, {b_hi:5.2f}] ∋ {truth[j, 3]:5.2f}")

calibrated = sr.apply_calibration(robot, result.document())     # what calib.yaml holds
mass = rec.truth.theta_e[0]                                       # kg, gripper + dumbbell
for label, robot_used in (("uncalibrated", robot), ("calibrated", calibrated)):
    res = sr.identify(robot_used, sr.load_identification_config(robot_used), rec.t, rec.q, rec.dq, rec.tau_meas)
    box = "" if res.lower is None else f", mass ∈ [{res.lower[0]:.3f}, {res.upper[0]:.3f}] kg ∋ {mass:.3f}"
    print(f"{label:12s}: {res.status}{box} {res.reason}")
