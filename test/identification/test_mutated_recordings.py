"""Property tests: a simulated Gen3 recording (known payload) mutated the ways real drivers and
loggers damage recordings — NaN/inf values, zero, duplicate, backward and far-future stamps,
messages without a joint, a persistent jump back, a joint set that changes — goes through
``sysid-identify`` (a real bag) and through the online identifier (the node's runtime, fed the
same messages in the same order). Each mutation gives either the documented skip-and-report —
counts by kind exactly the injected ones, the same counts online and offline, and a box that
is the box of the recording with exactly those messages removed (computed without the bag
reader) and holds the truth — or a clear refusal (exit 2 naming what is wrong), never a
silently different box. docs/guide/recordings.md has the table."""
from __future__ import annotations

import contextlib
import io
import json
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sysid_ros._src.bagio import BagWriter, default_typestore
from sysid_ros._src.identification import OnlineIdentifier, identify, load_identification_config
from sysid_ros._src.identification.identify_cli import main as identify_main
from sysid_ros._src.identification.identifier_runtime import IdentifierRuntime
from sysid_ros._src.simulation.synthetic import random_payload_theta, simulate
from sysid_ros._src.sample_screen import FAR_FUTURE_S, PERSISTENT

TS = default_typestore()
JS, HEADER, TIME = (TS.types[k] for k in ("sensor_msgs/msg/JointState", "std_msgs/msg/Header",
                                          "builtin_interfaces/msg/Time"))
T0_NS = 100 * 10**9
SKIPPED = ("non_finite", "zero_stamp", "duplicate_stamp", "backward_stamp", "far_future_stamp",
           "missing_joint")
