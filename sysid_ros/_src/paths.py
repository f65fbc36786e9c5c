"""Where the package's data files (config/, urdf/, launch/) live.

From the source tree or an editable install they sit beside the ``sysid_ros`` Python package;
after ``colcon build`` they are under ``<prefix>/share/sysid_ros``. No ROS import needed.
"""
from __future__ import annotations

import sys
from pathlib import Path

import sysid_ros

__all__ = ["package_share", "example_robot_data_dir", "fastdds_profile", "FASTDDS_PROFILE_ENV"]

#: environment variable through which rmw_fastrtps_cpp reads a participant profile
FASTDDS_PROFILE_ENV = "FASTRTPS_DEFAULT_PROFILES_FILE"


def package_share() -> Path:
    """Directory holding ``config/``, ``urdf/`` and ``launch/``."""
    source_root = Path(sysid_ros.__file__).resolve().parents[1]
    if (source_root / "config").is_dir() and (source_root / "package.xml").is_file():
        return source_root
    for prefix in (sys.prefix, *map(str, Path(sys.prefix).parents)):
        share = Path(prefix) / "share" / "sysid_ros"
        if (share / "config").is_dir():
            return share
    raise FileNotFoundError("cannot find the sysid_ros share directory (config/, urdf/)")


def fastdds_profile() -> Path:
    """config/fastdds.xml: the Fast DDS profile of the suite's single-machine graphs (deep
    shared-memory queues, UDP on loopback only; why: the file's own comment)."""
    return package_share() / "config" / "fastdds.xml"


def example_robot_data_dir() -> Path:
    """Root of the robots shipped by the ``example-robot-data`` wheel (cmeel prefix)."""
    for entry in sys.path:
        candidate = Path(entry) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        "example-robot-data is not installed (pip install example-robot-data): "
        "the z1 and b1_z1 models come from it")
