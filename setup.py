"""ament_python package definition for sysid_ros.

On a full ROS 2 install ``colcon build`` uses this file; here ``scripts/setup.sh`` installs it
editable into ``.venv``. Console scripts double as ``ros2 run sysid_ros <name>`` executables.
"""
from glob import glob

from setuptools import find_packages, setup

PACKAGE = "sysid_ros"

setup(
    name=PACKAGE,
    version="0.1.0",
    packages=find_packages(include=[PACKAGE, f"{PACKAGE}.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", [f"resource/{PACKAGE}"]),
        (f"share/{PACKAGE}", ["package.xml"]),
        (f"share/{PACKAGE}/launch", glob("launch/*")),
        (f"share/{PACKAGE}/config",
         glob("config/*.yaml") + glob("config/*.rviz") + glob("config/*.json")
         + glob("config/*.xml")),
        (f"share/{PACKAGE}/urdf", glob("urdf/*.urdf") + glob("urdf/*.xacro")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="sysid_ros developers",
    maintainer_email="sysid-ros@example.invalid",
    description="Online, provably sound payload identification with safe exciting trajectories "
    "and a robust controller for ROS 2.",
    license="BSD-3-Clause",
    python_requires=">=3.10",
    entry_points={
        "console_scripts": [
            # CLIs
            "sysid-identify = sysid_ros._src.identification.identify_cli:main",
            "sysid-calibrate = sysid_ros._src.calibration.calibrate_cli:main",
            "sysid-launch = sysid_ros._src.launcher.launch_cli:main",
            "sysid-record = sysid_ros._src.nodes.recorder:main",
            "sysid-replay = sysid_ros._src.nodes.replay:main",
            "sysid-demo = sysid_ros._src.demo.demo_cli:main",
            "sysid-sim-record = sysid_ros._src.simulation.record_cli:main",
            "sysid-shm-clean = sysid_ros._src.launcher.shm:main",
            "sysid-import = sysid_ros._src.bagio.import_cli:main",
            # ROS 2 nodes (ros2 run sysid_ros <name>)
            "identifier = sysid_ros._src.nodes.identifier:main",
            "sim = sysid_ros._src.nodes.sim:main",
            "robust_controller = sysid_ros._src.nodes.robust_controller:main",
            "exciting_planner = sysid_ros._src.nodes.exciting_planner:main",
            "recorder = sysid_ros._src.nodes.recorder:main",
            "replay = sysid_ros._src.nodes.replay:main",
            "markers = sysid_ros._src.nodes.markers:main",
        ],
    },
)
