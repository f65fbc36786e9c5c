#!/usr/bin/env bash
# README command 1: set up (idempotent), then run the closed-loop demo on the built-in simulator.
# Extra arguments go to sysid-demo (see `sysid-demo --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
export ROS_DOMAIN_ID=${ROS_DOMAIN_ID:-$(( ($$ % 80) + 20 ))}
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp
exec .venv/bin/sysid-demo "$@"
