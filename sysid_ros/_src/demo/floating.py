"""What the demo adds for a floating-base robot (B1 + Z1): the planner and the controller run on
the arm view (:func:`sysid_ros._src.control.arm_view.arm_view`), whose guarantee rests on the trunk
staying inside ``arm_view.trunk_motion`` — the bound the legs' contract gives
(``arm_view.legs``, :mod:`sysid_ros._src.control.legs`) — and certifies obstacles in the trunk frame,
not the world frame. Before a run, :func:`envelope_refusal` says why it would lie outside the
operating envelope (:mod:`sysid_ros._src.demo.envelope`); after it, the recording is checked against
every premise: the trunk's motion (per axis when the bound is), the contract's held joints in
their Coulomb band, and what the guarantee actually uses, |d| ≤ d̄: the fictitious torque of the
recorded trunk motion, exactly (sup over the parameter boxes). Any of them broken fails the run,
with the value; when the trunk left its bound the report also says how many of those moments
were ones where the arm's command switched."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from sysid_ros._src.bagio.reader import read_imu, read_joint_states
from sysid_ros._src.demo.errors import DemoConfigError
from sysid_ros._src.demo.report import COMMAND_TOPIC, bag_messages, header_seconds
from sysid_ros._src.control.controller import SECTION_DEFAULTS
from sysid_ros._src.control.arm_view import (TrunkMotionBound, disturbance_ratio, interval_alpha,
                                      trunk_motion_report)
from sysid_ros._src.model.robots import Robot

__all__ = ["floating_base_findings", "robot_file_with_prior_box", "COMMAND_TOPIC"]

#: blocks (s) in which trunk-α excursions are set against the arm's command, and the RMS first
#: difference of that command (N·m per sample, all arm joints) that counts as switching
_BLOCK_S, _SWITCHING_NM = 0.05, 0.1


def robot_file_with_prior_box(robot: Robot, directory: Path) -> Path:
    """Copy of ``robot``'s facts file in ``directory`` whose ``identification.prior`` is the
    ``demo.prior_box`` (lower/upper) — every node of the run starts from that payload class;
    the robot file itself is never modified. Its path (for ``robot:=``)."""
    import yaml

    from sysid_ros._src.model.robots import load_robot

    config = yaml.safe_load(Path(robot.config_path).read_text())
    box = (config.get("demo") or {}).get("prior_box")
    if not isinstance(box, dict) or "lower" not in box or "upper" not in box:
        raise DemoConfigError(f"{robot.config_path}: demo.prior_box needs lower and upper "
                              "(10 values each)")
    config.setdefault("identification", {})["prior"] = {"lower": list(box["lower"]),
                                                        "upper": list(box["upper"])}
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{robot.name}.yaml"
    path.write_text(f"# {robot.config_path} with identification.prior = demo.prior_box "
                    "(sysid-demo)\n" + yaml.safe_dump(config, sort_keys=False))
    load_robot(path)                   # fails here, naming the field, rather than in a node
    return path


def floating_base_findings(full: Robot, view: Robot, bag: Path,
                           window: tuple[float, float] | None = None
                           ) -> tuple[dict[str, str], list[str]]:
    """(report header lines, failure reasons) of a B1 + Z1 run from its bag's ``/imu``;
    ``window``: only IMU samples in [t0, t1] (sim time) — default the whole run (the demo
    passes the closed-loop phase: from the first commanded motion on)."""
    bound = TrunkMotionBound.from_robot(full)
    imu = read_imu(bag, "/imu")
    keep = np.ones(len(imu), bool) if window is None else (
        (imu.t >= window[0]) & (imu.t <= window[1]))
    if keep.sum() < 3:
        keep[:] = True
    rep = trunk_motion_report(imu.t[keep], imu.orientation[keep], imu.angular_velocity[keep],
                              imu.linear_acceleration[keep], bound)
    d_bar = np.asarray(view.config["arm_view"]["base_disturbance_Nm"], float)
    ratio = _disturbance_ratio(full, view, bag, imu, keep)
    over = [f"floating base: base disturbance on {name} reached {r:.3g} d̄ ({r * b:.3g} N·m "
            f"> d̄ {b:.3g} N·m)" for name, r, b in zip(view.joint_names, ratio, d_bar) if r > 1.0]
    header = {
        "trunk motion (IMU, max over the closed loop)": (
            f"‖a‖ {rep.accel:.3g} m/s², ‖ω‖ {rep.omega:.3g} rad/s, ‖α‖ {rep.alpha:.3g} rad/s² "
            f"(|α| per trunk axis {', '.join(f'{a:.3g}' for a in rep.alpha_axes)}"
            + (f" against {', '.join(f'{a:g}' for a in bound.alpha_axes)}"
               if bound.alpha_axes is not None else "") + "), "
            f"tilt {np.degrees(rep.tilt):.3g}° (assumed ≤ {bound.accel:g}, {bound.omega:g}, "
            f"{bound.alpha:.3g}, {np.degrees(bound.tilt):.3g}°: "
            f"{'violated' if rep.violations else 'held'}; α is the mean over each IMU interval, "
            f"longest {rep.max_step * 1e3:.3g} ms)"),
        "base disturbance bound d̄ (N·m)": ", ".join(f"{x:.2f}" for x in d_bar)
        + " (in the controller's robust margin and the planner's torque check)",
        "base disturbance of the recorded trunk motion, max |d_j|/d̄_j": (
            ", ".join(f"{r:.3g}" for r in ratio)
            + " (exact fictitious torque from the IMU and the arm's joint states, sup over the "
            f"parameter boxes: {'exceeded' if over else 'held'})"),
        "not guaranteed on a moving base": (
            "obstacles and clearances are certified in the trunk frame (boxes that move with "
            "the trunk), not the world frame; the trunk-motion bound is an assumption the "
            "legs' standing controller must meet, checked here against the recorded IMU"),
    }
    if rep.alpha > bound.alpha:
        attribution = _alpha_against_command(bag, view.nj, bound.alpha, window)
        if attribution is not None:
            header["trunk α above the bound, against the arm's command"] = attribution
    held = _held_joint_motion(full, view, bag, window)
    if held is not None:
        header["legs' contract (arm_view.legs)"] = held[0]
    if rep.violations or over or (held is not None and held[1]):
        header["what a violation means"] = (
            "a premise of the arm view's guarantee failed in this run: the trunk left the bound "
            "the legs' contract gives (sysid-demo --envelope), or the recorded disturbance left "
            "d̄; the guarantee does not cover this run")
    return header, ([f"floating base: {v}" for v in rep.violations] + over
                    + (held[1] if held is not None else []))


def _disturbance_ratio(full: Robot, view: Robot, bag: Path, imu, keep: np.ndarray) -> np.ndarray:
    """max |d_j|/d̄_j over the IMU samples in ``keep`` (``control.arm_view.disturbance_ratio``),
    the arm's joint state taken at each IMU stamp (the B1's IMU arrives with the joints; the
    nearest joint sample otherwise — a stale one only shifts which sample d is evaluated at)."""
    js = read_joint_states(bag, "/joint_states", list(view.joint_names))
    pos, vel = js.position, js.velocity
    if len(js.t) == 0 or keep.sum() < 3 or pos is None or vel is None:
        raise DemoConfigError(f"{bag}: no /joint_states (with velocities) or /imu samples in "
                              "the closed loop to check the base disturbance against d̄")
    t = imu.t[keep]
    idx = np.clip(np.searchsorted(js.t, t), 0, len(js.t) - 1)
    prev = np.clip(idx - 1, 0, len(js.t) - 1)
    idx = np.where(np.abs(js.t[prev] - t) < np.abs(js.t[idx] - t), prev, idx)
    return disturbance_ratio(full, view, t, pos[idx], vel[idx], imu.angular_velocity[keep],
                             imu.linear_acceleration[keep])


def _alpha_against_command(bag: Path, nj: int, alpha_max: float,
                           window: tuple[float, float] | None) -> str | None:
    """Which of the closed loop's blocks with ‖α‖ > ``alpha_max`` (single IMU intervals) are
    blocks in which the arm's command switched: the report's answer to *why* the trunk left
    its bound, from the run itself. IMU and command are binned on the bag's receive clock (the
    command carries no stamp); ``window`` (IMU header stamps) selects the closed loop. None
    when the bag holds no command (or no IMU) or no block exceeds."""
    imu = [(t, header_seconds(m.header), (m.angular_velocity.x, m.angular_velocity.y,
                                         m.angular_velocity.z))
           for t, m in bag_messages(bag, "/imu", "sensor_msgs/msg/Imu")]
    cmd = [(t, np.asarray(m.data, float)) for t, m in
           bag_messages(bag, COMMAND_TOPIC, "std_msgs/msg/Float64MultiArray") if len(m.data) == nj]
    if len(imu) < 3 or len(cmd) < 3:
        return None
    recv = np.array([x[0] for x in imu])
    stamp = np.array([x[1] for x in imu])
    alpha = np.linalg.norm(interval_alpha(stamp, np.array([x[2] for x in imu])), axis=1)
    inside = np.ones(alpha.size, bool) if window is None else (
        (stamp[1:] >= window[0]) & (stamp[1:] <= window[1]))
    c_t = np.array([x[0] for x in cmd])
    step2 = np.sum(np.diff(np.array([x[1] for x in cmd]), axis=0) ** 2, axis=1)
    t0 = recv[1:][inside].min(initial=np.inf)
    if not np.isfinite(t0):
        return None
    a_blk = ((recv[1:][inside] - t0) // _BLOCK_S).astype(int)
    c_keep = c_t[1:] >= t0
    c_blk = ((c_t[1:][c_keep] - t0) // _BLOCK_S).astype(int)
    n = int(max(a_blk.max(), c_blk.max(initial=0))) + 1
    peak = np.zeros(n)
    np.maximum.at(peak, a_blk, alpha[inside])
    sums, counts = np.zeros(n), np.zeros(n)
    np.add.at(sums, c_blk, step2[c_keep])
    np.add.at(counts, c_blk, 1.0)
    seen = counts > 0
    rms = np.sqrt(np.divide(sums, counts, out=np.zeros(n), where=seen))
    over, calm = seen & (peak > alpha_max), seen & (peak <= alpha_max)
    if not over.any():
        return None
    switching = over & (rms > _SWITCHING_NM)
    return (f"{int(switching.sum())} of {int(over.sum())} {_BLOCK_S * 1e3:.0f}-ms blocks with "
            f"‖α‖ > {alpha_max:g} rad/s² are blocks where the arm's command switched "
            f"(first-difference RMS > {_SWITCHING_NM:g} N·m per sample; median "
            f"{np.median(rms[over]):.3g} N·m there against "
            f"{np.median(rms[calm]) if calm.any() else float('nan'):.3g} in the blocks within "
            "the bound)")


def envelope_refusal(full: Robot, payload_kg: float | None) -> list[str]:
    """Why a B1 + Z1 run with this robot file (its θ_e prior, demo task and V_max) and this
    simulated payload lies outside the operating envelope (``demo.envelope``; empty: inside),
    the limiting premise first: the payload inside the prior's class, then
    :func:`~sysid_ros._src.demo.envelope.premise_failures`."""
    from sysid_ros._src.control.prior import prior_box
    from sysid_ros._src.demo.envelope import premise_failures, task_poses
    from sysid_ros._src.simulation.errors import PayloadError
    from sysid_ros._src.simulation.payload import dumbbell_for, true_theta_e

    klass = prior_box(full)
    if payload_kg is not None:
        try:
            theta = true_theta_e(full, dumbbell_for(full, payload_kg))
        except PayloadError as exc:
            return [f"payload: {exc}"]
        if not klass.contains(theta):
            return [f"payload in its class: a {payload_kg:g} kg dumbbell at the grip is "
                    f"outside the θ_e prior (mass {klass.lower[0]:.4g}–{klass.upper[0]:.4g} kg "
                    "with the EE body), which every bound of the run assumes"]
    v_max = float((full.config.get("controller") or {})["V_max"])
    return premise_failures(full, klass, task_poses(full), v_max)[1]


def _held_joint_motion(full: Robot, view: Robot, bag: Path,
                       window: tuple[float, float] | None) -> tuple[str, list[str]] | None:
    """(report line, failures) of the contract's held joints in the closed loop: each must stay
    in its Coulomb band (|q̇| ≤ ``controller.coulomb_band``), where its friction cannot jump.
    None when the robot file states no contract."""
    from sysid_ros._src.control.legs import LegsContract

    if "legs" not in (full.config.get("arm_view") or {}):
        return None
    contract = LegsContract.from_robot(full)
    band = float((view.config.get("controller") or {}).get(
        "coulomb_band", SECTION_DEFAULTS["coulomb_band"]))
    js = read_joint_states(bag, "/joint_states", list(view.joint_names))
    if js.velocity is None or len(js.t) == 0:
        return ("no joint velocities recorded", ["floating base: the held joints' band cannot "
                                                 "be checked (no /joint_states velocities)"])
    keep = np.ones(len(js.t), bool) if window is None else (
        (js.t >= window[0]) & (js.t <= window[1]))
    speeds = {n: float(np.abs(js.velocity[keep, view.joint_names.index(n)]).max(initial=0.0))
              for n in contract.held_joints}
    fails = [f"floating base: held joint {n} reached |q̇| {v:.3g} rad/s > its Coulomb band "
             f"{band:g} rad/s (a friction jump the legs' contract excludes)"
             for n, v in speeds.items() if v > band]
    line = (f"stance {contract.rate_hz:g} Hz, stiffness {contract.stiffness.tolist()} N·m/rad; "
            "held joints max |q̇| " + ", ".join(f"{n} {v:.2g}" for n, v in speeds.items())
            + f" rad/s against the band {band:g} ({'exceeded' if fails else 'held'})")
    return line, fails
