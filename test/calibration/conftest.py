"""Shared recordings for the calibration tests: hardware-like MuJoCo data with known truth
(:mod:`sysid_ros._src.calibration.synthetic`: friction/armature up to ±50 % off nominal, Coulomb
friction, sensor offsets, links ±5 %, 500 Hz with 1 % dropped samples).

Short recordings keep the folder within its time budget on a 2-core machine.
``SYSID_CALIB_ROBOTS`` (default 6) sets how many random robots the soundness tests draw;
``python -m bench.bench_calibration`` runs the same check on 20.
"""
from __future__ import annotations

import os

import pytest

from sysid_ros._src.calibration.synthetic import draw_case
from sysid_ros._src.model.robots import load_robot

N_ROBOTS = int(os.environ.get("SYSID_CALIB_ROBOTS", "6"))
CAL_SECONDS = 20.0
PAYLOAD_SECONDS = 6.0


@pytest.fixture(scope="session")
def gen3():
    return load_robot("gen3")


@pytest.fixture(scope="session")
def cases(gen3):
    return [draw_case(gen3, k, cal_seconds=(CAL_SECONDS,), payload_seconds=PAYLOAD_SECONDS)
            for k in range(N_ROBOTS)]