SETTINGS = settings(max_examples=4, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def sim(gen3):
    rng = np.random.default_rng(33)
    theta = gen3.theta_e() + random_payload_theta(rng, 3.0)
    # 1 s at 1 kHz with the catalogue friction box: a box well inside the prior (a used bad
    # sample moves it), 1001 messages
    run = simulate(gen3, rng, theta_e=theta, duration=1.0, rate_hz=1000.0, noise_rel=0.025)
    cfg = load_identification_config(gen3, torque_noise_rel=0.025, torque_noise_abs=0.0,
                                     friction="config")
    stamps = T0_NS + np.round(run.t * 1e9).astype(np.int64)
    msgs = [(int(stamps[i]), list(gen3.joint_names), run.q[i], run.dq[i], run.tau_meas[i])
            for i in range(len(run.t))]
    return gen3, theta, cfg, msgs


def _write(path: Path, msgs) -> Path:
    with BagWriter(path, storage="mcap", chunk_seconds=None) as w:
        for k, (ns, names, pos, vel, eff) in enumerate(msgs):
            ns_ = max(int(ns), 0)
            w.write("/joint_states", JS(
                header=HEADER(stamp=TIME(sec=ns_ // 10**9, nanosec=ns_ % 10**9), frame_id=""),
                name=list(names), position=np.asarray(pos, float),
                velocity=np.asarray(vel, float), effort=np.asarray(eff, float)),
                10**9 + k)        # receive order = list order
    return path


# -- mutations: (messages, indices of the original messages kept, expected counts) ----------
GARBAGE = 40.0      # a bad message's effort is off by this: if it were used, the box would move


def _mutate(msgs, edits, rng):
    """Apply ``edits`` [(kind, position)] (distinct positions) to the original messages."""
    out, kept, counts = [], [], Counter()
    edits = {p: k for k, p in edits}
    for i, m in enumerate(msgs):
        ns, names, q, dq, tau = m
        kind = edits.get(i)
        if kind == "non_finite":
            field = int(rng.integers(3))
            vals = [q.copy(), dq.copy(), tau.copy()]
            vals[field][int(rng.integers(len(names)))] = rng.choice([np.nan, np.inf, -np.inf])
            out.append((ns, names, *vals))
            counts[kind] += 1
            continue
        out.append(m)
        kept.append(i)
        if kind is None:
            continue
        bad_tau = tau + GARBAGE
        if kind == "zero_stamp":
            out.append((0, names, q, dq, bad_tau))
        elif kind == "duplicate_stamp":
            out.append((ns, names, q, dq, bad_tau))
        elif kind == "backward_stamp":
            out.append((ns - int(rng.integers(1, 5 * 10**8)), names, q, dq, bad_tau))
        elif kind == "far_future_stamp":
            ahead = int(FAR_FUTURE_S * 1e9) + int(rng.integers(1, 10**12))
            out.append((ns + ahead, names, q, dq, bad_tau))
        elif kind == "missing_joint":
            j = int(rng.integers(len(names)))
            keep = [k for k in range(len(names)) if k != j]
            out.append((ns, [names[k] for k in keep], q[keep], dq[keep], bad_tau[keep]))
        counts[kind] += 1
    return out, kept, counts


def _edits(data, n):
    """Every kind once, and up to three more, at distinct positions inside the recording."""
    kinds = list(SKIPPED) + data.draw(st.lists(st.sampled_from(SKIPPED), max_size=3),
                                      label="more kinds")
    at = data.draw(st.lists(st.integers(5, n - 5), min_size=len(kinds), max_size=len(kinds),
                            unique=True), label="positions")
    return list(zip(kinds, at))


def _cli(tmp: Path, msgs) -> tuple[int, dict | None, str]:
    bag = _write(tmp / "bag", msgs)
    out = tmp / "r.json"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = identify_main(["--robot", "gen3", "--bag", str(bag), "--out", str(out),
                            "--torque-noise-rel", "0.025", "--friction", "config",
                            "--no-progress"])
    return rc, json.loads(out.read_text()) if out.exists() else None, err.getvalue()


def _reference(sim, kept):
    """The box of exactly the kept messages, from arrays (no bag reader, no screen)."""
    robot, _, cfg, msgs = sim
    rows = [msgs[i] for i in kept]
    t = np.array([m[0] for m in rows]) * 1e-9
    q, dq, tau = (np.array([m[k] for m in rows]) for k in (2, 3, 4))
    return identify(robot, cfg, t, q, dq, tau, point_estimate=False)


def _online(sim, msgs, chunk=200):
    """The node's runtime fed the messages in order (missing joints as the node hands them)."""
    robot, _, cfg, _ = sim
    rt = IdentifierRuntime(OnlineIdentifier(robot, cfg, point_estimate=False), cfg)
    names = list(robot.joint_names)
    for k, (ns, mnames, q, dq, tau) in enumerate(msgs):
        if list(mnames) == names:
            rt.joint_state(ns * 1e-9, np.asarray(q), np.asarray(dq), np.asarray(tau))
        else:
            missing = [j for j in names if j not in mnames]
            rt.joint_state_missing(ns * 1e-9, f"missing joints {missing}", tuple(mnames))
        if (k + 1) % chunk == 0:
            rt.update()
    rt.update()
    return rt


@settings(SETTINGS, max_examples=6)
@given(data=st.data())
def test_skipped_kinds_are_counted_and_leave_the_box_of_the_kept_messages(sim, data):
    robot, theta, cfg, msgs = sim
    edits = _edits(data, len(msgs))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    mutated, kept, counts = _mutate(msgs, edits, rng)
    with tempfile.TemporaryDirectory() as tmp:
        rc, doc, err = _cli(Path(tmp), mutated)
    assert rc == 0 and doc is not None, err
    assert doc["data"]["skipped"]["by_kind"] == dict(counts), err
    assert f"skipped {sum(counts.values())} message(s)" in err
    ref = _reference(sim, kept)
    assert doc["status"] == ref.status == "ok"
    np.testing.assert_allclose(doc["lower"], ref.lower, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(doc["upper"], ref.upper, rtol=1e-9, atol=1e-12)
    lo, hi = np.array(doc["lower"]), np.array(doc["upper"])
    assert np.all(lo <= theta) and np.all(theta <= hi)
    assert np.any(hi - lo < 0.9 * (cfg.prior.upper - cfg.prior.lower))   # the data bind
    # online: the same messages give the same counts by kind, and a box holding the truth
    rt = _online(sim, mutated)
    assert dict(rt.ident.screen.log.counts) == dict(counts)
    assert rt.ident.n_restarts == 0 and rt.ident.status == "ok"
    assert np.all(rt.ident.lower <= theta) and np.all(theta <= rt.ident.upper)


@SETTINGS
@given(at=st.integers(50, 400), back=st.floats(0.05, 0.3))
def test_a_persistent_jump_back_is_refused_offline_and_restarts_online(sim, at, back):
    """The recording again from its start, appended at ``at`` with stamps starting ``back`` s
    behind the last one: refused offline naming the message; online the windows restart once
    (the new run's first messages counted), and the box still holds the truth."""
    robot, theta, cfg, msgs = sim
    shift = msgs[at - 1][0] - int(back * 1e9) - msgs[0][0]
    mutated = msgs[:at] + [(m[0] + shift,) + tuple(m[1:]) for m in msgs]
    with tempfile.TemporaryDirectory() as tmp:
        rc, doc, err = _cli(Path(tmp), mutated)
    assert rc == 2 and doc is None
    assert f"message {at + PERSISTENT - 1}: time jumped back persistently" in err, err
    rt = _online(sim, mutated)
    assert rt.ident.n_restarts == 1
    assert dict(rt.ident.screen.log.counts) == {"backward_stamp": PERSISTENT - 1}
    assert rt.ident.status == "ok"
    assert np.all(rt.ident.lower <= theta) and np.all(theta <= rt.ident.upper)


@SETTINGS
@given(at=st.integers(20, 400), joint=st.integers(0, 6))
def test_a_changed_joint_set_is_refused_offline_and_an_error_online(sim, at, joint):
    robot, theta, cfg, msgs = sim
    keep = [k for k in range(robot.nj) if k != joint]
    mutated = msgs[:at] + [(m[0], [m[1][k] for k in keep], m[2][keep], m[3][keep], m[4][keep])
                           for m in msgs[at:]]
    with tempfile.TemporaryDirectory() as tmp:
        rc, doc, err = _cli(Path(tmp), mutated)
    assert rc == 2 and doc is None
    assert f"message {at + PERSISTENT - 1}: the joint set changed" in err, err
    rt = _online(sim, mutated)
    assert rt.ident.screen.log.counts == {"missing_joint": PERSISTENT - 1,
                                          "joint_set_changed": len(msgs) - at - PERSISTENT + 1}
    report = rt.report()
    assert report.level == "error" and "joint set changed" in report.message
    assert robot.joint_names[joint] in report.message


@SETTINGS
@given(at=st.integers(20, 900), ahead=st.floats(0.05, 0.95))
def test_one_stamp_ahead_by_less_than_a_second_is_taken_back(sim, at, ahead):
    """One message stamped ``ahead`` s late (0.05-0.95 s, under the far-future
    threshold): the messages after it are behind it until PERSISTENT of them show it out of
    line; it is taken back, those skipped meanwhile counted, and the box is that of the rest —
    offline and online the same counts."""
    robot, theta, cfg, msgs = sim
    mutated = list(msgs)
    mutated[at] = (msgs[at][0] + int(ahead * 1e9),) + tuple(msgs[at][1:])
    with tempfile.TemporaryDirectory() as tmp:
        rc, doc, err = _cli(Path(tmp), mutated)
    counts = {"far_future_stamp": 1, "backward_stamp": PERSISTENT - 1}
    assert rc == 0 and doc is not None, err
    assert doc["data"]["skipped"]["by_kind"] == counts
    ref = _reference(sim, [k for k in range(len(msgs)) if not at <= k < at + PERSISTENT])
    np.testing.assert_allclose(doc["lower"], ref.lower, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(doc["upper"], ref.upper, rtol=1e-9, atol=1e-12)
    assert np.all(np.array(doc["lower"]) <= theta) and np.all(theta <= np.array(doc["upper"]))
    rt = _online(sim, mutated)
    assert dict(rt.ident.screen.log.counts) == counts and rt.ident.status == "ok"
    assert np.all(rt.ident.lower <= theta) and np.all(theta <= rt.ident.upper)
