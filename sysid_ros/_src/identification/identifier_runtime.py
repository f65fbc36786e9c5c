"""The identifier node's state without ROS: message buffers filled by callbacks, the periodic
update handed to :class:`~.payload_identifier.OnlineIdentifier`, rejection counts and the status report
(level, message, figures) that the node turns into ``/diagnostics`` (no rclpy here).

Thread model (the node's): callbacks call :meth:`IdentifierRuntime.joint_state`,
:meth:`~IdentifierRuntime.joint_state_missing`, :meth:`~IdentifierRuntime.joint_state_rejected`,
:meth:`~IdentifierRuntime.imu` and :meth:`~IdentifierRuntime.request_reset` — cheap, under one
lock, never waiting for an LP; one worker calls :meth:`~IdentifierRuntime.update` every update
period and, with ``lp-cuts``, a second one calls :meth:`~IdentifierRuntime.tighten`. Bad samples
(NaN/inf, zero, duplicate, backward and far-future stamps, missing joints, a changed joint set)
are judged by the same :class:`~sysid_ros._src.sample_screen.SampleScreen` as the offline tools',
in arrival order, when the batch is handed over; the report counts them by kind.
"""
from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from sysid_ros._src.identification.config import IdentificationConfig
from sysid_ros._src.identification.errors import SampleError
from sysid_ros._src.identification.payload_identifier import OnlineIdentifier
from sysid_ros._src.model.box import ParameterBox

__all__ = ["IdentifierRuntime", "StatusReport", "UpdateOutcome"]

_LEVEL = {"ok": "ok", "insufficient_data": "warn", "inconsistent": "error"}
_NONE = np.zeros(0)


@dataclass(frozen=True)
class UpdateOutcome:
    """One update: ``status`` after it; ``publish`` = a new sound box to publish (status ok);
    ``became_inconsistent`` the first update of an inconsistent spell (log it once)."""

    status: str
    publish: bool = False
    became_inconsistent: bool = False


@dataclass(frozen=True)
class StatusReport:
    """The diagnostic: ``level`` ok | warn | error, one-line ``message``, figures by name."""

    level: str
    message: str
    values: dict[str, str] = field(default_factory=dict)


