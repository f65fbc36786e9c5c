"""Built-in MuJoCo simulator (no ROS import): models from the robot registry's URDFs, joint
friction/armature from the robot facts, torque limits, sensors with bounded noise, and a payload
whose truth is known to evaluation only. The ROS node is ``sysid_ros.nodes.sim``."""
from sysid_ros.simulation.errors import CommandError, PayloadError, SimConfigError, SimulationError
from sysid_ros.simulation.mjmodel import MujocoRobot, build_mujoco_model
from sysid_ros.simulation.payload import DUMBBELLS_KG, Payload, dumbbell_for, true_theta_e
from sysid_ros.simulation.simulator import ImuReading, Measurement, SimConfig, SimState, Simulator

__all__ = [
    "CommandError", "PayloadError", "SimConfigError", "SimulationError",
    "MujocoRobot", "build_mujoco_model",
    "DUMBBELLS_KG", "Payload", "dumbbell_for", "true_theta_e",
    "ImuReading", "Measurement", "SimConfig", "SimState", "Simulator",
]
