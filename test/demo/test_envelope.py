"""The B1 + Z1's operating envelope (demo.envelope, control.legs): the legs' contract's trunk
response against Pinocchio's constrained dynamics, and a run outside the envelope refused before
anything starts, naming the limiting premise."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from sysid_ros._src.control.legs import LegsContract, contract_alpha_bound, reaction_response
from sysid_ros._src.demo.envelope import premise_failures, task_poses
from sysid_ros._src.demo.floating import envelope_refusal
from sysid_ros._src.model.robots import load_robot


@pytest.fixture(scope="module")
def full():
    return load_robot("b1_z1")


def _edited(full, tmp_path: Path, edit) -> object:
    config = yaml.safe_load(Path(full.config_path).read_text())
    box = config["demo"]["prior_box"]
    config["identification"]["prior"] = {"lower": box["lower"], "upper": box["upper"]}
    edit(config)
    path = tmp_path / "b1_z1.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return load_robot(str(path))


def test_the_trunk_response_is_pinocchios_constrained_dynamics(full):
    """R's column j: the trunk's angular acceleration when arm joint j gets 1 N·m, feet pinned
    — Pinocchio's contact dynamics (forwardDynamics with the feet's Jacobian) on the same
    standing robot, at rest (no bias: gravity and the legs' torques are what the stance holds)."""
    contract = LegsContract.from_robot(full)
    q_arm = np.array([0.02, 0.3, -1.6, 0.5, 0.01, -0.03])
    got = reaction_response(full, q_arm, contract.feet)
    model, data = full.model, full.model.createData()
    q = full.neutral()
    q[np.asarray(full.q_index)[:12]] = full.config["leg_standing_posture"]
    q[np.asarray(full.q_index)[12:]] = q_arm
    pin.computeJointJacobians(model, data, q)
    pin.updateFramePlacements(model, data)
    jac = np.vstack([pin.getFrameJacobian(model, data, model.getFrameId(f),
                                          pin.LOCAL_WORLD_ALIGNED)[:3] for f in contract.feet])
    v = np.zeros(model.nv)
    base = pin.rnea(model, data, q, v, np.zeros(model.nv))      # the bias, balanced below
    for k, dof in enumerate(np.asarray(full.v_index)[12:]):
        tau = base.copy()
        tau[dof] += 1.0
        pin.computeAllTerms(model, data, q, v)
        ddq = pin.forwardDynamics(model, data, tau, jac, np.zeros(jac.shape[0]), 1e-12)
        ddq0 = pin.forwardDynamics(model, data, base, jac, np.zeros(jac.shape[0]), 1e-12)
        np.testing.assert_allclose(got[:, k], (ddq - ddq0)[3:6], atol=1e-6, rtol=1e-5)


def test_a_payload_outside_its_class_is_refused_naming_it(full, tmp_path):
    robot = _edited(full, tmp_path, lambda c: None)
    reasons = envelope_refusal(robot, 2.0)
    assert reasons and reasons[0].startswith("payload in its class: a 2 kg dumbbell")


def test_moving_joint_1_breaks_the_legs_contract_and_is_named(full, tmp_path):
    """Joint 1 moved (not held): its Coulomb reversal about the trunk's z axis at the Z1's
    mount height rolls the trunk at ~3 rad/s² per N·m, far above the view's 0.9 — the first
    failed premise is the contract's roll, with the number contract_alpha_bound gives."""
    def move_joint1(config):
        legs = config["arm_view"]["legs"]
        legs["held_joints"] = [n for n in legs["held_joints"] if n != "joint1"]
    robot = _edited(full, tmp_path, move_joint1)
    alpha_bar, reasons = premise_failures(robot, None, task_poses(robot), 2e-4)  # type: ignore[arg-type]
    assert reasons[0].startswith("legs' contract: trunk α_x up to")
    assert alpha_bar[0] > 3.0 and f"{alpha_bar[0]:.3g}" in reasons[0]
    contract = LegsContract.from_robot(robot)
    one = contract_alpha_bound(robot, contract, task_poses(robot))[0]
    assert one[0] <= alpha_bar[0]          # the workspace grid covers the task's poses


def test_a_task_pose_outside_the_workspace_is_named(full, tmp_path):
    def far(config):
        config["demo"]["waypoints"][-1] = [0.0, 0.5, -1.6, 0.5, 0.3, 0.0]
    robot = _edited(full, tmp_path, far)
    reasons = premise_failures(robot, None, task_poses(robot), 2e-4)[1]  # type: ignore[arg-type]
    assert reasons == ["task pose 2: outside arm_view.workspace",
                       "task pose 2: moves held joints ['joint5'] (legs' contract: no reversal "
                       "there)"]


@pytest.mark.slow
def test_the_envelope_holds_the_demo_class_and_names_joint_3_for_2_kg(full, tmp_path):
    """The demo's own point (1 kg class, V_max 2e-4) is inside; the 2 kg class at the same
    level is outside, limited by joint 3's certified torque — the printout and the plot say so."""
    from sysid_ros._src.demo.envelope import envelope, format_envelope, plot_envelope

    points = envelope(full, [1.0, 2.0], [2e-4], 0.03)
    assert points[0].inside and len(points[0].d_bar) == 6
    assert not points[1].inside
    assert "torque limit: joint joint3 may need" in points[1].failures[0]
    lines = format_envelope(full, points, 0.03)
    assert lines[-2].split(" | ")[-2:] == ["yes", "-"]
    assert lines[-1].split(" | ")[-1] == points[1].failures[0]
    path = plot_envelope(points, tmp_path / "envelope.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_stated_stiffness_is_the_legs_pd_through_the_pinned_feet(full):
    """The robot file's contract states the stance's stiffness: it must be the legs' posture PD
    (hold_kp) seen at the trunk with the feet pinned, to its 4 digits — a change of the legs'
    gains or posture without restating the contract fails here."""
    from sysid_ros._src.control.legs import stance_stiffness

    contract = LegsContract.from_robot(full)
    k = stance_stiffness(full, contract.feet)
    np.testing.assert_allclose(contract.stiffness, k, rtol=5e-4)
    assert np.all(k > 0)


def _demo(argv: list[str], out: Path) -> tuple[subprocess.CompletedProcess, float]:
    exe = Path(sys.executable).with_name("sysid-demo")
    start = time.monotonic()
    proc = subprocess.run([str(exe), *argv, "--out", str(out), "--no-progress"],
                          capture_output=True, text=True, timeout=120)
    return proc, time.monotonic() - start


def _far_task(config) -> None:
    config["demo"]["waypoints"][-1] = [0.0, 0.5, -1.6, 0.5, 0.3, 0.0]


@pytest.mark.slow
@pytest.mark.parametrize("flags, premise", [
    (["--payload", "2.0"], "payload in its class: a 2 kg dumbbell at the grip is outside"),
    (["--prior", "rated"], "certified hold at task pose 0 (class, V_max 0.0002)"),
    (["task"], "task pose 2: outside arm_view.workspace"),
])
def test_the_entry_point_refuses_outside_the_envelope_before_starting(full, tmp_path, flags,
                                                                      premise):
    """``sysid-demo --robot b1_z1`` itself, with a payload outside the demo's class, the rated
    0-2 kg prior, or a task pose the user put outside the workspace: exit 3 (refused), the
    limiting premise named on stderr, and nothing started — no graph log, no bag, no report,
    only the run's robot facts file, within the seconds the pre-flight analysis takes (the
    graph alone needs longer to come up)."""
    from sysid_ros._src.demo.demo_cli import EXIT_REFUSED

    robot = ["--robot", "b1_z1"]
    if flags == ["task"]:
        robot, flags = ["--robot", str(_edited(full, tmp_path, _far_task).config_path)], []
    out = tmp_path / "demo"
    proc, seconds = _demo([*robot, *flags], out)
    assert proc.returncode == EXIT_REFUSED, proc.stderr[-2000:]
    refusal = [ln for ln in proc.stderr.splitlines() if ln.startswith("[demo] refused:")]
    assert len(refusal) == 1, proc.stderr[-2000:]
    expected = (f"outside the operating envelope (sysid-demo --robot {robot[1]} --envelope); "
                f"limiting premise: {premise}")
    assert expected in refusal[0]
    assert proc.stdout == ""                              # no report path
    assert sorted(p.name for p in out.iterdir()) == ["b1_z1.yaml"]
    assert seconds < 60.0
