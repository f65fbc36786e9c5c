"""Built-in MuJoCo simulator (no ROS import): models from the robot registry's URDFs, joint
friction/armature from the robot facts, torque limits, sensors with bounded noise, and a payload
whose truth is known to evaluation only; a simulator is built in one pass from one resolved
``SimulatorSpec`` (``spec``). ``hardware_like`` records data that look like a real
robot's logs (a perturbed truth, MuJoCo dry friction, sensor offsets, imperfect publication).
``sim_runtime`` is the sim node's logic (schedule, commands, lock-step, reset) without ROS; the
ROS node ``sysid_ros._src.nodes.sim`` only moves its messages."""
from sysid_ros._src.simulation.errors import CommandError, PayloadError, SimConfigError, SimulationError
from sysid_ros._src.simulation.hardware_like import (
    VELOCITY_MODES, ExactSamples, HardwareProfile, HardwareRecording, HardwareSensor,
    PublishedSamples, record_hardware_like, write_joint_states_bag,
)
from sysid_ros._src.simulation.mjmodel import MujocoRobot, build_mujoco_model
from sysid_ros._src.simulation.payload import DUMBBELLS_KG, Payload, dumbbell_for, true_theta_e
from sysid_ros._src.simulation.reference import SumOfSines, exciting_reference
from sysid_ros._src.simulation.sim_runtime import (
    JointSample, Publication, RealtimePacer, RuntimeSettings, SimRuntime, payload_from_settings,
)
from sysid_ros._src.simulation.simulator import ImuReading, Measurement, SimState, Simulator
from sysid_ros._src.simulation.spec import SimConfig, SimulatorSpec, robot_physics_dt
from sysid_ros._src.simulation.truth import (HardwareTruth, drawn_truth, hardware_truth_settings,
                                        random_hardware_truth, sim_truth)

__all__ = [
    "CommandError", "PayloadError", "SimConfigError", "SimulationError",
    "MujocoRobot", "build_mujoco_model",
    "DUMBBELLS_KG", "Payload", "dumbbell_for", "true_theta_e",
    "ImuReading", "Measurement", "SimConfig", "SimState", "Simulator", "SimulatorSpec",
    "robot_physics_dt",
    "SumOfSines", "exciting_reference",
    "JointSample", "Publication", "RealtimePacer", "RuntimeSettings", "SimRuntime",
    "payload_from_settings",
    "HardwareTruth", "drawn_truth", "hardware_truth_settings", "random_hardware_truth",
    "sim_truth",
    "VELOCITY_MODES", "ExactSamples", "HardwareProfile", "HardwareRecording", "HardwareSensor",
    "PublishedSamples", "record_hardware_like", "write_joint_states_bag",
]
