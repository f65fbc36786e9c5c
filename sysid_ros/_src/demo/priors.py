"""Which θ_e prior a demo run starts from, and whether the planner can certify anything from it.

The prior B₀ is a fact every node of the graph must share: the identifier starts its box from it,
the controller holds it until the first bounds, the planner certifies the first plan with it
(``control.prior.prior_box`` reads ``identification.prior`` of the robot file). A run that starts
from another entry of ``identification.priors`` therefore gets its own copy of the robot facts
file with that one key changed (:func:`robot_with_prior`), passed to every node as ``robot:=PATH``
— the same mechanism as a user's edited robot file — and written into the run's output folder,
so the run documents the assumption it rested on.

:func:`start_refusal` is the pre-flight check: the least demanding motion the planner could
publish is to hold the start pose (a plan with k = 0 from rest). If the sound check of
``planning.reachability`` rejects even that for every θ_e in the prior, no exciting trajectory
can be certified and the robot must not be moved; the reasons name the violated limit.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from sysid_ros._src.demo.errors import DemoConfigError
from sysid_ros._src.model.robots import Robot, load_robot

__all__ = ["demo_prior", "robot_with_prior", "start_refusal"]


def demo_prior(robot: Robot, requested: str | None, controller: str) -> str:
    """The prior name a run uses: ``requested`` (``--prior``), else the demo section's
    ``demo.prior`` for the robust controller, else the robot file's ``identification.prior``
    (baselines never identify: they know only the robot file's default class)."""
    ident = robot.config.get("identification") or {}
    default = ident.get("prior")
    if requested:
        name = requested
    elif controller == "robust" and (robot.config.get("demo") or {}).get("prior"):
        name = str(robot.config["demo"]["prior"])
    elif isinstance(default, str):
        name = default
    else:
        return ""                      # an inline box in the robot file: nothing to select
    priors = ident.get("priors") or {}
    if name not in priors:
        raise DemoConfigError(f"{robot.config_path}: prior {name!r} is not one of "
                              f"identification.priors ({sorted(priors) or 'none defined'})")
    return name


def robot_with_prior(robot: Robot, prior: str, directory: Path) -> Path:
    """Copy of ``robot``'s facts file in ``directory`` with ``identification.prior: prior``;
    its path (for ``robot:=``). The robot file itself is never modified."""
    config = yaml.safe_load(Path(robot.config_path).read_text())
    config.setdefault("identification", {})["prior"] = prior
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{robot.name}.yaml"
    path.write_text(f"# {robot.config_path} with identification.prior: {prior} (sysid-demo)\n"
                    + yaml.safe_dump(config, sort_keys=False))
    load_robot(path)                   # fails here, naming the field, rather than in a node
    return path


def start_refusal(robot: Robot, q_start: np.ndarray, n_intervals: int = 32) -> list[str]:
    """Why no plan can be certified from rest at ``q_start`` for every θ_e in the robot's prior
    (empty: holding still is certified, so the planner has somewhere to start)."""
    from sysid_ros._src.control.prior import prior_box
    from sysid_ros._src.planning import QuinticTrajectory, controller_model
    from sysid_ros._src.planning.reachability import Reachability

    box = prior_box(robot)
    zero = np.zeros(robot.nj)
    reach = Reachability(robot, controller_model(robot), (), n_intervals)
    hold = QuinticTrajectory(np.asarray(q_start, float), zero, zero, 1.0)
    return reach.verify(hold, zero, box.lower, box.upper).reasons
