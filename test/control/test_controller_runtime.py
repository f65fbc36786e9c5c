"""The controller runtime's state machine driven by plain calls with explicit time: stale
joint_states and a frozen /clock on the steady clock, activation refused while stale,
auto re-activation, diagnostics of the last period (a NaN clears), the identifier's silence,
settings validation."""
from __future__ import annotations

import numpy as np
import pytest

from sysid_ros._src.control.errors import ControllerConfigError
from sysid_ros._src.control.controller_runtime import ERROR, OK, WARN, ControllerSettings, build_runtime


def _runtime(use_sim_time=False, **kw):
    rt = build_runtime(ControllerSettings(**kw), use_sim_time=use_sim_time, steady=0.0)
    q = np.array(rt.robot.config["simulation"]["home"])
    return rt, q


def _stream(rt, q, t0, t1, dt=0.001, stamp0=1.0):
    """Fresh joint states every dt steady seconds in [t0, t1); returns the commands."""
    out = []
    for t in np.arange(t0, t1, dt):
        out.append(rt.joint_state(t, stamp0 + t, q, np.zeros(rt.robot.nj)))
    return out


def test_stale_joint_states_stop_commands_deactivate_and_need_fresh_data_to_resume():
    rt, q = _runtime(stale_timeout=0.02)
    assert rt.activate(0.0) == ""
    cmds = _stream(rt, q, 0.0, 0.1)
    assert all(c is not None for c in cmds) and rt.counters.commands == len(cmds)
    last = 0.099
    assert rt.tick(last + 0.015, 0.0) is None                  # 15 ms: still fresh
    assert rt.command(last + 0.015) is not None
    assert rt.command(last + 0.021) is None                    # stale: no command at once
    action = rt.tick(last + 0.021, 0.0)
    assert action is not None and action.kind == "deactivate" and "joint_states stale" in \
        action.reason
    assert not rt.active and rt.counters.stale_events == 1
    st = rt.status(last + 0.03)
    assert st.level == ERROR and "stale" in st.message
    # re-activation is refused while stale; a fresh state allows it; no auto re-activation
    assert "refused" in rt.activate(last + 0.5)
    assert rt.tick(last + 0.5, 0.0) is None
    _stream(rt, q, 1.0, 1.005)
    assert rt.tick(1.005, 0.0) is None and not rt.active     # operator activates (hardware)
    assert rt.status(1.005).level == ERROR                     # still says why it stopped
    assert rt.activate(1.005) == "" and rt.active
    assert rt.status(1.006).level == OK


def test_auto_reactivate_resumes_the_trajectory_an_operator_activation_drops_it():
    from sysid_ros._src.control.trajectory import JointTrajectoryArrays
    rt, q = _runtime(stale_timeout=0.02, auto_reactivate=True, accept_uncertified=True)
    assert rt.activate(0.0) == ""
    _stream(rt, q, 0.0, 0.05)
    z = np.zeros((2, 7))
    target = q + 0.05
    traj = JointTrajectoryArrays.from_arrays([0.5, 2.0], [target, target], z, z,
                                             rt.robot.joint_names, rt.robot.joint_names, 0.0)
    assert rt.trajectory(1.05, traj, "").accepted
    assert rt.tick(0.2, 0.0).kind == "deactivate"
    assert rt.tick(0.3, 0.0) is None                           # no data yet
    _stream(rt, q, 0.4, 0.41)
    action = rt.tick(0.41, 0.0)
    assert action is not None and action.kind == "activate"
    assert rt.activate(0.41) == ""
    np.testing.assert_allclose(rt.queue.reference_at(10.0).q, target)   # resumed
    # an operator's activation (after a manual deactivation) starts from the measured pose
    rt.deactivate()
    assert rt.activate(0.42) == ""
    np.testing.assert_allclose(rt.queue.reference_at(10.0).q, q)


def test_frozen_clock_under_sim_time_is_stale_but_not_on_wall_time():
    for sim_time, expect in ((True, "deactivate"), (False, None)):
        rt, q = _runtime(use_sim_time=sim_time, stale_timeout=0.5, clock_timeout=0.1)
        assert rt.activate(0.0) == ""
        ros = 5.0
        for k in range(50):                                    # ROS time advances
            steady = 0.002 * k
            rt.joint_state(steady, ros + steady, q, np.zeros(7))
            assert rt.tick(steady, ros + steady) is None
        for k in range(1, 100):                                # /clock frozen, states keep coming
            steady = 0.1 + 0.002 * k
            rt.joint_state(steady, ros, q, np.zeros(7))
            action = rt.tick(steady, ros + 0.098)
            if action is not None:
                break
        assert (action.kind if action else None) == expect, sim_time
        if expect:
            frozen_since = 0.098                               # last change of ROS time
            assert "/clock stopped" in action.reason
            assert 0.1 < steady - frozen_since <= 0.1 + 0.002 + 1e-9   # within one tick


def test_nan_joint_state_is_an_error_for_its_period_only():
    rt, q = _runtime()
    assert rt.activate(0.0) == ""
    _stream(rt, q, 0.0, 0.01)
    rt.joint_state_rejected("non-finite position for ['joint_2']")
    st = rt.status(0.01)
    assert st.level == ERROR and "joint_2" in st.message
    rt.end_period()
    _stream(rt, q, 0.01, 0.02)
    assert rt.status(0.02).level == OK


def test_identifier_silence_warns_with_the_bounds_age_but_keeps_commanding():
    rt, q = _runtime(stale_timeout=0.02, bounds_warn_after=2.0)
    assert rt.activate(0.0) == ""
    prior = rt.ctl.prior
    _stream(rt, q, 0.0, 0.01)
    assert rt.status(0.01).level == OK
    rt.bounds(0.5, prior)
    _stream(rt, q, 2.0, 2.01)
    st = rt.status(2.01)
    assert st.level == OK and float(st.values["bounds_age_s"]) == pytest.approx(1.51, abs=1e-6)
    cmds = _stream(rt, q, 3.0, 3.01)
    st = rt.status(3.01)
    assert st.level == WARN and "identifier silent" in st.message
    assert all(c is not None for c in cmds)
    rt.bounds(3.02, prior)
    assert rt.status(3.02).level == OK


def test_settings_name_the_bad_parameter():
    with pytest.raises(ControllerConfigError, match="stale_timeout"):
        ControllerSettings.from_mapping({"stale_timeout": 0.0})
    with pytest.raises(ControllerConfigError, match="watchdog_period"):
        ControllerSettings.from_mapping({"stale_timeout": 0.01, "watchdog_period": 0.02})
    with pytest.raises(ControllerConfigError, match="accept_uncertified"):
        ControllerSettings.from_mapping({"accept_uncertified": "yes"})
    with pytest.raises(ControllerConfigError, match="unknown"):
        ControllerSettings.from_mapping({"stale_timeuot": 0.1})
