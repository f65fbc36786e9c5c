"""The ``sim`` node's parameter table (docs/reference/parameters.md), without ROS: the node
and the in-process demo graph (``sysid_ros._src.demo.pipeline``) read the same defaults."""
from __future__ import annotations

import math

from sysid_ros._src.nodes.params import Param
from sysid_ros._src.param_table import defaults_of
from sysid_ros._src.simulation.mjmodel import INTEGRATORS
from sysid_ros._src.simulation.sim_runtime import MODES, RuntimeSettings

__all__ = ["PARAMETERS"]

_SEED = (0, 1_000_000_000)
_SIM = defaults_of(RuntimeSettings)     # the library's defaults: the node's too
PARAMETERS = (
    Param("robot", "string", "registry name (gen3, z1, b1_z1) or robot-facts file path", "gen3"),
    Param("robot_config", "string", "robot-facts file overriding the named robot's"),
    Param("payload_mass", "double", "dumbbell (or custom payload) mass; 0 = no payload (the "
          "launch file always passes it)", _SIM["payload_mass"], (0.0, 100.0), unit="kg"),
    Param("payload_com", "double[]", "custom payload CoM [x, y, z], EE joint frame (absent: a "
          "dumbbell)", unit="m"),
    Param("payload_inertia", "double[]", "custom payload inertia about its CoM [ixx, ixy, ixz, "
          "iyy, iyz, izz], EE frame", unit="kg·m²"),
    Param("rate_hz", "double", "joint_states / imu / clock rate in sim time (hardware_like: the "
          "profile's)", _SIM["rate_hz"], (1.0, 10000.0), unit="Hz"),
    Param("physics_dt", "double", "physics step dividing 1/rate_hz (absent: the robot file's "
          "simulation.physics_dt, shortened to divide it); refused with hardware_like", None,
          (1e-6, 1e-3), unit="s"),
    Param("integrator", "string", "MuJoCo integrator", _SIM["integrator"], choices=tuple(INTEGRATORS)),
    Param("mode", "string", "realtime (wall-clock paced) or lockstep (as fast as possible, waits "
          "for the controller)", _SIM["mode"], choices=MODES),
    Param("lockstep_wait", "double", "longest wait for a command per period in lockstep (wall "
          "clock)", _SIM["lockstep_wait"], (1e-4, 10.0), unit="s"),
    Param("noise_tau", "double", "measured torque = applied + U(±noise_tau) (noise_* and "
          "quantize: not with hardware_like)", _SIM["noise_tau"], (0.0, 100.0), unit="N·m"),
    Param("noise_dq", "double", "velocity noise bound", _SIM["noise_dq"], (0.0, 100.0), unit="rad/s"),
    Param("quantize", "bool", "round positions to the encoder resolution", _SIM["quantize"]),
    Param("command_timeout", "double", "sim time after the newest command at which the hold "
          "controller takes over", _SIM["command_timeout"], (1e-6, 3600.0), unit="s"),
    Param("publish_clock", "bool", "publish /clock for use_sim_time nodes", True),
    Param("clock_rate_hz", "double", "/clock rate, sim time (ROS time resolution of use_sim_time "
          "nodes; each message costs each ~0.1 ms CPU)", _SIM["clock_rate_hz"], (1.0, 1e4), unit="Hz"),
    Param("seed", "int", "simulator noise seed", _SIM["seed"], _SEED),
    Param("initial_q", "double[]", "initial joint positions, robot.joint_names order (absent: "
          "simulation.home)", unit="rad"),
    Param("duration", "double", "exit after this much sim time (absent: run until stopped)",
          None, (1e-6, math.inf), unit="s"),
    Param("wait_subscribers", "int", "hold sim time at 0 until this many joint_states "
          "subscribers (a graph started together sees the first step)", _SIM["wait_subscribers"], (0, 1000)),
    Param("hardware_like", "bool", "publish data like the real robot's (robot file's "
          "simulation.hardware_like: drawn truth, offsets, drops, jitter, noise)", _SIM["hardware_like"]),
    Param("hardware_seed", "int", "seed of the hardware-like truth and publication model",
          _SIM["hardware_seed"], _SEED),
)
