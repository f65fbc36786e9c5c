"""Admission of desired trajectories: what the controller checks before a trajectory may run.

Every trajectory is checked on the interpolation that will actually run
(``TrajectoryQueue.plan``: the quintic segments, with the reference state at take-over prepended
when its first point is later):

1. **joint position limits** — each segment's exact range (``polynomial.polynomial_range``: ends
   plus the real roots of q̇_d) inside [q_lower, q_upper] (continuous joints: not checked);
2. **joint velocity limits** — each segment's exact q̇_d range (roots of q̈_d) inside ±dq_max;
3. **continuity at take-over** — when no state is prepended, the first point must equal the
   reference the queue gives at the take-over instant (position, velocity, acceleration within
   ``Tolerances``); a trajectory stamped to start before it arrived is compared at its arrival
   instead (it joins mid-way); the last point must be at rest (the queue holds it with
   q̇ = q̈ = 0);
4. **torque, where cheap** — at every point, segment midpoint and the two instants of a
   minimum-jerk segment's peak acceleration (4 samples a segment) the exact interval of the torque
   the plant needs to follow the reference exactly (``RobustController.torque_interval`` at zero
   tracking error, over the controller's current boxes) must reach into ±τ_max. A rejection is
   then certain (no parameter in the box can follow it: the plant would saturate); passing is
   NOT a torque guarantee between samples nor with tracking error — that is the certificate's
   job (the planner's reachability check, or the demo's ``TaskCertifier``).

Not checked here: obstacles/self-collision and acceleration limits (the robots list none);
certified trajectories carry those in their certificate.

Certificates (who may publish what: docs/guide/hardware.md). A planner that verified a
trajectory for every θ_e in a box B writes ``header.frame_id =
"sysid_cert/v1;box=<digest>;check=<name>"`` with ``digest = box_digest(B.lower, B.upper)``
(SHA-256 of the little-endian float64 bytes of lower‖upper, first 16 hex digits: the
Float64MultiArray on ``/sysid/payload_bounds`` carries the same doubles, so both ends compute it
bit-exactly). The controller counts a trajectory as certified when the digest names a box it has
received (or its prior), the check is one it knows (``KNOWN_CHECKS``) and the box it controls with
now lies inside B — the certificate's premise ("θ_e ∈ B and the controller bounds torques over
B") then still holds, because the identifier's boxes only shrink. The frame_id is not
authenticated: on a shared network only SROS2/DDS security decides who may publish.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from sysid_ros._src.control.controller import RobustController
from sysid_ros._src.control.errors import CertificateError
from sysid_ros._src.control.polynomial import polynomial_derivative, polynomial_range
from sysid_ros._src.control.trajectory import ActiveTrajectory, Reference
from sysid_ros._src.model.robots import JointLimits

__all__ = ["CERTIFICATE_PREFIX", "KNOWN_CHECKS", "Certificate", "Tolerances", "box_digest",
           "check_limits", "check_continuity", "check_torque", "trajectory_ranges"]

CERTIFICATE_PREFIX = "sysid_cert/v1"
#: verification procedures whose certificates the controller honours
KNOWN_CHECKS = ("exciting_planner.reachability",)


def box_digest(lower: np.ndarray, upper: np.ndarray) -> str:
    """16 hex digits naming a θ_e box bit-exactly (module doc)."""
    data = np.concatenate([np.asarray(lower, "<f8"), np.asarray(upper, "<f8")]).tobytes()
    return hashlib.sha256(data).hexdigest()[:16]


@dataclass(frozen=True)
class Certificate:
    """A trajectory's claim: verified by ``check`` for every θ_e in the box named ``box``."""

    box: str
    check: str

    def to_frame_id(self) -> str:
        return f"{CERTIFICATE_PREFIX};box={self.box};check={self.check}"

    @classmethod
    def parse(cls, frame_id: str) -> Certificate | None:
        """None for a frame_id without the prefix; CertificateError for a malformed one."""
        if not frame_id.startswith(CERTIFICATE_PREFIX):
            return None
        fields = dict(part.partition("=")[::2] for part in frame_id.split(";")[1:])
        box, check = fields.get("box", ""), fields.get("check", "")
        if len(box) != 16 or any(c not in "0123456789abcdef" for c in box) or not check:
            raise CertificateError(f"malformed certificate {frame_id!r} (expected "
                                   f"'{CERTIFICATE_PREFIX};box=<16 hex>;check=<name>')")
        return cls(box, check)


@dataclass(frozen=True)
class Tolerances:
    """Continuity at take-over (rad, rad/s, rad/s²): how far the first point may be from the
    reference it replaces, and the last point from rest."""

    position: float = 1e-3
    velocity: float = 1e-2
    acceleration: float = 1e-1


