"""Shared test set-up: DDS stays on loopback and each pytest process gets a domain id of its own.

Which API the tests use: the tests under test/<package>/ check the private machinery
(``sysid_ros._src.<package>``) module by module against independent references (Pinocchio,
finite differences, MuJoCo truth, SciPy), so they import it directly; what a user runs — the
examples and the README's Python block — uses only ``import sysid_ros`` (test_public_api.py).
"""
from __future__ import annotations

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
os.environ.setdefault("ROS_DOMAIN_ID", str(20 + os.getpid() % 80))
# the suite's Fast DDS profile, as sysid-launch and scripts/ros_env.sh set it
os.environ.setdefault("FASTRTPS_DEFAULT_PROFILES_FILE",
                      os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                   "config", "fastdds.xml"))

# shared-memory ports left by dead processes would keep their old queue sizes (launcher/shm.py)
from sysid_ros._src.launcher.shm import sweep_stale_fastdds_files

sweep_stale_fastdds_files()
