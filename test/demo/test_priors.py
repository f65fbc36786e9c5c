"""The Z1's start decision (docs/theory/planner.md#sound-reachability): which prior a demo run starts from, the run's
robot facts file every node reads, and the pre-flight refusal — checked against the planner's
own sound reachability and the identifier's prior loader, not against stored numbers."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.demo.demo_cli import EXIT_BAD_INPUT, EXIT_REFUSED, main
from sysid_ros._src.demo.errors import DemoConfigError
from sysid_ros._src.demo.priors import demo_prior, robot_with_prior, start_refusal
from sysid_ros._src.errors import SysidError
from sysid_ros._src.identification import load_identification_config
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.simulation.payload import dumbbell_for, true_theta_e


@pytest.fixture(scope="module")
def z1():
    return load_robot("z1")


def test_prior_choice_follows_controller_and_option(z1):
    assert demo_prior(z1, None, "robust") == z1.config["demo"]["prior"] == "dumbbell_1kg"
    # baselines never identify: they know only the robot file's default class
    assert demo_prior(z1, None, "conservative") == z1.config["identification"]["prior"] == "rated"
    assert demo_prior(z1, "rated", "robust") == "rated"
    with pytest.raises(DemoConfigError, match="no_such_class") as err:
        demo_prior(z1, "no_such_class", "robust")
    assert isinstance(err.value, SysidError)


def test_run_facts_file_carries_the_prior_to_every_reader(z1, tmp_path):
    path = robot_with_prior(z1, "dumbbell_1kg", tmp_path)
    run = load_robot(path)
    np.testing.assert_array_equal(run.theta(), z1.theta())
    box = prior_box(run)                           # controller and planner
    ident = load_identification_config(run)        # identifier
    named = load_identification_config(z1, prior="dumbbell_1kg")
    np.testing.assert_array_equal(box.lower, named.prior.lower)
    np.testing.assert_array_equal(ident.prior.upper, named.prior.upper)
    assert box == ident.prior                      # one box type, same frame and nominal
    truth = true_theta_e(z1, dumbbell_for(z1, z1.config["demo"]["payload"]))
    assert np.all((box.lower <= truth) & (truth <= box.upper)), "the class holds the demo payload"
    assert box.lower[0] > z1.theta_e()[0]          # a loaded class: the bare body is outside


def test_rated_prior_is_refused_and_the_payload_class_is_not(z1, tmp_path):
    """Holding the start pose is the least a plan can ask; from the rated class even that needs
    more than joint 3's torque limit (the mass-metric robust input over a 0-2 kg box)."""
    home = np.asarray(z1.config["simulation"]["home"], float)
    reasons = start_refusal(z1, home)
    assert any("torque limit: joint joint3" in r for r in reasons), reasons
    assert start_refusal(load_robot(robot_with_prior(z1, "dumbbell_1kg", tmp_path)), home) == []


def test_demo_refuses_before_starting_anything(tmp_path, capsys):
    out = tmp_path / "refused"
    assert main(["--robot", "z1", "--prior", "rated", "--out", str(out)]) == EXIT_REFUSED
    err = capsys.readouterr().err
    assert "refused" in err and "rated" in err and "joint3" in err
    assert not (out / "bag").exists() and not (out / "graph.log").exists()   # nothing ran
    assert main(["--robot", "z1", "--prior", "nope", "--out", str(out)]) == EXIT_BAD_INPUT



def test_hardware_like_demo_needs_a_calibration(tmp_path, capsys):
    """``--hardware-like`` with the robust controller and no ``--calibration``: the controller's
    and the planner's friction box would be the catalogue robot's, which the drawn robot lies
    outside, so the demo refuses before anything runs and says how to calibrate; a calibration
    file that does not exist is bad input."""
    out = tmp_path / "hw"
    assert main(["--hardware-like", "--prior", "dumbbell_8lb", "--out", str(out)]) == EXIT_REFUSED
    err = capsys.readouterr().err
    assert "--calibration" in err and "sysid-sim-record" in err
    assert not (out / "graph.log").exists()
    assert main(["--hardware-like", "--calibration", str(tmp_path / "missing.yaml"),
                 "--out", str(out)]) == EXIT_BAD_INPUT
    # the Z1's driver differentiates encoder angles: the identifier bounds its own estimate
    # (test/identification/test_velocity_estimate.py), but the robust law would be fed the
    # differences, beyond the velocity error its robot file says it tolerates: refused up
    # front, before the calibration is even asked for
    capsys.readouterr()
    assert main(["--robot", "z1", "--hardware-like", "--out", str(out)]) == EXIT_REFUSED
    err = capsys.readouterr().err
    assert "velocity_error_max" in err and "finite_difference" in err
    assert not (out / "graph.log").exists()
