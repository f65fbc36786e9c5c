"""Node parameters from one table per node (sysid_ros._src.nodes.params): the docs page and the
config/ YAML files agree with the tables, bad values are refused by name, and a real node exposes
type, range and description through its parameter descriptors."""
from __future__ import annotations

from pathlib import Path

import pytest

from sysid_ros._src.nodes.params import Param, ParameterError, check_value, check_yaml, node_tables, reference_markdown

ROOT = Path(__file__).resolve().parents[2]


def test_docs_page_is_generated_from_the_tables() -> None:
    assert (ROOT / "docs" / "reference" / "parameters.md").read_text() == reference_markdown(), \
        "docs/reference/parameters.md is stale: python scripts/make_reference.py"


@pytest.mark.parametrize("node", sorted(node_tables()))
def test_config_file_matches_the_table(node: str) -> None:
    assert check_yaml(ROOT / "config" / f"{node}.yaml", node_tables()[node]) == []


def test_check_yaml_names_each_problem(tmp_path: Path) -> None:
    table = (Param("rate_hz", "double", "rate", 10.0, (1e-3, 100.0), unit="Hz"),
             Param("mode", "string", "mode", "a", choices=("a", "b")))
    f = tmp_path / "x.yaml"
    f.write_text("/**:\n  ros__parameters:\n    rate_hz: 10\n    mode: c\n    typo: 1\n"
                 "    use_sim_time: true\n")
    problems = check_yaml(f, table)
    assert len(problems) == 3
    assert any("rate_hz = 10 must be written as a double" in p for p in problems)
    assert any("mode = 'c' is not one of a, b" in p for p in problems)
    assert any("typo is not a parameter" in p for p in problems)


def test_check_value_refuses_wrong_types_and_ranges() -> None:
    p = Param("n", "int", "count", 3, (2, 200))
    assert check_value(p, 5, "here") == 5
    for bad in (True, 1, 201, "5", 5.0):
        with pytest.raises(ParameterError, match="parameter n"):
            check_value(p, bad, "here")
    d = Param("x", "double", "value", 1.0, (0.0, 1.0))
    assert check_value(d, 1, "here") == 1.0 and isinstance(check_value(d, 1, "here"), float)
    with pytest.raises(ParameterError, match=r"outside \[0, 1\]"):
        check_value(d, float("nan"), "here")
    with pytest.raises(ParameterError, match="default"):
        Param("y", "double", "bad default", 5.0, (0.0, 1.0))


@pytest.mark.ros
def test_real_node_describes_and_enforces_its_table() -> None:
    import rclpy
    from rclpy.parameter import Parameter

    from sysid_ros._src.nodes.markers import MarkersNode

    rclpy.init(args=["--ros-args", "-p", "rate_hz:=5.0"])
    try:
        node = MarkersNode()
        desc = node.describe_parameter("rate_hz")
        assert desc.type == Parameter.Type.DOUBLE.value and "wall clock" in desc.description
        assert desc.floating_point_range[0].to_value == 100.0
        assert node.period == pytest.approx(0.2)
        assert not node.has_parameter("robot_config") or \
            node.get_parameter_or("robot_config").value is None                  # absent
        node.destroy_node()
    finally:
        rclpy.try_shutdown()
    rclpy.init(args=["--ros-args", "-p", "rate_hz:=500.0"])
    try:
        with pytest.raises(ParameterError, match="rate_hz"):
            MarkersNode()
    finally:
        rclpy.try_shutdown()
