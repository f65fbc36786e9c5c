"""The operating envelope of a standing floating-base robot (B1 + Z1): the (payload class, task
poses, V_max, trunk disturbance bound) in which every premise of the arm view's guarantee can
hold, and the first one that fails everywhere else (``sysid-demo --robot b1_z1 --envelope``).

Premises, in the order they are checked for one point (:func:`premise_failures`):

1. **task poses in the workspace**: every task pose (start and waypoints) inside
   ``arm_view.workspace``, the held joints at their start angle;
2. **legs' contract** (``control.legs``): the trunk's α the legs can promise over the view's
   workspace, α̅ per axis from the friction jumps of the joints the task moves, is within the
   bound the arm view assumes (``arm_view.trunk_motion.alpha_max``, per axis); the stance's
   static answer W/K within ``tilt_max_deg``;
3. **certified hold**: at every task pose the planner's sound reachability certifies holding it
   for every θ_e in the payload class, with d̄ from that bound, at that V_max (the tracking box
   scaled with √V_max) — torque limits (joint 3 is the tight one), tracking box, positions.

A point passing all three is inside; the exciting motions and the task are certified on top of
it by the planner and the demo as usual. A payload class here is the catalogued dumbbell of a
mass at the grip, plus the end-effector body, every parameter ± ``demo.envelope.class_rel``.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from sysid_ros._src.control.controller import SECTION_DEFAULTS
from sysid_ros._src.control.arm_view import TrunkMotionBound, arm_view, joint_speed_bound, workspace
from sysid_ros._src.control.legs import LegsContract, contract_alpha_bound, static_tilt_bound
from sysid_ros._src.model.box import ParameterBox, theta_e_box
from sysid_ros._src.model.robots import Robot

__all__ = ["EnvelopePoint", "dumbbell_class", "premise_failures", "envelope", "format_envelope",
           "plot_envelope", "task_poses"]

_GRID = 5          # points per moved workspace joint for the contract's α̅


@dataclass(frozen=True)
class EnvelopePoint:
    payload_kg: float
    v_max: float
    alpha_bar: tuple[float, float, float]
    failures: tuple[str, ...]
    #: N·m per arm joint: the view's d̄ for the class (empty when a premise before it failed)
    d_bar: tuple[float, ...] = ()

    @property
    def inside(self) -> bool:
        return not self.failures


def dumbbell_class(robot: Robot, mass_kg: float, rel: float) -> ParameterBox:
    """θ_e box of the dumbbell of ``mass_kg`` at the grip plus the EE body, ± (rel·|θ| + 1e-5)."""
    from sysid_ros._src.simulation.payload import dumbbell_for

    theta = robot.theta_e() + dumbbell_for(robot, mass_kg).theta()
    rad = rel * np.abs(theta) + 1e-5
    return theta_e_box(theta - rad, theta + rad)


def task_poses(robot: Robot) -> np.ndarray:
    """(n, n_arm): the demo task's start and waypoints."""
    demo = robot.config.get("demo") or {}
    return np.array([demo["start"], *demo["waypoints"]], float)


def _contract_part(full: Robot, contract: LegsContract, motion: TrunkMotionBound
                   ) -> tuple[np.ndarray, list[str]]:
    lo, hi = workspace(full)
    moving = [n not in contract.held_joints for n in full.config["arm_joints"]]
    grid = [np.linspace(a, b, _GRID) if m else np.array([a, b])
            for a, b, m in zip(lo, hi, moving)]
    poses = np.array(list(itertools.product(*grid)))
    alpha_bar, _ = contract_alpha_bound(full, contract, poses)
    out = []
    assumed = (np.asarray(motion.alpha_axes) if motion.alpha_axes is not None
               else np.full(3, motion.alpha))
    for axis, got, bound in zip("xyz", alpha_bar, assumed):
        if got > bound:
            out.append(f"legs' contract: trunk α_{axis} up to {got:.3g} rad/s² (friction jumps "
                       f"of the moved joints) > the view's bound {bound:.3g} rad/s²")
    band = float((full.config.get("controller") or {}).get(
        "coulomb_band", SECTION_DEFAULTS["coulomb_band"]))
    tilt = static_tilt_bound(full, contract, poses, joint_speed_bound(full), band)
    if tilt > motion.tilt:
        out.append(f"legs' contract: trunk tilt up to {np.degrees(tilt):.3g}° (2 W/K) > the "
                   f"view's bound {np.degrees(motion.tilt):.3g}°")
    return alpha_bar, out


def _pose_failures(full: Robot, contract: LegsContract, poses: np.ndarray) -> list[str]:
    lo, hi = workspace(full)
    out = []
    held = [i for i, n in enumerate(full.config["arm_joints"]) if n in contract.held_joints]
    for k, q in enumerate(poses):
        if np.any(q < lo) or np.any(q > hi):
            out.append(f"task pose {k}: outside arm_view.workspace")
        moved = [full.config["arm_joints"][i] for i in held if abs(q[i] - poses[0][i]) > 1e-9]
        if moved:
            out.append(f"task pose {k}: moves held joints {moved} (legs' contract: no reversal "
                       "there)")
    return out


def _with_class(full: Robot, klass: ParameterBox) -> Robot:
    """The robot with its θ_e prior replaced by ``klass`` (in memory)."""
    ident = dict(full.config.get("identification") or {})
    ident["prior"] = {"lower": klass.lower.tolist(), "upper": klass.upper.tolist()}
    return replace(full, config={**full.config, "identification": ident})


