"""The public surface of ``sysid_ros``: exactly the names below (a change here is an API change,
made on purpose), each one importable and defined where the package says, ``import sysid_ros``
loads none of the machinery until a name is used, and what a user copies — examples/ and the
README's Python block — uses nothing else."""
from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import sysid_ros

ROOT = Path(__file__).resolve().parents[1]

PUBLIC = [
    "CalibrationOptions", "CalibrationResult", "ControllerRuntime", "ExcitingPlanner",
    "HardwareProfile", "IdentificationConfig", "IdentificationResult", "IdentifierRuntime",
    "JointStateSeries", "OnlineIdentifier", "ParameterBox", "PlannerConfig", "Recording", "Robot",
    "apply_calibration", "calibrate", "dumbbell_for", "identify", "load_identification_config",
    "load_robot", "read_joint_states", "record_hardware_like", "theta_e_box",
    "write_joint_state_arrays",
]


def test_the_public_names_are_these_and_resolve():
    assert sysid_ros.__all__ == sorted(PUBLIC) == sorted(sysid_ros._WHERE)
    assert len(PUBLIC) <= 25
    for name in PUBLIC:
        obj = getattr(sysid_ros, name)
        assert obj.__name__ == name and obj.__module__.startswith("sysid_ros._src."), name


def test_an_unknown_name_is_an_attribute_error():
    try:
        sysid_ros.identify_everything  # noqa: B018
    except AttributeError as err:
        assert "identify_everything" in str(err)
    else:
        raise AssertionError("an unknown name resolved")


def test_importing_the_package_loads_no_machinery():
    code = ("import sys, sysid_ros; "
            "print(sorted(m for m in sys.modules if m.startswith('sysid_ros.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]", out


def private_uses(source: str) -> list[str]:
    """What ``source`` takes from sysid_ros beyond ``import sysid_ros [as x]`` and ``x.<public>``."""
    tree = ast.parse(source)
    aliases, bad = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "sysid_ros":
                    aliases.add(a.asname or a.name)
                elif a.name.startswith("sysid_ros."):
                    bad.append(f"line {node.lineno}: import {a.name}")
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sysid_ros":
            bad.append(f"line {node.lineno}: from {node.module} import ...")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id in aliases and node.attr not in sysid_ros.__all__:
            bad.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return bad


def test_the_public_api_check_sees_private_uses():
    assert private_uses("import sysid_ros as sr\nsr.load_robot('gen3')\n") == []
    assert private_uses("import sysid_ros as sr\nsr._src.model\n") == ["line 2: sr._src"]
    assert private_uses("from sysid_ros._src.model import box\n") == \
        ["line 1: from sysid_ros._src.model import ..."]
    assert private_uses("import sysid_ros._src.model\n") == ["line 1: import sysid_ros._src.model"]


def _user_code() -> list[tuple[str, str]]:
    blocks = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)
    return ([(f"examples/{p.name}", p.read_text()) for p in sorted((ROOT / "examples").glob("*.py"))]
            + [("README.md", b) for b in blocks])


@pytest.mark.parametrize("name,source", _user_code(), ids=[n for n, _ in _user_code()])
def test_examples_and_the_readme_use_only_the_public_api(name: str, source: str):
    assert "import sysid_ros" in source, name
    assert private_uses(source) == [], name
