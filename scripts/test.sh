#!/usr/bin/env bash
# README command 2: set up (idempotent), then run the test suite in .venv with DDS confined to
# loopback and a domain id of its own. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$(( ($$ % 80) + 20 ))}
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
exec .venv/bin/python -m pytest -q "$@"
