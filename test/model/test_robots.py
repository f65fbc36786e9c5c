"""Robot registry: models, the Gen3 URDF and robot file against the Kinova facts in the repository
(urdf/kinova_gen3_facts.yaml, docs/theory/models.md#robots-and-their-facts), and config validation errors."""
from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
import yaml

from sysid_ros._src.model.errors import RobotConfigError, UnknownRobotError
from sysid_ros._src.model.robots import REQUIRED_KEYS, TOOL_KEYS, available_robots, load_robot
from sysid_ros._src.paths import package_share

SOURCE_ROOT = Path(__file__).resolve().parents[2]
FACTS_PATH = SOURCE_ROOT / "urdf" / "kinova_gen3_facts.yaml"


@pytest.fixture(scope="module")
def facts() -> dict:
    if not FACTS_PATH.is_file():
        pytest.fail(f"Kinova Gen3 facts file missing from the repository: {FACTS_PATH}")
    return yaml.safe_load(FACTS_PATH.read_text())


def test_registry_lists_three_robots():
    assert {"gen3", "z1", "b1_z1"} <= set(available_robots())


@pytest.mark.parametrize("name,nq,nv,nj", [("gen3", 7, 7, 7), ("z1", 6, 6, 6),
                                           ("b1_z1", 25, 24, 18)])
def test_models_load_with_expected_sizes(name, nq, nv, nj):
    robot = load_robot(name)
    assert (robot.nq, robot.nv, robot.nj) == (nq, nv, nj)
    assert robot.floating_base == (name == "b1_z1")
    assert robot.limits.tau_max.shape == (nj,) and np.all(robot.limits.tau_max > 0)
    assert robot.friction.nominal.shape == (nj, 4)
    assert np.all(robot.friction.radius >= 0)
    assert len(robot.spheres) > 0
    assert robot.theta().shape == (10 * robot.n_bodies,)


def test_gen3_end_effector_is_lumped_gripper(facts):
    robot = load_robot("gen3")
    expected = np.array(facts["lumped_end_effector_inertia"]["dynamic_parameters"])
    np.testing.assert_allclose(robot.theta_e(), expected, rtol=1e-12, atol=1e-15)
    assert robot.theta_e()[0] == pytest.approx(1.28486, abs=1e-5)


def test_gen3_urdf_matches_the_facts(facts):
    model = load_robot("gen3").model
    links = {l["name"]: l for l in facts["links"]}
    joints = {j["name"]: j for j in facts["joints"]}
    for k in range(1, 8):
        name = f"joint_{k}"
        jid = model.getJointId(name)
        fact = joints[name]
        placement = model.jointPlacements[jid]
        np.testing.assert_allclose(placement.translation, fact["origin_xyz"], atol=1e-12)
        np.testing.assert_allclose(placement.rotation, pin.rpy.rpyToMatrix(*fact["origin_rpy"]),
                                   atol=1e-12)
        if k < 7:   # body 7 carries the lumped gripper, checked above
            assert model.inertias[jid].mass == pytest.approx(links[fact["child"]]["mass"])
            np.testing.assert_allclose(model.inertias[jid].lever, links[fact["child"]]["com_xyz"])
        lim = fact["urdf_limit"]
        assert model.effortLimit[jid - 1] == pytest.approx(lim["effort"])
        assert model.velocityLimit[jid - 1] == pytest.approx(lim["velocity"])
        if "lower" in lim:
            assert model.lowerPositionLimit[jid - 1] == pytest.approx(lim["lower"])
            assert model.upperPositionLimit[jid - 1] == pytest.approx(lim["upper"])


def test_gen3_operational_limits_come_from_the_facts_in_si(facts):
    limits = load_robot("gen3").limits
    lim = facts["limits"]
    lower = [np.deg2rad(x) if x is not None else -np.inf for x in lim["position_deg"]["lower"]]
    np.testing.assert_allclose(limits.q_lower, lower)
    np.testing.assert_allclose(limits.dq_max, np.deg2rad(lim["velocity_deg_s"]))
    np.testing.assert_allclose(limits.tau_max, lim["torque_warning_Nm"])
    np.testing.assert_allclose(load_robot("gen3").friction.nominal[:, 1],
                               facts["friction_identified_without_payload"]["Fv"])


