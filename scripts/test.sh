#!/usr/bin/env bash
# README command 2: set up (idempotent), then run the test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/ros_env.sh
exec .venv/bin/python -m pytest -q --durations=15 "$@"
