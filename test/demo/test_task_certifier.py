"""The demo's TaskCertifier (sysid_ros.demo.cli): the planner's sound check of the motions the
demo sends itself."""
from __future__ import annotations


def test_the_return_is_certified_like_the_task():
    """``TaskCertifier.move``: the return to the task's start (sent unchecked before session 15,
    when one closed-loop episode's return went 5 mm into the platform) gets the planner's sound
    check: a rest-to-rest move that stays clear certifies, one whose sweep reaches the platform
    of ``planner.obstacles`` (elbow opened 0.8 rad from the start pose) is refused, by name."""
    import numpy as np

    from sysid_ros.demo.cli import TaskCertifier
    from sysid_ros.model.box import theta_e_box
    from sysid_ros.model.robots import load_robot

    robot = load_robot("gen3")
    demo = robot.config["demo"]
    start = np.asarray(demo["start"], float)
    certify = TaskCertifier(robot, start, [np.asarray(w, float) for w in demo["waypoints"]],
                            float(demo.get("segment", 1.0)))
    th = robot.theta_e()
    box = theta_e_box(th - 0.01 * np.abs(th) - 1e-6, th + 0.01 * np.abs(th) + 1e-6, th)
    clear = start.copy()
    clear[1] += 0.8
    assert certify.move(box, start, clear, 3.0) == []
    into = start.copy()
    into[3] += 0.8
    reasons = certify.move(box, start, into, 3.0)
    assert reasons and all(r.startswith("return: ") for r in reasons)
    assert any("platform" in r for r in reasons)
