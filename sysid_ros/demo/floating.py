"""What the demo adds for a floating-base robot (B1 + Z1): the planner and the controller run on
the arm view (:func:`sysid_ros.model.arm_view.arm_view`), whose guarantee rests on the trunk
staying inside ``arm_view.trunk_motion`` — an assumption the standing controller has to meet,
so the recorded IMU is checked against it after the run — and certifies obstacles in the trunk
frame, not the world frame. Both go into the report; a violated motion bound fails the run. The
report also gives what the guarantee actually uses, |d| ≤ d̄: the fictitious torque of the
recorded trunk motion, exactly (sup over the parameter boxes), against d̄ — a disturbance above
d̄ fails the run as well."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from sysid_ros.bagio.reader import read_imu, read_joint_states
from sysid_ros.demo.errors import DemoConfigError
from sysid_ros.model.arm_view import TrunkMotionBound, disturbance_ratio, trunk_motion_report
from sysid_ros.model.robots import Robot

__all__ = ["floating_base_findings", "robot_file_with_prior_box"]


def robot_file_with_prior_box(robot: Robot, directory: Path) -> Path:
    """Copy of ``robot``'s facts file in ``directory`` whose ``identification.prior`` is the
    ``demo.prior_box`` (lower/upper) — every node of the run starts from that payload class;
    the robot file itself is never modified. Its path (for ``robot:=``)."""
    import yaml

    from sysid_ros.model.robots import load_robot

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
            f"‖a‖ {rep.accel:.3g} m/s², ‖ω‖ {rep.omega:.3g} rad/s, ‖α‖ {rep.alpha:.3g} rad/s², "
            f"tilt {np.degrees(rep.tilt):.3g}° (assumed ≤ {bound.accel:g}, {bound.omega:g}, "
            f"{bound.alpha:g}, {np.degrees(bound.tilt):.3g}°: "
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
    if rep.violations or over:
        # the known cause, measured (docs/design.md §5.1): stated, not hidden
        header["known limit (docs/design.md §5.1)"] = (
            "the trunk-motion bound d̄ rests on is smaller than what this stance does while the "
            "arm works. Read over single IMU intervals (central differences cancel a motion "
            "that alternates at the sample rate: 0.49 against 2.3 rad/s² on one log), the "
            "trunk's ‖α‖ reaches ~1 rad/s² (p99 ~0.5) through the graph against the assumed "
            "0.2: the robust input's ~0.1–0.2 N·m steps at the sample rate, one period late "
            "through the graph, and stick-slip of the arm's joints in their dry friction, "
            "against a trunk whose roll inertia is small: a Coulomb reversal is a 2·Fc torque "
            "step between trunk and link that no command can cancel before it is seen, and on "
            "joint 1 / joint 5 (2 N·m) it alone moves the trunk at 0.94 / 2.0 rad/s² over the "
            "next interval (bench.bench_chatter --b1-torque-step). In-process (bench_chatter, "
            "physics converged at 0.25 ms) the same loop does 0.33 rad/s² without the delay and "
            "0.45 with it, p99 0.28. A bound that covers it cannot be certified: d̄ grows "
            "~2.5–3.8 N·m on joint 1 per rad/s², the task's torque check on joint 3 fails from "
            "0.35–0.5 rad/s² with the shipped waypoints (a lowered one certifies up to 0.6) and "
            "at 0.6 no exciting plan certified. V ≤ V_max itself is checked in the task section")
    return header, [f"floating base: {v}" for v in rep.violations] + over


def _disturbance_ratio(full: Robot, view: Robot, bag: Path, imu, keep: np.ndarray) -> np.ndarray:
    """max |d_j|/d̄_j over the IMU samples in ``keep`` (``model.arm_view.disturbance_ratio``),
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