class IdentifierRuntime:
    """Buffers, counters and the update step around one :class:`OnlineIdentifier`."""

    def __init__(self, ident: OnlineIdentifier, config: IdentificationConfig) -> None:
        self.ident, self.config = ident, config
        self.received = 0
        self.last_stamp = float("nan")   # s, newest joint state received: lag and loss figures
        self.imu_received = 0
        self.resets = 0
        self.latency = float("nan")
        self.tighten_latency = float("nan")
        self._rejected: Counter[str] = Counter()
        self._lock = threading.Lock()
        # joint states in arrival order; a message without a robot joint carries (detail, names)
        self._buffer: list[tuple[float, np.ndarray, np.ndarray, np.ndarray,
                                 tuple[str, tuple[str, ...]] | None]] = []
        self._imu_buffer: list[tuple[float, np.ndarray, np.ndarray]] = []
        self._reset_requested = False

    # -- inputs (callbacks) --------------------------------------------------------------------
    def joint_state(self, t: float, q: np.ndarray, dq: np.ndarray, tau: np.ndarray) -> None:
        """A decoded joint state (s, rad, rad/s, N·m), buffered for the next update."""
        with self._lock:
            self.received += 1
            self.last_stamp = t
            self._buffer.append((t, q, dq, tau, None))

    def joint_state_missing(self, t: float, detail: str, names: tuple[str, ...]) -> None:
        """A joint state without one of the robot's joints (``names``: the ones it has)."""
        with self._lock:
            self.received += 1
            self.last_stamp = t
            self._buffer.append((t, _NONE, _NONE, _NONE, (detail, names)))

    def imu(self, t: float, gyro: np.ndarray, specific_force: np.ndarray) -> None:
        """A trunk IMU reading (s, rad/s, m/s²), screened (non-finite, stamps) at the update."""
        with self._lock:
            self.imu_received += 1
        if self.ident.imu is None:
            self.reject(f"imu: {self.ident.robot.name} has a fixed base; no IMU is used")
            return
        with self._lock:
            self._imu_buffer.append((t, np.asarray(gyro, float), np.asarray(specific_force, float)))

    def joint_state_rejected(self, reason: str) -> None:
        """A joint-state message that could not be decoded: received, and rejected by reason."""
        with self._lock:
            self.received += 1
        self.reject(reason)

    def reject(self, reason: str) -> None:
        """Count an unusable message (or an internal error) under ``reason``."""
        with self._lock:
            self._rejected[reason.split(" for ")[0][:80]] += 1

    def request_reset(self) -> None:
        """Start over at the next update (a new payload): buffers dropped, box back to B₀."""
        with self._lock:
            self._buffer.clear()
            self._imu_buffer.clear()
            self._reset_requested = True

    # -- the worker's step ---------------------------------------------------------------------
    def update(self) -> UpdateOutcome:
        """Hand the buffered samples to the identifier and update the box once."""
        with self._lock:
            batch, self._buffer = self._buffer, []
            imu_batch, self._imu_buffer = self._imu_buffer, []
            reset, self._reset_requested = self._reset_requested, False
        start = time.perf_counter()
        ident = self.ident
        if reset:
            ident.reset()
            self.resets += 1
        if imu_batch:
            ident.add_imu(np.array([b[0] for b in imu_batch]), np.array([b[1] for b in imu_batch]),
                          np.array([b[2] for b in imu_batch]))
        if not batch:
            return UpdateOutcome(ident.status)
        try:
            start_run = 0
            for k, msg in enumerate([*batch, None]):
                if msg is not None and msg[4] is None:
                    continue
                run = batch[start_run:k]           # samples up to the next missing-joint one
                if run:
                    ident.add_messages(np.array([b[0] for b in run]),
                                       *(np.array([b[i] for b in run]) for i in (1, 2, 3)))
                if msg is not None and msg[4] is not None:
                    ident.missing_joint(msg[0], *msg[4])
                start_run = k + 1
        except SampleError as err:
            self.reject(f"batch rejected: {err}")
            return UpdateOutcome(ident.status)
        before = ident.status
        status = ident.update()
        self.latency = time.perf_counter() - start
        return UpdateOutcome(status, publish=status == "ok",
                             became_inconsistent=status == "inconsistent"
                             and before != "inconsistent")

    def tighten(self) -> bool:
        """One cut-generating round on a snapshot (``lp-cuts``); True when the box shrank."""
        start = time.perf_counter()
        if not self.ident.tighten():
            return False
        self.tighten_latency = time.perf_counter() - start
        return True

    def box(self) -> ParameterBox | None:
        """The current θ_e box (its nominal inside it by construction) while the status is ok,
        else None."""
        ident = self.ident
        box = ident.box
        if ident.status != "ok":
            return None
        return box

    # -- status --------------------------------------------------------------------------------
    def rejected(self) -> dict[str, int]:
        """Messages not used: the bad-sample kinds of the shared screen (joint states; IMU
        prefixed ``imu: ``) and undecodable ones by reason (restarts are reported as
        ``window_restarts``)."""
        with self._lock:
            rejected = dict(self._rejected)
        logs = [("", self.ident.screen.log)]
        if self.ident.imu is not None:
            logs.append(("imu: ", self.ident.imu.screen.log))
        for prefix, log in logs:
            rejected.update({prefix + k: v for k, v in log.counts.items() if v > 0})
        return rejected

    def report(self) -> StatusReport:
        """Status with its reason (insufficient: why no window; inconsistent: the diagnosis),
        WARN for an ok box with warnings or rejected messages, and the figures."""
        ident, cfg = self.ident, self.config
        status = ident.status
        level = _LEVEL[status]
        warnings = list(ident.warnings) if status == "ok" else []
        rejected = self.rejected()
        if status == "ok" and (rejected or warnings):
            level = "warn"
        reason = {"insufficient_data": ident.insufficient_reason(),
                  "inconsistent": ident.reason}.get(status, "")
        message = status + (f": {reason}" if reason else "") + \
            (f"; WARNING: {' | '.join(warnings)}" if warnings else "")
        if ident.screen.joint_set_changed:       # no sample is usable until the joints return
            level = "error"
            message += ("; ERROR: the joint set changed: joint states lack the robot's joints ("
                        f"{ident.screen.detail})")
        values: dict[str, object] = {
            "status": status, "samples": ident.samples, "windows": ident.windows_used,
            "received": self.received, "last_sample_stamp": f"{self.last_stamp:.6f}",
            "gaps": ident.windows.n_gaps, "resets": self.resets,
            "bridged_steps": ident.windows.n_bridged,
            # torque samples beyond the stated bounds (absorbed by the quadrature allowance)
            "transients": _transient_figure(ident),
            "bridges_refused": ident.windows.n_bridge_refused,
            # rows the calibrated exclusion rule dropped, by reason (speed clamp, run start)
            "excluded_rows": ", ".join(f"{k} {v}" for k, v in ident.windows.excluded.items()),
            "unaligned_samples": ident.windows.n_unaligned,
            "window_restarts": ident.n_restarts,
            # box sides that fell back to the prior because an LP did not reach its optimum
            "stalled_lps": ident.stalled_lps,
            "last_update_latency_s": f"{self.latency:.6f}", "method": ident.method,
            "last_tighten_latency_s": f"{self.tighten_latency:.6f}",
            "rejected_total": sum(rejected.values()), "prior": cfg.prior_name,
            "on_physical_faces": " | ".join(ident.face_notes) if status == "ok" else "",
            "friction": cfg.friction, "sources": ", ".join(cfg.sources)}
        if ident.imu is not None:
            values["imu_received"] = self.imu_received
            values["imu_samples"] = ident.imu.n_samples
        if ident.windows.plan is not None:
            values["sampling"] = ident.windows.plan.describe()
        if ident.diagnosis is not None and status == "inconsistent":
            values["noise_scale_needed"] = f"{ident.diagnosis.noise_scale:.3f}"
        for k, w in enumerate(warnings):
            values[f"warning {k + 1}"] = w
        values.update({f"rejected: {k}": v for k, v in rejected.items()})
        return StatusReport(level, message, {k: str(v) for k, v in values.items()})


def _transient_figure(ident: OnlineIdentifier) -> str:
    """"N" or "N: joint_4 2, ... (last joint_4 at 3.000 s)" for /diagnostics."""
    stream = ident.transients
    if stream is None or stream.count == 0:
        return "0"
    joints = ", ".join(f"{k} {v}" for k, v in stream.by_joint.items())
    last = stream.found[-1]
    return (f"{stream.count}: {joints} (first listed at {stream.found[0].time:.3f} s, "
            f"{last.joint} at {last.time:.3f} s)")
