"""In-process paper pipeline (``sysid_ros._src.demo.pipeline``): short episodes on the real MuJoCo
simulator, checked against facts the pipeline does not compute itself: the dumbbell's mass
(1.28486 kg EE body + the dumbbell), torque limits from an edited robot file, and a collision
box placed where Pinocchio's forward kinematics puts the tool at the task's last waypoint."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from sysid_ros._src.demo.pipeline import (EpisodeConfig, evaluate_episode, graph_parameters, run_episode,
                                     simulate_episode)
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.planning.obstacles import BoxObstacle

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


@pytest.mark.slow     # ~50 s: a whole identifying episode through the node runtimes
def test_ours_identifies_the_dumbbell_and_keeps_the_guarantee(robot):
    ep = simulate_episode(robot, MASS, "ours", (), seed=1, config=SHORT)
    res = evaluate_episode(robot, ep, ())
    assert res.plans_executed == 1, res.reasons
    # the plan went through the controller's admission with the planner's certificate, which
    # the controller honoured (it names a box the identifier sent it)
    plans = [a for _t, label, a in ep.admissions if label.startswith("plan")]
    assert len(plans) == 1 and plans[0].accepted and plans[0].certified
    assert ep.controller_status[-1][1].values["trajectories_certified"] == "1"
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


def test_a_box_pinned_to_the_prior_fails_the_run(robot, conservative):
    """The identifier's last WARN that its box is pinned to a prior face makes the verdict a
    failure (the box may hold only because the prior cuts it); other statuses are shown."""
    from dataclasses import replace

    from sysid_ros._src.demo.report import PINNED_WARNING, IdentifierStatus, evaluate

    run = conservative.run
    window = conservative.task_window
    sec = robot.config["controller"]
    ok = evaluate(replace(run, identifier_status=[IdentifierStatus(1.0, 0, "ok")]), robot, (),
                  window, sec["Kr"], sec["V_max"])
    assert ok.identifier.level_name == "OK" and not any("pinned" in r for r in ok.reasons)
    msg = f"ok; WARNING: {PINNED_WARNING} '2f85': m on its upper face"
    pinned = evaluate(replace(run, identifier_status=[IdentifierStatus(1.0, 0, "ok"),
                                                      IdentifierStatus(2.0, 1, msg)]),
                      robot, (), window, sec["Kr"], sec["V_max"])
    assert not pinned.success and pinned.identifier_warnings == 1
    assert any("pinned to the prior" in r for r in pinned.reasons)
    assert IdentifierStatus.of(0.0, "ok", [msg[13:]]).pinned


def test_report_reads_the_identifiers_diagnostic_name():
    pytest.importorskip("rclpy")
    from sysid_ros._src.demo.report import IDENTIFIER_DIAGNOSTIC
    from sysid_ros._src.nodes.identifier import DIAG_NAME

    assert IDENTIFIER_DIAGNOSTIC == DIAG_NAME


def test_the_controller_runs_with_the_sim_launch_settings(robot, conservative):
    """The episode's controller is the node's runtime configured as launch/sim.launch.yaml
    configures it (read here straight from the launch file), and its own diagnostics account for
    every command and trajectory of the episode."""
    launch = yaml.safe_load((Path(__file__).resolve().parents[2] / "launch" /
                             "sim.launch.yaml").read_text())["launch"]
    node = next(e["node"] for e in launch if "node" in e and e["node"]["name"] ==
                "robust_controller")
    literal = {p["name"]: yaml.safe_load(p["value"]) for p in node["param"]
               if "name" in p and "$(" not in str(p["value"])}
    assert {"stale_timeout", "clock_timeout", "accept_uncertified"} <= set(literal)
    params = graph_parameters(robot, MASS, "conservative", 4)
    assert {k: params["robust_controller"][k] for k in literal} == literal
    assert params["sim"]["mode"] == "lockstep"

    status = conservative.controller_status[-1][1]
    assert status.level == 0, status.message
    assert status.values["commands"] == str(len(conservative.run.cmd_t))   # one per sample
    assert status.values["trajectories_accepted"] == "1"      # the task (no planner here)
    assert status.values["trajectories_certified"] == "0"     # the demo's task has no certificate
    assert status.values["accept_uncertified"] == str(literal["accept_uncertified"]).lower()
    assert status.values["stale_events"] == "0"               # lock-step: nothing goes stale
    assert [label for _t, label, _a in conservative.admissions] == ["task"]


@pytest.mark.slow   # one ~10 s episode
def test_a_trajectory_admission_rejects_is_not_executed(robot, tmp_path: Path):
    """Joint 1's speed limit set below what the task's first minimum-jerk segment needs (peak
    speed 15/8 · Δq / T, computed here from the robot file): the controller rejects the task,
    the arm keeps holding its pose instead of moving, and the verdict says why."""
    cfg = yaml.safe_load(Path(robot.config_path).read_text())
    demo = cfg["demo"]
    dq = abs(demo["waypoints"][0][0] - demo["start"][0])
    peak_deg_s = np.degrees(15.0 / 8.0 * dq / demo["segment"])
    cfg["limits"]["velocity_deg_s"][0] = float(0.9 * peak_deg_s)
    path = tmp_path / "gen3_slow_joint1.yaml"
    path.write_text(yaml.safe_dump(cfg))
    slow = load_robot("gen3", path)
    ep = simulate_episode(slow, MASS, "conservative", (), seed=0, config=SHORT)
    (_t, label, adm), = ep.admissions
    assert label == "task" and not adm.accepted
    assert any(r.startswith("joint 1 speed") for r in adm.reasons), adm.reasons
    moving = ep.run.t >= ep.task_window[0]
    assert np.max(np.abs(ep.run.q[moving, 0] - demo["start"][0])) < 0.01   # held, not moved
    res = evaluate_episode(slow, ep, ())
    assert not res.success and res.phase == "task"
    assert any("controller rejected the task" in r for r in res.reasons), res.reasons
    assert ep.controller_status[-1][1].values["trajectories_rejected"] == "1"


def test_pipeline_translates_the_identifier_parameters_as_the_node_does() -> None:
    """The in-process pipeline builds the identifier's config from the launch's parameters with
    the node's own translation (``identification_overrides``): the shipped config/identifier.yaml
    and launch/sim.launch.yaml give a valid config, ``friction: auto`` resolving to the catalogue
    box of the built-in simulator (its physics uses those values), and ``hardware_like`` off."""
    from sysid_ros._src.demo.pipeline import graph_parameters
    from sysid_ros._src.identification import load_identification_config
    from sysid_ros._src.nodes.identifier_params import identification_overrides

    gen3 = load_robot("gen3")
    params = graph_parameters(gen3, 3.63, "robust", 4)
    ip = params["identifier"]
    assert ip["friction"] == "auto" and ip["hardware_like"] is False
    # the launch hands the sim and the identifier the same hardware_like, and the sim its seed
    assert params["sim"]["hardware_like"] is False and params["sim"]["hardware_seed"] == 0
    cfg = load_identification_config(gen3, **identification_overrides(gen3, ip))
    assert cfg.friction == "config"
    hw = load_identification_config(gen3, **identification_overrides(
        gen3, {**ip, "hardware_like": True}))
    assert hw.friction == "wide" and np.all(hw.torque_noise_abs > cfg.torque_noise_abs)


def test_report_states_the_identifiability_floor(robot, conservative):
    """The report's floor line: the floor about the run's truth against a final box; none
    without a box, and a stated reason when the floor cannot be taken (truth outside the prior)."""
    from dataclasses import replace

    from sysid_ros._src.demo.report import evaluate, floor_summary
    from sysid_ros._src.identification import load_identification_config
    from sysid_ros._src.identification.floor import identifiability_floor

    sec = robot.config["controller"]
    ev = evaluate(conservative.run, robot, (), conservative.task_window, sec["Kr"], sec["V_max"])
    assert ev.truth is not None
    cfg = load_identification_config(robot)
    box = cfg.prior.with_bounds(np.minimum(cfg.prior.lower, ev.truth - 0.1),
                                np.maximum(cfg.prior.upper, ev.truth + 0.1))
    line = floor_summary(robot, replace(ev, final_bounds=box))
    expected = identifiability_floor(robot, cfg, ev.truth).width[0]
    assert line is not None and line.startswith(f"mass {expected:.3g} kg of the final box's "
                                                f"{box.width[0]:.3g} kg")
    assert floor_summary(robot, replace(ev, final_bounds=None)) is None
    outside = floor_summary(robot, replace(ev, final_bounds=box, truth=cfg.prior.upper + 1.0))
    assert outside is not None and outside.startswith("not computed: ")


@pytest.mark.slow     # ~20 s: an identifying Z1 episode through the node runtimes
def test_an_episode_from_a_class_simulates_the_payload_drawn_in_it(tmp_path):
    """From the Z1's dumbbell_1kg class the episode carries a payload drawn off the class's
    centre (a body other than the dumbbell of its mass): the simulator's truth is that
    payload's, the identified box holds it and stays inside the class, and the run succeeds."""
    from sysid_ros._src.demo.class_payload import class_prior
    from sysid_ros._src.demo.priors import robot_with_prior
    from sysid_ros._src.planning.obstacles import obstacles_from_config
    from sysid_ros._src.simulation.offcentre import draw_in_class

    z1 = load_robot(robot_with_prior(load_robot("z1"), "dumbbell_1kg", tmp_path))
    klass = class_prior(z1)
    assert klass is not None
    draw = draw_in_class(z1, klass.lower, klass.upper, 0)
    obstacles = obstacles_from_config(z1.config["planner"]["obstacles"])
    ep = simulate_episode(z1, draw.payload, "ours", obstacles, seed=0,
                          config=EpisodeConfig(n_trajectories=1, max_cycles=4))
    res = evaluate_episode(z1, ep, obstacles)
    assert ep.payload_kg == draw.payload.mass and res.plans_executed == 1
    # the simulator's truth (MuJoCo compiles this body: test/simulation/test_offcentre.py)
    np.testing.assert_allclose(ep.run.truth, draw.theta_e, rtol=1e-12, atol=1e-15)
    assert res.contains_truth is True and res.success, res.reasons
    final = res.evaluation.final_bounds
    assert klass.contains(final.lower, 1e-9) and klass.contains(final.upper, 1e-9)
