"""Launch-file parsing: the shipped files resolve, selections work, errors are one clear line."""
from __future__ import annotations

from pathlib import Path

import pytest

from sysid_ros._src.launcher import LaunchError, load_launch
from sysid_ros._src.launcher.launch_cli import main as cli_main

HERE = Path(__file__).parent


def _names(desc):
    return [p.name for p in desc.processes]


def test_shipped_launch_files_resolve():
    sim = load_launch("sim", {"robot": "z1", "record": "true"})
    assert _names(sim) == ["sim", "identifier", "exciting_planner", "robust_controller", "recorder"]
    ident = sim.processes[1]
    assert ident.required and ident.param_files[0].endswith("config/identifier.yaml")
    assert "robot:=z1" in ident.cmd
    assert "__node:=identifier" in ident.cmd and "use_sim_time:=true" in ident.cmd
    # the planner's work can wait; the 1 kHz nodes' cannot (README, CPU budget)
    assert sim.processes[2].cmd[:3] == ("nice", "-n", "10")
    assert load_launch("sim", {"planner_launch_prefix": "nice -n 3"}).processes[2].cmd[:3] == (
        "nice", "-n", "3")
    assert load_launch("sim", {"planner_launch_prefix": ""}).processes[2].cmd[0] != "nice"
    assert _names(load_launch("sim.launch.yaml", {"enable_planner": "false"})) == [
        "sim", "identifier", "robust_controller"]
    hw = load_launch("hardware", {"command_topic": "/arm/cmd"})
    assert _names(hw) == ["identifier", "exciting_planner", "robust_controller"]
    assert "/effort_controller/commands:=/arm/cmd" in hw.processes[2].cmd
    assert "use_sim_time:=false" in hw.processes[0].cmd
    rp = load_launch("replay", {"bag": "/tmp/b"})
    assert _names(rp) == ["replay", "identifier"]
    assert "bag:=/tmp/b" in rp.processes[0].cmd


@pytest.mark.parametrize("text, match", [
    ("launch: [\n  - node: {pkg: a\n", r"bad\.launch\.yaml: YAML syntax error: line \d+"),
    ("nodes: []\n", "single key 'launch'"),
    ("launch:\n- group: {}\n", r"launch\[0\]\.group: unsupported entry 'group'"),
    ("launch:\n- node: {pkg: sysid_ros, exec: replay, respawn: true}\n",
     r"launch\[0\]\.node: unsupported key\(s\) \['respawn'\]"),
    ("launch:\n- node: {pkg: sysid_ros, exec: replay, name: $(var nope)}\n",
     "undefined launch argument 'nope'"),
    ("launch:\n- node: {pkg: sysid_ros, exec: replay, name: $(eval 1+1)}\n",
     r"unsupported substitution \$\(eval"),
    ("launch:\n- node: {pkg: sysid_ros, exec: no_such_exec}\n", "executable 'no_such_exec'"),
    ("launch:\n- arg: {name: x, default: maybe}\n- node: {if: $(var x), pkg: sysid_ros, exec: replay}\n",
     "'maybe' is not a boolean"),
])
def test_parse_errors_are_clear(tmp_path, text, match):
    f = tmp_path / "bad.launch.yaml"
    f.write_text(text)
    with pytest.raises(LaunchError, match=match) as info:
        load_launch(f)
    assert "\n" not in str(info.value)


def test_cli_reports_errors(capsys, tmp_path):
    assert cli_main([str(HERE / "replay_record.launch.yaml")]) == 2
    assert "launch argument 'bag' is required" in capsys.readouterr().err
    assert cli_main([str(HERE / "replay_record.launch.yaml"), "bag:=/b", "out:=/o", "--print"]) == 0
    out = capsys.readouterr().out
    assert "[player]" in out and "[rec]" in out
