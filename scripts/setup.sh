#!/usr/bin/env bash
# Idempotent set-up for sysid_ros on Debian 12: apt packages, .venv, pinned Python
# dependencies, the package itself (editable). A second run only checks stamps and exits.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PY=${PYTHON:-python3}
# Ipopt (cyipopt builds against it) and a compiler; python3-venv/-dev only when the chosen
# interpreter lacks venv/ensurepip or its headers (Debian splits them out of python3).
APT_PKGS=(coinor-libipopt-dev liblapack-dev libblas-dev pkg-config gcc g++)
"$PY" -c "import venv, ensurepip" 2>/dev/null || APT_PKGS+=(python3-venv)
"$PY" -c "import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" \
  || APT_PKGS+=(python3-dev)

missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] apt: installing ${missing[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  echo "[setup] creating .venv" >&2
  "$PY" -m venv .venv
fi

stamp_src=$(cat requirements.txt constraints.txt setup.py setup.cfg package.xml | sha256sum | cut -d' ' -f1)
if [ "$(cat .venv/.setup-stamp 2>/dev/null)" != "$stamp_src" ]; then
  echo "[setup] installing pinned Python dependencies" >&2
  # A pinned modern pip first: the one venv bundles (23.x) installs an ament_python package
  # editable through legacy `setup.py develop`, which puts console scripts where setup.cfg tells
  # colcon to (lib/sysid_ros), not in .venv/bin.
  .venv/bin/python -m pip install -q --disable-pip-version-check "pip==26.3"
  .venv/bin/python -m pip install -q --disable-pip-version-check -r requirements.txt -c constraints.txt
  .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps --no-build-isolation -e .
  echo "$stamp_src" > .venv/.setup-stamp
fi
