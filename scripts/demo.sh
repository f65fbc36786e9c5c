#!/usr/bin/env bash
# README command 1: set up (idempotent), then the closed-loop demo on hardware-like simulated
# data: a Gen3 drawn off its catalogue (friction, armature, offsets, links, a noisy 1 kHz driver
# with drops and jitter) is recorded without payload and calibrated, then identifies a payload
# drawn inside the 8 lb dumbbell's class, plans and runs the task on the calibrated facts
# (scripts/demo_hardware_like.sh; about a minute). With arguments they go to sysid-demo instead: the idealised simulator (the
# seed paper's setup, the Z1, the B1 + Z1, the baselines; `sysid-demo --help`), e.g.
#   bash scripts/demo.sh --robot z1
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$#" -eq 0 ]; then
    exec bash scripts/demo_hardware_like.sh
fi
bash scripts/setup.sh
source scripts/ros_env.sh
exec .venv/bin/sysid-demo "$@"
