"""In-process paper pipeline (``sysid_ros.demo.pipeline``): short episodes on the real MuJoCo
simulator, checked against facts the pipeline does not compute itself: the dumbbell's mass
(1.28486 kg EE body + the dumbbell), torque limits from an edited robot file, and a collision
box placed where Pinocchio's forward kinematics puts the tool at the task's last waypoint."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from sysid_ros.demo.pipeline import EpisodeConfig, evaluate_episode, run_episode, simulate_episode
from sysid_ros.model.robots import load_robot
from sysid_ros.planning.obstacles import BoxObstacle

MASS = 3.63
SHORT = EpisodeConfig(n_trajectories=1, max_cycles=4, return_duration=1.5,
                      planner_overrides={"max_solve_time": 1.4})


@pytest.fixture(scope="module")
def robot():
    return load_robot("gen3")


@pytest.fixture(scope="module")
def conservative(robot):
    """A conservative-controller episode (no identification): cheap, reused below."""
    return simulate_episode(robot, MASS, "conservative", (), seed=0, config=SHORT)


def test_ours_identifies_the_dumbbell_and_keeps_the_guarantee(robot):
    res = run_episode(robot, MASS, "ours", (), seed=1, config=SHORT)
    assert res.plans_executed == 1, res.reasons
    lo, hi = res.mass_interval
    true_mass = 1.28486 + MASS
    assert lo <= true_mass <= hi
    assert hi - lo < 1.0, "one exciting trajectory must shrink the 4.5 kg prior mass interval"
    assert res.contains_truth is True
    assert res.cond is not None and np.isfinite(res.cond) and res.cond > 1.0
    # the robust controller's claim with a box that contains the truth
    assert res.max_V_task <= robot.config["controller"]["V_max"]
    assert res.success, res.reasons


def test_evaluation_detects_a_torque_limit(robot, conservative, tmp_path: Path):
    ok = evaluate_episode(robot, conservative, ())
    assert not any("torque limit" in r for r in ok.reasons)
    assert ok.peak_torque_ratio < 1.0
    # the same robot with 30 % of its torque limits (simulator and controller both clip there)
    cfg = yaml.safe_load(Path(robot.config_path).read_text())
    cfg["limits"]["torque_Nm"] = [0.3 * x for x in cfg["limits"]["torque_Nm"]]
    path = tmp_path / "gen3_weak.yaml"
    path.write_text(yaml.safe_dump(cfg))
    weak = load_robot("gen3", path)
    res = run_episode(weak, MASS, "conservative", (), seed=0, config=SHORT)
    assert not res.success
    assert res.phase == "task"
    assert any("torque limit" in r for r in res.reasons), res.reasons


def test_evaluation_detects_a_collision(robot, conservative):
    model = robot.model
    data = model.createData()
    q = np.zeros(model.nq)
    q[robot.q_index] = robot.config["demo"]["waypoints"][-1]
    pin.framesForwardKinematics(model, data, q)
    tool = data.oMf[model.getFrameId(robot.tool_frame)].translation
    box = BoxObstacle.from_dict({"name": "in_the_way", "center": tool.tolist(),
                                 "half_extents": [0.05, 0.05, 0.05]})
    res = evaluate_episode(robot, conservative, (box,))
    assert not res.success and res.min_clearance_mm < 0
    assert any("collision" in r for r in res.reasons), res.reasons


def test_unknown_method_is_a_clear_error(robot):
    with pytest.raises(ValueError, match="not one of"):
        simulate_episode(robot, MASS, "magic")
