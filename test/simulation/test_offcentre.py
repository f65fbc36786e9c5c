"""Payloads drawn inside a payload class, off its centre: checked against what MuJoCo simulates."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.demo.class_payload import class_prior, mass_placement, write_payload_params
from sysid_ros._src.model.box import theta_e_box
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation import build_mujoco_model
from sysid_ros._src.simulation.errors import PayloadError
from sysid_ros._src.simulation.offcentre import MASS_FRACTION, draw_in_class, is_payload_class
from sysid_ros._src.simulation.sim_runtime import RuntimeSettings, SimRuntime

from .mujoco_bodies import mj_body_theta


def _class(name: str) -> tuple[np.ndarray, np.ndarray]:
    robot = load_robot(name)
    box = (robot.config["demo"]["prior_box"] if name == "b1_z1"
           else robot.config["identification"]["priors"][robot.config["demo"].get(
               "prior", "dumbbell_8lb")])
    return np.asarray(box["lower"], float), np.asarray(box["upper"], float)


@pytest.mark.parametrize("name", ["gen3", "z1", "b1_z1"])
def test_drawn_payload_is_simulated_inside_its_class_off_centre(name):
    """The demos' classes (Gen3 dumbbell_8lb, Z1 dumbbell_1kg, B1 + Z1 demo.prior_box): for
    several seeds the EE body MuJoCo compiles with the drawn payload lies in the class in all 10
    coordinates, its mass 0.3-0.8 of the half-width from the centre; seeds differ."""
    robot = load_robot(name)
    lo, hi = _class(name)
    centre, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    masses = []
    for seed in range(4):
        draw = draw_in_class(robot, lo, hi, seed)
        mjr = build_mujoco_model(robot, draw.payload)
        theta = mj_body_theta(mjr.model, mjr.ee_body)
        np.testing.assert_allclose(theta, draw.theta_e, rtol=1e-9, atol=1e-12)
        assert np.all(lo <= theta) and np.all(theta <= hi), (seed, (theta - centre) / half)
        off = abs(theta[0] - centre[0]) / half[0]
        assert MASS_FRACTION[0] - 1e-9 <= off <= MASS_FRACTION[1] + 1e-9
        masses.append(theta[0])
    assert len(set(np.round(masses, 9))) == 4
    again = draw_in_class(robot, lo, hi, 2)
    np.testing.assert_array_equal(again.theta_e, draw_in_class(robot, lo, hi, 2).theta_e)


def test_the_sim_carries_the_drawn_payload_from_its_parameters(tmp_path):
    """The payload reaches the simulator as the demo passes it (a sim parameters file): the
    runtime's truth is the drawn θ_e."""
    import yaml

    robot = load_robot("z1")
    lo, hi = _class("z1")
    draw = draw_in_class(robot, lo, hi, 0)
    params = yaml.safe_load(write_payload_params(draw.payload, tmp_path).read_text())
    settings = {"payload_mass": draw.payload.mass,
                **{k: tuple(v) for k, v in params["/**"]["ros__parameters"].items()}}
    rt = SimRuntime(robot, RuntimeSettings.from_parameters(settings))
    np.testing.assert_allclose(rt.sim.true_theta_e(), draw.theta_e, rtol=1e-12, atol=1e-15)


def test_generic_tool_boxes_are_not_classes():
    """The Gen3's 2f85 and the Z1's rated boxes contain the unloaded body: nothing is drawn."""
    gen3, z1 = load_robot("gen3"), load_robot("z1")
    assert class_prior(gen3) is None and class_prior(z1) is None
    box = prior_box(gen3)
    assert not is_payload_class(gen3, box.lower)
    with pytest.raises(PayloadError, match="not a payload class"):
        draw_in_class(gen3, box.lower, box.upper, 0)


def test_mass_placement_reads_the_places():
    """The report's line: truth and box placed in the class, the box's width as a fraction."""
    klass = theta_e_box(np.r_[4.0, np.zeros(9)], np.r_[6.0, np.ones(9)])
    final = theta_e_box(np.r_[5.0, np.zeros(9)], np.r_[5.5, np.ones(9)])
    truth = np.r_[5.4, np.full(9, 0.5)]
    line = mass_placement(klass, truth, final)
    assert line == ("class [4, 6] kg, truth 5.4 kg (+0.40 in the class); final box [5, 5.5] kg, "
                    "0.25 of the class's width, truth at +0.60 in it")
