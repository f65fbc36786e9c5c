"""The online identifier applies the calibration's torque lag and exclusion rule as the offline
one does. One hardware-like MuJoCo robot with a known torque lag (real Gen3 logs: 60-120 ms) and
a drive speed clamp with a torque error of several N·m while at it; the calibration writes the
estimated lag and the rule. The payload recording is then fed message by message through
:class:`IdentifierRuntime`, updated every 0.5 s as the node does, and compared with
:func:`identify` on the whole recording (the independent reference: one LP over all rows).

- the online box equals the offline one to the LPs' tolerance, and holds the truth;
- the rows the rule dropped, by reason, are the same online (``/diagnostics``) and offline
  (the result's notes);
- without the calibrated lag the online identifier is loudly ``inconsistent``, as offline.

Assumptions: calibration and payload recordings share robot, driver, lag and clamp; the noise
bound is measured (empirical margin); the LPs keep every row (fewer than ``online_lp_rows``).
"""
from __future__ import annotations

import ast
import re

import numpy as np
import pytest

from sysid_ros import apply_calibration
from sysid_ros._src.calibration import CalibrationOptions, calibrate
from sysid_ros._src.calibration.document import calibration_document
from sysid_ros._src.calibration.synthetic import draw_case
from sysid_ros._src.identification import OnlineIdentifier, identify, load_identification_config
from sysid_ros._src.identification.config import IdentificationConfig
from sysid_ros._src.identification.identifier_runtime import IdentifierRuntime
from sysid_ros._src.model.robots import Robot, load_robot

pytestmark = pytest.mark.slow

LAG = (0.10, 0.06, 0.08, 0.08, 0.12, 0.10, 0.10)   # s, as measured on real Gen3 logs
CLAMP, CLAMP_ERROR = 0.3, 4.0                        # rad/s, N·m (real Gen3: 4-30 N·m)
UPDATE_SAMPLES = 250                                 # 0.5 s at 500 Hz: the node's update period


@pytest.fixture(scope="module")
def calibrated():
    gen3 = load_robot("gen3")
    case = draw_case(gen3, 0, cal_seconds=(12.0,), payload_seconds=8.0, rate_hz=500.0,
                     torque_lag=LAG, velocity_limit=CLAMP, velocity_limit_error=CLAMP_ERROR)
    rule = np.full(gen3.nj, 0.9 * CLAMP)
    res = calibrate(gen3, case.recordings(),
                    CalibrationOptions(link_boxes=False, exclude_speed=rule))
    robot = apply_calibration(gen3, calibration_document(res))
    return robot, case.payload, rule


def _online(robot: Robot, config: IdentificationConfig, pay) -> IdentifierRuntime:
    """The node's path: callbacks buffer each joint state, the worker updates periodically."""
    rt = IdentifierRuntime(OnlineIdentifier(robot, config, point_estimate=False), config)
    for a in range(0, pay.t.size, UPDATE_SAMPLES):
        for k in range(a, min(a + UPDATE_SAMPLES, pay.t.size)):
            rt.joint_state(pay.t[k], pay.q[k], pay.dq[k], pay.tau_meas[k])
        rt.update()
    return rt


def _offline_excluded(notes: list[str]) -> dict[str, int]:
    """The rows dropped by reason, as the offline result's note reports them."""
    found = [m for n in notes if (m := re.search(r"excluded by the stated rule .*?: (\d+) rows "
                                                 r"(\{[^}]*\})", n))]
    assert len(found) == 1, notes
    counts = ast.literal_eval(found[0].group(2))
    assert sum(counts.values()) == int(found[0].group(1))
    return counts


def test_online_box_and_exclusions_equal_offline_with_lag_and_rule(calibrated):
    robot, pay, rule = calibrated
    config = load_identification_config(robot)
    assert np.all(np.abs(config.torque_lag_s - LAG) <= 0.03)      # the lag is the calibrated one
    np.testing.assert_allclose(config.exclude_speed_rad_s, rule)
    offline = identify(robot, config, pay.t, pay.q, pay.dq, pay.tau_meas, "lp",
                       point_estimate=False)
    assert offline.status == "ok", offline.reason
    assert offline.contains(pay.truth.theta_e)

    rt = _online(robot, config, pay)
    ident = rt.ident
    assert ident.status == "ok", ident.reason
    assert len(ident.rows) < config.online_lp_rows          # no row dropped: one LP's box
    width = offline.upper - offline.lower
    np.testing.assert_allclose(ident.lower, offline.lower, rtol=0, atol=1e-4 * width.min())
    np.testing.assert_allclose(ident.upper, offline.upper, rtol=0, atol=1e-4 * width.min())
    assert ident.box.contains(pay.truth.theta_e)
    assert rt.box() is not None and rt.box().contains(pay.truth.theta_e)

    expected = {k: v for k, v in _offline_excluded(offline.notes).items() if v}
    assert expected.get("speed_at_limit", 0) > 0 and expected.get("run_start", 0) > 0
    assert {k: v for k, v in ident.windows.excluded.items() if v} == expected
    shown = rt.report().values["excluded_rows"]
    assert shown == ", ".join(f"{k} {v}" for k, v in ident.windows.excluded.items())


def test_online_without_the_calibrated_lag_is_inconsistent(calibrated):
    robot, pay, _ = calibrated
    bare = load_identification_config(robot, torque_lag_s=0.0, torque_lag_radius_s=0.0)
    offline = identify(robot, bare, pay.t, pay.q, pay.dq, pay.tau_meas, "lp",
                       point_estimate=False)
    assert offline.status == "inconsistent"
    rt = _online(robot, bare, pay)
    assert rt.ident.status == "inconsistent"
    assert rt.box() is None and rt.report().level == "error"