def _with_level(view: Robot, v_max: float) -> Robot:
    """The view at V_max = ``v_max``, its tracking box scaled by √(v_max / the file's)."""
    ctrl = dict(view.config.get("controller") or {})
    scale = float(np.sqrt(v_max / float(ctrl["V_max"])))
    box = ctrl.get("tracking_box")
    if box:
        ctrl["tracking_box"] = {k: [scale * float(x) for x in box[k]] for k in ("e_max", "de_max")}
    ctrl["V_max"] = v_max
    return replace(view, config={**view.config, "controller": ctrl})


def premise_failures(full: Robot, klass: ParameterBox, poses: np.ndarray, v_max: float,
                     hold_intervals: int = 32, d_bar: list[float] | None = None
                     ) -> tuple[np.ndarray, list[str]]:
    """(α̅ per trunk axis, the failed premises, first the limiting one; empty: inside) for the
    payload class ``klass``, the task ``poses`` and ``v_max`` (module doc); ``d_bar``, if
    given, receives the view's d̄ (N·m per arm joint) once it is built."""
    from sysid_ros._src.demo.priors import start_refusal

    contract = LegsContract.from_robot(full)
    motion = TrunkMotionBound.from_robot(full)
    out = _pose_failures(full, contract, poses)
    if out:
        return np.full(3, np.nan), out
    alpha_bar, out = _contract_part(full, contract, motion)
    if out:
        return alpha_bar, out
    view = _with_level(arm_view(_with_class(full, klass), motion), v_max)
    if d_bar is not None:
        d_bar[:] = view.config["arm_view"]["base_disturbance_Nm"]
    for k, q in enumerate(poses):
        out += [f"certified hold at task pose {k} (class, V_max {v_max:g}): {r}"
                for r in start_refusal(view, q, hold_intervals)]
    return alpha_bar, out


def envelope(full: Robot, masses: list[float], levels: list[float], rel: float
             ) -> list[EnvelopePoint]:
    """Every (payload mass, V_max) of the grid, for the demo's task poses."""
    poses = task_poses(full)
    points = []
    for m in masses:
        klass = dumbbell_class(full, m, rel)
        for v in levels:
            d_bar: list[float] = []
            alpha_bar, fails = premise_failures(full, klass, poses, v, d_bar=d_bar)
            axes = (float(alpha_bar[0]), float(alpha_bar[1]), float(alpha_bar[2]))
            points.append(EnvelopePoint(m, v, axes, tuple(fails), tuple(d_bar)))
    return points


def format_envelope(full: Robot, points: list[EnvelopePoint], rel: float) -> list[str]:
    """The printout: the contract and the bound, then one line per point."""
    contract = LegsContract.from_robot(full)
    motion = TrunkMotionBound.from_robot(full)
    assumed = motion.alpha_axes or (motion.alpha,) * 3
    lines = [f"legs' contract ({full.config_path}: arm_view.legs): stance at "
             f"{contract.rate_hz:g} Hz, stiffness {contract.stiffness.tolist()} N·m/rad "
             f"(roll, pitch, yaw), held joints {list(contract.held_joints)}",
             f"trunk bound the view assumes (arm_view.trunk_motion): |α| ≤ "
             f"{[round(a, 3) for a in assumed]} rad/s² (x, y, z), tilt ≤ "
             f"{np.degrees(motion.tilt):.3g}°",
             f"task poses (demo.start, demo.waypoints): {task_poses(full).tolist()}",
             f"payload classes: dumbbell at the grip + EE body, every parameter ±{rel:g}",
             "payload kg | V_max | α̅ (x, y, z) rad/s² | d̄ N·m (joints 1-6) | inside | "
             "limiting premise"]
    for p in points:
        lines.append(f"{p.payload_kg:10.3g} | {p.v_max:.2g} | "
                     f"{', '.join(f'{a:.3g}' for a in p.alpha_bar)} | "
                     f"{', '.join(f'{d:.2f}' for d in p.d_bar) or '-'} | "
                     f"{'yes' if p.inside else 'no'} | {p.failures[0] if p.failures else '-'}")
    return lines


def _label(failure: str) -> str:
    """A short name of a failed premise for the plot (the printout has the whole text)."""
    text = failure.split("): ", 1)[-1] if failure.startswith("certified hold") else failure
    head = text.split(":")[0]
    if head == "torque limit":
        return "torque " + text.split("joint ")[1].split(" ")[0]
    return head


def plot_envelope(points: list[EnvelopePoint], path: Path) -> Path:
    """Payload mass against V_max, inside (green) or the limiting premise's kind (red)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.5))
    for p in points:
        ax.scatter(p.payload_kg, p.v_max, c="tab:green" if p.inside else "tab:red", s=80)
        ax.annotate("inside" if p.inside else _label(p.failures[0]),
                    (p.payload_kg, p.v_max), fontsize=7, xytext=(5, 4),
                    textcoords="offset points")
    masses = sorted({p.payload_kg for p in points})
    if len(masses) > 1:
        pad = 0.15 * (masses[-1] - masses[0])
        ax.set_xlim(masses[0] - 0.3 * pad, masses[-1] + pad)
    ax.set_xlabel("payload class (dumbbell mass, kg)")
    ax.set_ylabel("V_max")
    ax.set_yscale("log")
    ax.set_title("standing B1 + Z1: operating envelope (green: every premise can hold)",
                 fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path
