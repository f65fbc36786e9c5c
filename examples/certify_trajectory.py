"""Certify a trajectory before it runs: sound reachability for every θ_e in a box.

Usage: python examples/certify_trajectory.py

A degree-5 rest-to-rest move q_d(t) = q0 + k·(10s³ − 15s⁴ + 6s⁵), s = t/t_f, is checked over 128
time sub-intervals against joint position, velocity and torque limits and the robot file's
obstacles, for every end-effector parameter vector θ_e in a box and every tracking error the
robust controller allows (docs/theory/planner.md). The same move is refused under the wide payload
prior and certified once identification has shrunk the box. The planner and the demo run exactly
this check; nothing uncertified is ever published.
"""
import numpy as np

import sysid_ros as sr

robot = sr.load_robot("gen3")
reach = sr.ExcitingPlanner(robot).reach                 # its sound check, the robot file's obstacles
prior = sr.load_identification_config(robot).prior      # θ_e ∈ [lower, upper] (kg, kg·m, kg·m²)
theta = robot.theta_e() + sr.dumbbell_for(robot, 3.63).theta()   # gripper + the 8 lb dumbbell
boxes = {"prior box": prior,
         "identified box (±3 %)": sr.theta_e_box(theta - 0.03 * np.abs(theta), theta + 0.03 * np.abs(theta),
                                                 theta)}

q0 = np.asarray(robot.config["demo"]["start"], float)   # rad, the demo's start pose
moves = {
    "joint 1 by +0.3 rad in 3 s": (np.eye(robot.nj)[0] * 0.3, 3.0),
    "joint 2 by +1.5 rad in 0.5 s": (np.eye(robot.nj)[1] * 1.5, 0.5),
}
for move, (k, t_f) in moves.items():                    # rest at q0 → rest at q0 + k
    for box_name, box in boxes.items():
        check = reach.verify_move(q0, q0 + k, t_f, box.lower, box.upper)
        print(f"{move}, {box_name}: {'certified' if check.ok else 'REFUSED'}")
        for why in check.reasons[:2]:                   # the worst violated checks, with slack
            print(f"    {why}")
