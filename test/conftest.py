"""Shared test set-up: DDS stays on loopback and each pytest process gets a domain id of its own."""
from __future__ import annotations

import os

os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
os.environ.setdefault("ROS_DOMAIN_ID", str(20 + os.getpid() % 80))
