#!/usr/bin/env bash
# README command 1: set up (idempotent), then run the closed-loop demo on the built-in simulator.
# Extra arguments go to sysid-demo (see `sysid-demo --help`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/ros_env.sh
exec .venv/bin/sysid-demo "$@"
