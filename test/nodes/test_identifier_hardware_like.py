"""The identifier node's ``hardware_like`` parameter: with the simulator's hardware-like data it
states that profile's bounds instead of the catalogue robot's (``simulation.assumptions``), the
launch's ``friction: auto`` resolves to the wide box, explicit parameters still win, and a
profile whose velocities it cannot bound stops the node at start with the reason."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from sysid_ros._src.identification import load_identification_config
from sysid_ros._src.model.robots import load_robot
from sysid_ros._src.nodes.identifier_params import OVERRIDES, identification_overrides
from sysid_ros._src.simulation import HardwareProfile

from .processes import finish, start_node


def _params(**given):
    p: dict = dict.fromkeys(OVERRIDES)
    p.update(calibration="", hardware_like=False)
    p.update(given)
    return p


def test_hardware_like_states_the_profile_and_explicit_values_win():
    gen3 = load_robot("gen3")
    prof = HardwareProfile.from_robot(gen3)
    catalogue = load_identification_config(gen3, **identification_overrides(
        gen3, _params(friction="auto")))
    assert catalogue.friction == "config"
    np.testing.assert_allclose(catalogue.torque_noise_abs,
                               gen3.config["identification"]["torque_noise_abs"])
    hw = load_identification_config(gen3, **identification_overrides(
        gen3, _params(friction="auto", hardware_like=True)))
    assert hw.friction == "wide"
    # 1 kHz: the sensor bound and half of it again for what the samples miss between them
    np.testing.assert_allclose(hw.torque_noise_abs, 1.5 * np.asarray(prof.torque_noise))
    assert np.isclose(hw.torque_noise_rel, 1.5 * prof.torque_noise_rel)
    np.testing.assert_allclose(hw.velocity_noise_abs, prof.velocity_noise)
    own = identification_overrides(gen3, _params(friction="none", hardware_like=True,
                                                 torque_noise_abs=0.7))
    assert own["friction"] == "none" and own["torque_noise_abs"] == 0.7
    calibrated = identification_overrides(gen3, _params(friction="auto", hardware_like=True,
                                                        calibration="calib.yaml"))
    # the calibration's friction box and measured bound stand; the velocity bound is added for
    # what the payload adds (the calibration measured the unloaded arm's share)
    assert set(calibrated) == {"friction", "velocity_noise_abs", "velocity_noise_scope"}
    assert calibrated["velocity_noise_scope"] == "payload"
    assert calibrated["friction"] == "config"
    np.testing.assert_allclose(calibrated["velocity_noise_abs"], prof.velocity_noise)


def test_a_stated_velocity_bound_lets_a_finite_difference_profile_run():
    """The Z1's profile differentiates encoder angles; a user who states a velocity bound
    (here 0.1 rad/s) gets the profile's torque noise and the wide box with that bound."""
    z1 = load_robot("z1")
    kw = identification_overrides(z1, _params(friction="auto", hardware_like=True,
                                              velocity_noise_abs=0.1))
    assert kw["velocity_noise_abs"] == 0.1 and kw["friction"] == "wide"
    prof = HardwareProfile.from_robot(z1)
    np.testing.assert_allclose(kw["torque_noise_abs"], 1.5 * np.broadcast_to(
        prof.torque_noise, (z1.nj,)))


def test_a_profile_without_velocity_bounds_stops_the_node_with_the_reason(tmp_path):
    """The Z1's hardware-like driver differentiates encoder angles: without the robot file's
    premises of the identifier's own estimate (identification.differenced_velocity) no bound
    could be stated, so the node does not start (exit 1) and says what to do."""
    z1 = load_robot("z1")
    config = yaml.safe_load(Path(z1.config_path).read_text())
    del config["identification"]["differenced_velocity"]
    robot_file = tmp_path / "z1.yaml"
    robot_file.write_text(yaml.safe_dump(config))
    proc = start_node("identifier", f"robot:={robot_file}", "hardware_like:=true",
                      env_extra={"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"})
    out = finish(proc, timeout=60.0)
    assert proc.returncode == 1, out
    assert "finite_difference" in out and "velocity_noise_abs" in out, out
