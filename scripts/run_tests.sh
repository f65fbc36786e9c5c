#!/usr/bin/env bash
# Runs the suite inside .venv with DDS confined to loopback and a domain id of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$(( ($$ % 80) + 20 ))}
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
exec .venv/bin/python -m pytest -q "$@"
