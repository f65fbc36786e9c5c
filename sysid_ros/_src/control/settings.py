"""The robust controller's settings: each one defined once, as a field of
:class:`ControllerSettings` (type, default, range, unit, description); the ``robust_controller``
node's parameter table (``PARAMETERS``, docs/reference/parameters.md) is derived from the fields,
so the node and the runtime (``control.controller_runtime.build_runtime``) cannot disagree."""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from sysid_ros._src.control.controller import MODES, SECTION_DEFAULTS
from sysid_ros._src.control.errors import ControllerConfigError
from sysid_ros._src.param_table import parameter_table, setting

__all__ = ["COMMAND_RELIABILITIES", "ControllerSettings", "PARAMETERS"]

#: QoS reliability of the effort commands: ros2_control's forward controllers subscribe
#: reliable (a best-effort writer would not match them); the built-in simulator takes either.
COMMAND_RELIABILITIES = ("reliable", "best_effort")
_S = (1e-4, 3600.0)       # a duration in seconds
_TOL = (1e-9, 1e3)


@dataclass(frozen=True)
class ControllerSettings:
    """The node's parameters as a validated value object. ``None`` = absent: the robot file's
    ``controller:`` value (gains) or none (robot_config, calibration). ``validate`` names the
    first bad one."""

    robot: str = setting("gen3", "registry name (gen3, z1, b1_z1) or robot-facts file path; "
                         "b1_z1 is controlled as its arm view (trunk as base)")
    robot_config: str | None = setting(None, "robot-facts file overriding the named robot's")
    calibration: str | None = setting(None, "sysid-calibrate result (calib.yaml): calibrated "
                                      "friction and link facts")
    mode: str = setting("robust", "law: robust (identifier's box), conservative (prior box), "
                        "wrong (no payload, taken as exact), pid (gravity compensation + PID)",
                        choices=MODES)
    Kr: float | None = setting(None, "composite-error gain K_r, all joints (absent: "
                               "controller.Kr)", (1e-6, 1e4), unit="1/s")
    alpha: float | None = setting(None, "robust-input decay rate α (absent: controller.alpha)",
                                  (1e-6, 1e6), unit="1/s")
    V_max: float | None = setting(None, "Lyapunov level the law keeps V below (absent: "
                                  "controller.V_max; the planner's tracking box assumes the "
                                  "robot file's)", (1e-12, 1e6), unit="J")
    r_norm_threshold: float | None = setting(None, "‖r‖ below which the robust input is 0 "
                                             "(absent: controller.r_norm_threshold)",
                                             (0.0, 1.0), unit="rad/s")
    boundary_layer: float | None = setting(None, "robust-input boundary layer η, a fraction of "
                                           "V_max (absent: controller.boundary_layer; 0 = none; "
                                           "docs/theory/controller.md#law)", (0.0, 1.0))
    torque_limit_scale: float = setting(SECTION_DEFAULTS["torque_limit_scale"], "fraction of "
                                        "the torque limits the command is "
                                        "clipped to (clipping voids the guarantee and is "
                                        "flagged)", (1e-6, 1.0))
    theta_r_uncertainty: bool = setting(True, "carry the θ_r and friction boxes in the torque "
                                        "interval (false: nominal θ_r and friction taken as "
                                        "exact, unsound)")
    publish_on: str = setting("joint_states", "command on every joint_states message, or on a "
                              "timer", choices=("joint_states", "timer"))
    timer_rate: float = setting(1000.0, "command rate when publish_on = timer", (1e-3, 1e5),
                                unit="Hz")
    stale_timeout: float = setting(0.02, "steady-clock age of joint_states after which commands "
                                   "stop and the node deactivates (ERROR)", _S, unit="s")
    clock_timeout: float = setting(0.1, "ROS time frozen this long under use_sim_time counts as "
                                   "stale input (/clock died)", _S, unit="s")
    bounds_warn_after: float = setting(5.0, "no payload bounds for this long: WARN (commanding "
                                       "continues)", _S, unit="s")
    watchdog_period: float = setting(0.005, "steady-clock watchdog period, at most "
                                     "stale_timeout", _S, unit="s")
    auto_reactivate: bool = setting(False, "re-activate by itself when inputs are fresh after a "
                                    "stale stop (simulation); false: the operator activates "
                                    "(hardware)")
    accept_uncertified: bool = setting(False, "run trajectories without a valid planner "
                                       "certificate")
    check_torque: bool = setting(True, "refuse trajectories no θ in the box can follow within "
                                 "the torque limits (sampled; control/admission.py)")
    takeover_position_tolerance: float = setting(0.02, "first point vs the current reference at "
                                                 "take-over", _TOL, unit="rad")
    takeover_velocity_tolerance: float = setting(0.05, "take-over velocity tolerance, also the "
                                                 "'ends at rest' one", _TOL, unit="rad/s")
    takeover_acceleration_tolerance: float = setting(0.5, "take-over acceleration tolerance",
                                                     _TOL, unit="rad/s²")
    pid_kp: float = setting(100.0, "PID baseline (mode pid) proportional gain, all joints",
                            (0.0, 1e6), unit="N·m/rad")
    pid_ki: float = setting(20.0, "PID baseline integral gain", (0.0, 1e6), unit="N·m/(rad·s)")
    pid_kd: float = setting(20.0, "PID baseline derivative gain", (0.0, 1e6), unit="N·m·s/rad")
    pid_i_clamp: float = setting(0.2, "PID anti-windup: |∫e| clamp", (0.0, 1e3), unit="rad·s")
    debug_decimation: int = setting(10, "~/tracking_error and ~/state every n-th command",
                                    (1, 10**6))
    diagnostics_period: float = setting(1.0, "/diagnostics period", _S, unit="s")
    autostart: bool = setting(False, "configure and activate at start (simulation launches)")
    joint_states_topic: str = setting("joint_states", "measured joint states")
    bounds_topic: str = setting("/sysid/payload_bounds", "the identifier's θ_e box")
    trajectory_topic: str = setting("/sysid/desired_trajectory", "desired trajectories")
    command_topic: str = setting("/effort_controller/commands", "effort commands")
    command_reliability: str = setting("reliable", "QoS of the effort commands: reliable "
                                       "(ros2_control's forward controllers; hardware) or "
                                       "best_effort (the built-in simulator's launch)",
                                       choices=COMMAND_RELIABILITIES)
    realtime_priority: int = setting(0, "SCHED_FIFO priority of the command thread, and one "
                                     "below it of the middleware threads that wake it (0 = "
                                     "normal; hardware: e.g. 80, needs an rtprio limit or "
                                     "CAP_SYS_NICE, else WARN and normal priority)", (0, 99))

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> ControllerSettings:
        """Settings from a name → value mapping (unknown names refused), validated."""
        table = {p.name: p for p in PARAMETERS}
        unknown = sorted(set(values) - set(table))
        if unknown:
            raise ControllerConfigError(f"unknown controller parameters {unknown}")
        typed: dict[str, Any] = {}
        for key, value in values.items():
            if table[key].default is None and value is None:       # optional and absent
                typed[key] = None
                continue
            kind = {"bool": bool, "int": int, "double": float, "string": str}[table[key].type]
            if kind is bool and not isinstance(value, bool):
                raise ControllerConfigError(f"parameter {key}: {value!r} is not a bool")
            try:
                typed[key] = kind(value)
            except (TypeError, ValueError) as exc:
                raise ControllerConfigError(f"parameter {key}: {value!r} is not a "
                                            f"{kind.__name__}") from exc
        settings = cls(**typed)
        settings.validate()
        return settings

    def as_mapping(self) -> dict[str, Any]:
        """Name → value of every setting (``from_mapping`` reads it back)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def validate(self) -> None:
        def need(ok: bool, name: str, what: str) -> None:
            if not ok:
                raise ControllerConfigError(f"parameter {name} = {getattr(self, name)!r}: {what}")
        need(self.mode in MODES, "mode", f"not one of {MODES}")
        need(self.publish_on in ("joint_states", "timer"), "publish_on",
             "must be joint_states or timer")
        for name in ("stale_timeout", "clock_timeout", "bounds_warn_after", "watchdog_period",
                     "timer_rate", "diagnostics_period", "takeover_position_tolerance",
                     "takeover_velocity_tolerance", "takeover_acceleration_tolerance"):
            need(getattr(self, name) > 0, name, "must be > 0")
        need(self.watchdog_period <= self.stale_timeout, "watchdog_period",
             "must be <= stale_timeout (stale input is noticed within one period)")
        need(self.debug_decimation >= 1, "debug_decimation", "must be >= 1")
        need(0 <= self.realtime_priority <= 99, "realtime_priority",
             "must be in [0, 99] (0: normal scheduling)")
        need(self.command_reliability in COMMAND_RELIABILITIES, "command_reliability",
             f"not one of {COMMAND_RELIABILITIES}")
        need(0 < self.torque_limit_scale <= 1, "torque_limit_scale", "must be in (0, 1]")
        for name in ("Kr", "alpha", "V_max"):
            value = getattr(self, name)
            need(value is None or value > 0, name, "must be > 0 (or absent: the robot file's)")
        need(self.r_norm_threshold is None or self.r_norm_threshold >= 0, "r_norm_threshold",
             "must be >= 0 (or absent)")
        need(self.boundary_layer is None or 0 <= self.boundary_layer <= 1, "boundary_layer",
             "must be in [0, 1] (a fraction of V_max; or absent)")


#: The ``robust_controller`` node's parameters, derived from the settings' fields.
PARAMETERS = parameter_table(ControllerSettings)
