"""The soundness campaign's cases: planned from the seed alone, a drawn Gen3 calibrated and its
payload identified with the truth inside, and the same results from worker processes as in
this process (the executor must not change a case)."""
from __future__ import annotations

import pytest

from sysid_ros._src.batch import run_tasks
from sysid_ros._src.calibration.campaign import calibrate_draw, plan, run_case, tally


def test_plan_spreads_payloads_over_draws_and_is_reproducible():
    a = plan(["gen3", "z1"], payloads=5, rates=[500.0, 1000.0], draws=2, seed=3)
    assert len(a.cases) == 2 * 2 * 5 and len(a.draws) == 2 * 2 * 2
    assert a == plan(["gen3", "z1"], payloads=5, rates=[500.0, 1000.0], draws=2, seed=3)
    assert len({d.seed for d in a.draws}) == len(a.draws)
    gen3 = [c for c in a.cases if c.draw.robot == "gen3"]
    assert all(0.5 <= c.mass_kg <= 3.63 for c in gen3)
    assert {c.draw.index for c in gen3 if c.draw.rate_hz == 500.0} == {0, 1}
    with pytest.raises(ValueError, match="'ur5'"):
        plan(["ur5"], 1, [500.0], 1, 0)
    with pytest.raises(ValueError, match="payloads"):
        plan(["gen3"], 0, [500.0], 1, 0)


@pytest.mark.slow   # default suite stays under 5 min; CI runs the slow ones too
def test_calibrated_case_holds_the_truth_on_every_executor():
    campaign = plan(["gen3"], payloads=2, rates=[500.0], draws=1, seed=1, cal_seconds=10.0,
                    payload_seconds=4.0)
    (cal,) = run_tasks(calibrate_draw, campaign.draws, show_progress=False)
    assert cal.ok and cal.value["refused"] is None, cal.error or cal.value["refused"]
    assert cal.value["friction_inside"]
    tasks = [(c, cal.value["calibration"]) for c in campaign.cases]
    here = run_tasks(run_case, tasks, jobs=1, show_progress=False)
    pooled = run_tasks(run_case, tasks, jobs=2, show_progress=False)
    strip = [{k: v for k, v in o.value.items() if k != "seconds"} for o in here]
    assert strip == [{k: v for k, v in o.value.items() if k != "seconds"} for o in pooled]
    groups = tally(campaign.cases, [o.value for o in here], [o.error for o in here])
    g = groups["gen3@500Hz"]
    assert g["cases"] == 2 and g["wrong"] == 0 and g["errors"] == 0
    # every case is either contained or refused with its reason
    assert g["contained"] + g["refused"] == 2 and len(g["refusals"]) == g["refused"]
    assert [r["status"] for r in strip].count("ok") == g["contained"]


def test_b1_z1_cases_draw_payloads_off_the_class_centre():
    """The standing B1 + Z1 is planned without calibration, its payloads drawn in the demo's
    payload class off its centre (reproducibly from the plan's seed)."""
    from sysid_ros._src.model.robots import load_robot
    from sysid_ros._src.simulation.offcentre import MASS_FRACTION

    a = plan(["b1_z1"], payloads=2, rates=[500.0], draws=1, seed=4)
    assert a == plan(["b1_z1"], payloads=2, rates=[500.0], draws=1, seed=4)
    robot = load_robot("b1_z1")
    box = robot.config["demo"]["prior_box"]
    lo, hi = box["lower"][0], box["upper"][0]
    body = float(robot.theta_e()[0])        # the joint6 body + gripper, without payload
    for c in a.cases:
        assert c.class_seed is not None
        place = (body + c.mass_kg - 0.5 * (lo + hi)) / (0.5 * (hi - lo))
        assert MASS_FRACTION[0] - 0.05 <= abs(place) <= MASS_FRACTION[1] + 0.05
    assert calibrate_draw(a.draws[0])["uncalibrated"]


@pytest.mark.slow
def test_b1_z1_case_holds_the_truth():
    """One B1 + Z1 hardware-like case: ok, the truth inside, placed in the class and the box."""
    campaign = plan(["b1_z1"], payloads=1, rates=[500.0], draws=1, seed=0, payload_seconds=3.0)
    (out,) = run_tasks(run_case, [(campaign.cases[0], None)], show_progress=False)
    assert out.ok, out.error
    res = out.value
    assert res["status"] == "ok" and res["contains"], res
    assert 0.3 - 0.05 <= abs(res["mass_place_in_class"]) <= 0.8 + 0.05
    assert -1.0 <= res["mass_place_in_box"] <= 1.0
    groups = tally(campaign.cases, [res], [None])
    assert groups["b1_z1@500Hz"]["contained"] == 1