def test_gen3_urdf_is_generated_from_the_facts(facts):
    """The committed URDF is exactly what scripts/make_gen3_urdf.py writes from the facts file."""
    spec = importlib.util.spec_from_file_location("make_gen3_urdf",
                                                  SOURCE_ROOT / "scripts" / "make_gen3_urdf.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.FACTS == FACTS_PATH
    committed = (SOURCE_ROOT / "urdf" / "kinova_gen3.urdf").read_text()
    assert script.build_urdf(facts) == committed, \
        "urdf/kinova_gen3.urdf is stale: run python scripts/make_gen3_urdf.py"


def test_gen3_robot_file_copies_the_facts(facts):
    robot = load_robot("gen3")
    friction = facts["friction_identified_without_payload"]
    for col, key in enumerate(("Fc", "Fv", "Ia", "beta")):
        np.testing.assert_array_equal(robot.friction.nominal[:, col], friction[key])
    spheres = {}
    for s in robot.spheres:
        spheres.setdefault(s.joint, []).append([s.offset.tolist(), s.radius])
    assert spheres == facts["collision_spheres"]
    assert robot.links_rel_uncertainty == facts["model_uncertainty_ratios_default"]["links_1_to_6"]
    ctrl, ref = robot.config["controller"], facts["robust_controller_defaults"]
    assert (ctrl["Kr"], ctrl["alpha"]) == (ref["Kr"], ref["alpha"])


def test_unknown_robot_names_the_known_ones():
    with pytest.raises(UnknownRobotError, match="unknown robot 'ur5'.*gen3"):
        load_robot("ur5")


def test_missing_config_file():
    with pytest.raises(RobotConfigError, match="not found"):
        load_robot("gen3", config_path="/nonexistent/gen3.yaml")


def _edited(tmp_path: Path, edit) -> Path:
    cfg = yaml.safe_load((package_share() / "config" / "gen3.yaml").read_text())
    edit(cfg)
    out = tmp_path / "gen3.yaml"
    out.write_text(yaml.safe_dump(cfg))
    return out


@pytest.mark.parametrize("edit,pattern", [
    (lambda c: c["limits"]["velocity_deg_s"].pop(), r"limits\.velocity_deg_s.*6 entries, expected 7"),
    (lambda c: c["limits"].__setitem__("velocity", [1.0] * 7), "velocity"),
    (lambda c: c["friction"]["Fv"].__setitem__(2, "fast"), r"friction\.Fv.*entry 2"),
    (lambda c: c["limits"].__setitem__("position_lower", [0.0] * 7),
     r"exactly one of 'limits\.position_lower'"),
    (lambda c: c.__setitem__("end_effector_joint", "joint_9"), "end_effector_joint"),
    (lambda c: c["joints"].pop(), r"'joints'.*6 joints but the model has 7"),
    (lambda c: c["model"].__setitem__("urdf", "urdf/missing.urdf"), r"model\.urdf.*not found"),
    (lambda c: c["collision_spheres"]["joint_2"].append([[0, 0], 0.1]), "collision_spheres"),
    (lambda c: c["limits"].__setitem__("torque_Nm", [-1.0] * 7), r"torque_Nm.*positive"),
])
def test_malformed_configs_name_the_field(tmp_path, edit, pattern):
    with pytest.raises(RobotConfigError, match=pattern):
        load_robot("gen3", config_path=_edited(tmp_path, edit))


def test_edited_copy_is_honoured(tmp_path):
    path = _edited(tmp_path, lambda c: c["limits"].__setitem__("torque_Nm", [10.0] * 7))
    assert np.all(load_robot("gen3", config_path=path).limits.tau_max == 10.0)


def test_z1_gripper_is_locked_into_the_end_effector():
    robot = load_robot("z1")
    assert not robot.model.existJointName("jointGripper")
    from sysid_ros._src.paths import example_robot_data_dir
    full = pin.buildModelFromUrdf(str(example_robot_data_dir() / "z1_description/urdf/z1.urdf"))
    mass = full.inertias[full.getJointId("joint6")].mass + \
        full.inertias[full.getJointId("jointGripper")].mass
    assert robot.theta_e()[0] == pytest.approx(mass, rel=1e-12)


def _minimal(cfg: dict) -> dict:
    """Only the REQUIRED_KEYS of a shipped robot file (the variant it uses of an a|b pair)."""
    out: dict = {}
    for required in REQUIRED_KEYS:
        for dotted in required.split("|"):
            *head, last = dotted.split(".")
            src, dst = cfg, out
            for p in head:
                src, dst = src.get(p, {}), dst.setdefault(p, {})
            if src.get(last) is not None:
                dst[last] = src[last]
                break
    return out


def test_a_robot_file_needs_only_the_required_keys_and_names_a_missing_one(tmp_path):
    """A file with the required keys alone loads, and its robot equals the shipped one in what
    those keys state (the rest is defaulted); without any one of them the error names the file
    and that key, before anything else is read."""
    shipped = load_robot("gen3")
    cfg = yaml.safe_load((package_share() / "config" / "gen3.yaml").read_text())
    minimal = _minimal(cfg)
    path = tmp_path / "new_robot.yaml"
    path.write_text(yaml.safe_dump(minimal))
    robot = load_robot(path)
    assert robot.joint_names == shipped.joint_names and robot.ee_joint == shipped.ee_joint
    np.testing.assert_array_equal(robot.limits.tau_max, shipped.limits.tau_max)
    np.testing.assert_array_equal(robot.friction.nominal, shipped.friction.nominal)
    assert robot.links_rel_uncertainty == 0.05 and robot.spheres == ()
    for required in REQUIRED_KEYS:
        edited = copy.deepcopy(minimal)
        for dotted in required.split("|"):
            *head, last = dotted.split(".")
            node = edited
            for p in head:
                node = node[p]
            node.pop(last, None)
        path.write_text(yaml.safe_dump(edited))
        with pytest.raises(RobotConfigError) as err:
            load_robot(path)
        assert str(path) in str(err.value) and f"'{required}'" in str(err.value), err.value
    assert set(REQUIRED_KEYS) >= {"joints", "model.urdf", "end_effector_joint", "tool_frame"}
    assert TOOL_KEYS["identifier"] == ("identification.prior",)
