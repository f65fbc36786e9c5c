"""The calibration prior with an unknown tool (``sysid-calibrate --prior``): the end-effector
body's box is the named prior's, exactly as the identifier loads it, everything else unchanged;
a known payload and a tool prior exclude each other; an unknown name is refused, named."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.calibration import CalibrationOptions, calibrate
from sysid_ros._src.calibration.errors import CalibrationInputError
from sysid_ros._src.calibration.prior import calibration_prior
from sysid_ros._src.calibration.synthetic import draw_case
from sysid_ros._src.identification import load_identification_config
from sysid_ros._src.model.robots import load_robot


def test_tool_prior_replaces_only_the_end_effector_box():
    gen3 = load_robot("gen3")
    base, tool = calibration_prior(gen3), calibration_prior(gen3, ee_prior="none")
    ee = gen3.ee_columns
    box = load_identification_config(gen3, prior="none").prior
    np.testing.assert_array_equal(tool.lower[ee], box.lower)
    np.testing.assert_array_equal(tool.upper[ee], box.upper)
    assert box.lower[0] < 0.364 < base.lower[ee][0]     # the bare bracelet fits, not the URDF
    rest = np.ones(base.lower.size, bool)
    rest[ee] = False
    np.testing.assert_array_equal(tool.lower[rest], base.lower[rest])
    np.testing.assert_array_equal(tool.upper[rest], base.upper[rest])
    assert np.all(tool.lower <= tool.nominal) and np.all(tool.nominal <= tool.upper)
    assert "none" in tool.describe()
    with pytest.raises(ValueError, match="exclude each other"):
        calibration_prior(gen3, payload_theta=np.zeros(10), ee_prior="none")


def test_unknown_tool_prior_is_refused_naming_it():
    gen3 = load_robot("gen3")
    case = draw_case(gen3, 0, cal_seconds=(1.0,), payload_seconds=0.0)
    with pytest.raises(CalibrationInputError, match="no_such_tool"):
        calibrate(gen3, case.recordings(), CalibrationOptions(ee_prior="no_such_tool"))


@pytest.mark.slow
def test_calibration_with_an_unknown_tool_holds_the_truth_only_with_a_tool_prior():
    """The arm calibrated while it carries a tool the URDF does not know (the 2F-85 plus a 1 kg
    dumbbell): with the URDF's end-effector box the calibrated friction misses the drawn truth
    or the calibration refuses; with ``ee_prior="none"`` (the tool inside that prior) every
    friction box holds it, as sysid-calibrate --prior none."""
    from sysid_ros._src.calibration.synthetic import GEN3_TRUTH, as_recording
    from sysid_ros._src.simulation import HardwareProfile, dumbbell_for, random_hardware_truth, \
        record_hardware_like

    gen3 = load_robot("gen3")
    rng = np.random.default_rng(4)
    prof = HardwareProfile.from_robot(gen3, rate_hz=500.0, physics_dt=None, drop_prob=0.01)
    hw = random_hardware_truth(gen3, rng, **GEN3_TRUTH)
    tool = dumbbell_for(gen3, 1.0)
    recs = [record_hardware_like(gen3, rng, tool, 12.0, prof, hw) for _ in range(2)]
    theta_ee = recs[0].truth.theta_e
    assert load_identification_config(gen3, prior="none").prior.contains(theta_ee)
    truth = recs[0].truth.friction
    cal = [as_recording(r, f"tool-{k}") for k, r in enumerate(recs)]

    def holds(options: CalibrationOptions) -> bool:
        try:
            res = calibrate(gen3, cal, options)
        except CalibrationInputError:
            return False
        return bool(np.all((truth >= res.friction_lower) & (truth <= res.friction_upper)))

    assert holds(CalibrationOptions(ee_prior="none"))
    assert not holds(CalibrationOptions())
