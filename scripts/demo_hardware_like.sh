#!/usr/bin/env bash
# The closed-loop demo on hardware-like data (docs/guide/hardware-like-data.md): a Gen3 drawn off the
# catalogue (friction and armature +-50 %, dry friction, torque offsets, links +-5 %, a 1 kHz
# driver with drops, jitter, noise, lagging torque and velocity streams and a friction error
# that grows with speed) is recorded without payload and calibrated, then runs the
# demo on the calibrated facts. Usage: bash scripts/demo_hardware_like.sh [OUT_DIR] [HARDWARE_SEED]
# (default out/demo-hw-<time>, seed 0). Exit code: sysid-demo's (0 = Result: success).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
source scripts/ros_env.sh
out="${1:-out/demo-hw-$(date +%Y%m%d-%H%M%S)}"
seed="${2:-0}"
mkdir -p "$out"
.venv/bin/sysid-sim-record --hardware-seed "$seed" --seconds 60 --out "$out/calib_bag" >/dev/null
.venv/bin/sysid-sim-record --hardware-seed "$seed" --seconds 20 --seed 1 --out "$out/val_bag" >/dev/null
# the driver's velocity lag is estimated (the default) and its friction error grows with speed:
# a speed-dependent torque-error bound (--noise-speed)
.venv/bin/sysid-calibrate --robot gen3 --bag "$out/calib_bag" --validate "$out/val_bag" \
    --noise-speed --out "$out/calib.yaml"
exec .venv/bin/sysid-demo --hardware-like --hardware-seed "$seed" --calibration "$out/calib.yaml" \
    --prior dumbbell_8lb --out "$out/demo"
