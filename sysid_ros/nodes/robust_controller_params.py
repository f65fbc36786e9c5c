"""The ``robust_controller`` node's parameter table (docs/reference/parameters.md): kept beside the node so
the shell stays a shell; ``control.runtime.ControllerSettings`` is the validated value object
built from these values (a test checks that both agree name by name and default by default)."""
from __future__ import annotations

from sysid_ros.control.controller import MODES
from sysid_ros.control.runtime import COMMAND_RELIABILITIES
from sysid_ros.nodes.params import Param

__all__ = ["PARAMETERS"]

_S = (1e-4, 3600.0)       # a duration in seconds
_TOL = (1e-9, 1e3)
#: The node's parameters (docs/reference/parameters.md); the optional gains override the robot file's
#: ``controller:`` section, absent = that section's value.
PARAMETERS = (
    Param("robot", "string", "registry name (gen3, z1, b1_z1) or robot-facts file path; "
          "b1_z1 is controlled as its arm view (trunk as base)", "gen3"),
    Param("robot_config", "string", "robot-facts file overriding the named robot's"),
    Param("calibration", "string", "sysid-calibrate result (calib.yaml): calibrated friction and "
          "link facts"),
    Param("mode", "string", "law: robust (identifier's box), conservative (prior box), wrong "
          "(no payload, taken as exact), pid (gravity compensation + PID)", "robust",
          choices=MODES),
    Param("Kr", "double", "composite-error gain K_r, all joints (absent: controller.Kr)", None,
          (1e-6, 1e4), unit="1/s"),
    Param("alpha", "double", "robust-input decay rate α (absent: controller.alpha)", None,
          (1e-6, 1e6), unit="1/s"),
    Param("V_max", "double", "Lyapunov level the law keeps V below (absent: controller.V_max; "
          "the planner's tracking box assumes the robot file's)", None, (1e-12, 1e6), unit="J"),
    Param("r_norm_threshold", "double", "‖r‖ below which the robust input is 0 (absent: "
          "controller.r_norm_threshold)", None, (0.0, 1.0), unit="rad/s"),
    Param("boundary_layer", "double", "robust-input boundary layer η, a fraction of V_max "
          "(absent: controller.boundary_layer; 0 = none; docs/theory/controller.md#law)", None, (0.0, 1.0)),
    Param("torque_limit_scale", "double", "fraction of the torque limits the command is clipped "
          "to (clipping voids the guarantee and is flagged)", 1.0, (1e-6, 1.0)),
    Param("theta_r_uncertainty", "bool", "carry the θ_r and friction boxes in the torque "
          "interval (false: nominal θ_r and friction taken as exact, unsound)", True),
    Param("publish_on", "string", "command on every joint_states message, or on a timer",
          "joint_states", choices=("joint_states", "timer")),
    Param("timer_rate", "double", "command rate when publish_on = timer", 1000.0, (1e-3, 1e5),
          unit="Hz"),
    Param("stale_timeout", "double", "steady-clock age of joint_states after which commands "
          "stop and the node deactivates (ERROR)", 0.02, _S, unit="s"),
    Param("clock_timeout", "double", "ROS time frozen this long under use_sim_time counts as "
          "stale input (/clock died)", 0.1, _S, unit="s"),
    Param("bounds_warn_after", "double", "no payload bounds for this long: WARN (commanding "
          "continues)", 5.0, _S, unit="s"),
    Param("watchdog_period", "double", "steady-clock watchdog period, at most stale_timeout",
          0.005, _S, unit="s"),
    Param("auto_reactivate", "bool", "re-activate by itself when inputs are fresh after a stale "
          "stop (simulation); false: the operator activates (hardware)", False),
    Param("accept_uncertified", "bool", "run trajectories without a valid planner certificate",
          False),
    Param("check_torque", "bool", "refuse trajectories no θ in the box can follow within the "
          "torque limits (sampled; control/admission.py)", True),
    Param("takeover_position_tolerance", "double", "first point vs the current reference at "
          "take-over", 0.02, _TOL, unit="rad"),
    Param("takeover_velocity_tolerance", "double", "take-over velocity tolerance, also the "
          "'ends at rest' one", 0.05, _TOL, unit="rad/s"),
    Param("takeover_acceleration_tolerance", "double", "take-over acceleration tolerance", 0.5,
          _TOL, unit="rad/s²"),
    Param("pid_kp", "double", "PID baseline (mode pid) proportional gain, all joints", 100.0,
          (0.0, 1e6), unit="N·m/rad"),
    Param("pid_ki", "double", "PID baseline integral gain", 20.0, (0.0, 1e6), unit="N·m/(rad·s)"),
    Param("pid_kd", "double", "PID baseline derivative gain", 20.0, (0.0, 1e6),
          unit="N·m·s/rad"),
    Param("pid_i_clamp", "double", "PID anti-windup: |∫e| clamp", 0.2, (0.0, 1e3), unit="rad·s"),
    Param("debug_decimation", "int", "~/tracking_error and ~/state every n-th command", 10,
          (1, 10**6)),
    Param("diagnostics_period", "double", "/diagnostics period", 1.0, _S, unit="s"),
    Param("autostart", "bool", "configure and activate at start (simulation launches)", False),
    Param("joint_states_topic", "string", "measured joint states", "joint_states"),
    Param("bounds_topic", "string", "the identifier's θ_e box", "/sysid/payload_bounds"),
    Param("trajectory_topic", "string", "desired trajectories", "/sysid/desired_trajectory"),
    Param("command_topic", "string", "effort commands", "/effort_controller/commands"),
    Param("command_reliability", "string", "QoS of the effort commands: reliable (ros2_control's "
          "forward controllers; hardware) or best_effort (the built-in simulator's launch)",
          "reliable", choices=COMMAND_RELIABILITIES),
    Param("realtime_priority", "int", "SCHED_FIFO priority of the command thread, and one "
          "below it of the middleware threads that wake it (0 = normal; hardware: e.g. 80, "
          "needs an rtprio limit or CAP_SYS_NICE, else WARN and normal priority)", 0,
          (0, 99)),
)
