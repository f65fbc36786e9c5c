"""The soundness campaign's cases: planned from the seed alone, a drawn Gen3 calibrated and its
payload identified with the truth inside, and the same results from worker processes as in
this process (the executor must not change a case)."""
from __future__ import annotations

import pytest

from sysid_ros.batch import run_tasks
from sysid_ros.calibration.campaign import calibrate_draw, plan, run_case, tally


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
