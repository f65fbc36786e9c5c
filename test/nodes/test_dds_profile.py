"""config/fastdds.xml: a 1 kHz reader that is descheduled for a second loses nothing with the
suite's DDS profile, and does with Fast DDS's defaults (so the profile is what keeps the data);
graphs get the profile only when DDS stays on the machine."""
from __future__ import annotations

import os
import signal
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from sysid_ros._src.bagio.reader import open_bag
from sysid_ros._src.cdr import joint_state_layout
from sysid_ros._src.launcher.graph import Graph
from sysid_ros._src.launcher.parse import LaunchDescription
from sysid_ros._src.launcher.shm import sweep_stale_fastdds_files
from sysid_ros._src.paths import FASTDDS_PROFILE_ENV, fastdds_profile

from .processes import start_node, stop

_NS = "{http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles}"


def test_profile_is_loopback_only_with_deep_shared_memory() -> None:
    root = ET.parse(fastdds_profile()).getroot()
    kinds = {d.findtext(f"{_NS}type"): d for d in root.iter(f"{_NS}transport_descriptor")}
    assert set(kinds) == {"SHM", "UDPv4"}
    assert [a.text for a in kinds["UDPv4"].iter(f"{_NS}address")] == ["127.0.0.1"]
    assert int(kinds["SHM"].findtext(f"{_NS}port_queue_capacity")) >= 4096
    assert root.find(f".//{_NS}useBuiltinTransports").text == "false"


@pytest.mark.parametrize("discovery, expected", [("LOCALHOST", True), ("SUBNET", False)])
def test_graph_sets_the_profile_only_for_graphs_kept_on_the_machine(
        monkeypatch: pytest.MonkeyPatch, discovery: str, expected: bool) -> None:
    monkeypatch.delenv(FASTDDS_PROFILE_ENV, raising=False)
    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", discovery)
    env = Graph(LaunchDescription(Path("empty.launch.yaml"), {})).env
    assert (env.get(FASTDDS_PROFILE_ENV) == str(fastdds_profile())) is expected
    monkeypatch.setenv(FASTDDS_PROFILE_ENV, "/my/own.xml")          # the user's choice wins
    assert Graph(LaunchDescription(Path("empty.launch.yaml"), {})).env[FASTDDS_PROFILE_ENV] == "/my/own.xml"


def _lost_while_stopped(tmp_path, stops: int, stop_s: float) -> tuple[int, int]:
    """(joint_states missing from the recorder's bag, messages in it) when the recorder is
    SIGSTOPped ``stops`` times for ``stop_s`` while the simulator publishes at 1 kHz."""
    bag = tmp_path / "bag"
    # a port left by an earlier run with Fast DDS's defaults would be reopened with its 512-slot
    # queue (sysid_ros/_src/launcher/shm.py): the recorder lost 1071 of ~6000 that way
    sweep_stale_fastdds_files()
    sim = start_node("sim", "robot:=gen3", "use_sim_time:=true", "wait_subscribers:=1")
    rec = start_node("recorder", f"output:={bag}", "topics:=['/joint_states']",
                     "use_sim_time:=true")
    try:
        time.sleep(5.0)                       # discovery, the first second of data
        for _ in range(stops):
            os.killpg(rec.pid, signal.SIGSTOP)
            time.sleep(stop_s)
            os.killpg(rec.pid, signal.SIGCONT)
            time.sleep(1.5)
    finally:
        os.killpg(rec.pid, signal.SIGCONT)
        rec_out = stop(rec)
        stop(sim)
    reader = open_bag(bag)
    try:
        conns = [c for c in reader.connections if c.topic == "/joint_states"]
        stamps = np.array([joint_state_layout(raw).stamp_ns
                           for _, _, raw in reader.messages(connections=conns)])
    finally:
        reader.close()
    assert stamps.size > 1000, rec_out
    steps = np.round(np.diff(stamps) / 1e6).astype(int)       # sim stamps every 1 ms
    return int((steps[steps > 1] - 1).sum()), int(stamps.size)


@pytest.mark.slow
def test_a_reader_stopped_for_a_second_loses_nothing_with_the_profile(
        tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FASTDDS_PROFILE_ENV, str(fastdds_profile()))
    lost, kept = _lost_while_stopped(tmp_path / "profile", stops=2, stop_s=1.0)
    assert lost == 0, f"{lost} joint_states lost of {kept + lost} with config/fastdds.xml"
    monkeypatch.delenv(FASTDDS_PROFILE_ENV)
    lost, kept = _lost_while_stopped(tmp_path / "defaults", stops=1, stop_s=1.0)
    assert lost > 100, (f"Fast DDS's defaults kept {kept} and lost only {lost}: the test no "
                        "longer shows what the profile is for")