def trajectory_ranges(active: ActiveTrajectory) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                         np.ndarray]:
    """Exact (q_min, q_max, q̇_min, q̇_max) per joint over the whole interpolation."""
    coef = active.coef                                   # (S, 6, nj)
    seg, _, nj = coef.shape
    lengths = np.repeat(np.diff(active.t), nj)
    pos = np.moveaxis(coef, 1, 2).reshape(seg * nj, 6)
    q_lo, q_hi = polynomial_range(pos, lengths)
    v_lo, v_hi = polynomial_range(polynomial_derivative(pos), lengths)
    return (q_lo.reshape(seg, nj).min(0), q_hi.reshape(seg, nj).max(0),
            v_lo.reshape(seg, nj).min(0), v_hi.reshape(seg, nj).max(0))


def check_limits(active: ActiveTrajectory, limits: JointLimits) -> list[str]:
    """Reasons the interpolation leaves the position or velocity limits (empty: inside)."""
    if active.coef.shape[0] == 0:                        # one point: held, checked as a pose
        q = active.first.q
        q_lo = q_hi = q
        v_lo = v_hi = np.zeros_like(q)
    else:
        q_lo, q_hi, v_lo, v_hi = trajectory_ranges(active)
    reasons = []
    for j in np.flatnonzero(q_hi > limits.q_upper):
        reasons.append(f"joint {j + 1} reaches {q_hi[j]:.4g} rad > upper limit "
                       f"{limits.q_upper[j]:.4g}")
    for j in np.flatnonzero(q_lo < limits.q_lower):
        reasons.append(f"joint {j + 1} reaches {q_lo[j]:.4g} rad < lower limit "
                       f"{limits.q_lower[j]:.4g}")
    speed = np.maximum(v_hi, -v_lo)
    for j in np.flatnonzero(speed > limits.dq_max):
        reasons.append(f"joint {j + 1} speed {speed[j]:.4g} rad/s > limit "
                       f"{limits.dq_max[j]:.4g}")
    return reasons


def check_continuity(active: ActiveTrajectory, reference: Reference | None, take_over: float,
                     tol: Tolerances) -> list[str]:
    """Reasons the trajectory does not join ``reference`` — the queue's reference at the
    take-over instant ``take_over`` (its start, or the arrival time if it starts in the past) —
    or does not end at rest (empty: continuous)."""
    reasons = []
    late = take_over > active.start
    if not active.prefixed or late:
        if reference is None:
            return ["no reference state to continue from yet (no joint_states received)"]
        joined = active.sample(take_over) if late else active.first
        for label, a, b, limit in (("position", joined.q, reference.q, tol.position),
                                   ("velocity", joined.dq, reference.dq, tol.velocity),
                                   ("acceleration", joined.ddq, reference.ddq, tol.acceleration)):
            gap = np.abs(a - b)
            if np.any(gap > limit):
                j = int(np.argmax(gap))
                reasons.append(f"{label} at take-over is {gap[j]:.3g} from the current "
                               f"reference (joint {j + 1}; tolerance {limit:g}"
                               + (f"; it started {take_over - active.start:.3f} s before "
                                  "arrival)" if late else ")"))
    last_v, last_a = active.last.dq, active.last.ddq
    if np.any(np.abs(last_v) > tol.velocity) or np.any(np.abs(last_a) > tol.acceleration):
        reasons.append("last point is not at rest (the controller holds it with zero velocity "
                       "and acceleration)")
    return reasons


def check_torque(active: ActiveTrajectory, ctl: RobustController) -> list[str]:
    """Reasons (module doc item 4) the plant certainly cannot follow the trajectory: at a
    point or segment midpoint, every torque in the box's interval is beyond ±τ_max."""
    t = active.t
    # per segment its start, middle and the two instants where a rest-to-rest (minimum-jerk)
    # segment accelerates hardest, s = ½ ∓ √3/6; plus the final point
    frac = np.array([0.0, 0.5 - np.sqrt(3.0) / 6.0, 0.5, 0.5 + np.sqrt(3.0) / 6.0])
    instants = np.append((t[:-1, None] + np.diff(t)[:, None] * frac).ravel(), t[-1])
    reasons = []
    for s in instants:
        ref = active.sample(active.start + float(s))
        itv = ctl.torque_interval(ref.q, ref.dq, ref.dq, ref.ddq)
        over = (itv.lower > ctl.tau_max) | (itv.upper < -ctl.tau_max)
        if np.any(over):
            j = int(np.flatnonzero(over)[0])
            need = itv.lower[j] if itv.lower[j] > 0 else itv.upper[j]
            reasons.append(f"joint {j + 1} needs at least {abs(need):.4g} N·m at t = {s:.3f} s "
                           f"for every θ in the box > limit {ctl.tau_max[j]:.4g}")
            break
    return reasons
