"""The payload a demo run simulates when it starts from a payload class, and what the report says
about it: the class, where the truth sits in it, the final box and where the truth sits in that.

A run whose θ_e prior is a payload class (:func:`~sysid_ros._src.simulation.offcentre.is_payload_class`)
carries a payload drawn off the class's centre (:func:`~sysid_ros._src.simulation.offcentre.draw_in_class`,
seeded); the simulator receives it as a parameters file (:func:`write_payload_params`, the sim
node's ``payload_com`` / ``payload_inertia``, launch argument ``payload_params``). Places are
(value − centre) / half-width: −1 and +1 are a box's ends, 0 its centre; the final box's width
as a fraction of the class's is what identification added.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from sysid_ros._src.control.prior import prior_box
from sysid_ros._src.model.box import ParameterBox
from sysid_ros._src.model.robots import Robot
from sysid_ros._src.simulation.offcentre import ClassDraw, is_payload_class, place_in_box
from sysid_ros._src.simulation.payload import Payload
from sysid_ros._src.simulation.sim_runtime import payload_parameters

__all__ = ["class_prior", "write_payload_params", "payload_text", "mass_placement",
           "placement_section"]


def class_prior(robot: Robot) -> ParameterBox | None:
    """The robot's θ_e prior if it is a payload class, else None (a generic tool box)."""
    box = prior_box(robot)
    return box if is_payload_class(robot, box.lower) else None


def write_payload_params(payload: Payload, directory: Path) -> Path:
    """A sim node parameters file carrying ``payload`` (its mass goes through the launch's
    ``payload`` argument, which the launch file always passes): the file's path."""
    params = payload_parameters(payload)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "payload.yaml"
    path.write_text(yaml.safe_dump({"/**": {"ros__parameters": params}}, sort_keys=False))
    return path


def payload_text(name: str, draw: ClassDraw) -> str:
    """The report header's description of a drawn payload."""
    p = draw.payload
    return (f"{p.mass:.4g} kg, CoM [{', '.join(f'{x:.4g}' for x in p.com)}] m, drawn inside the "
            f"class '{name}' off its centre (seed {draw.seed}; mass at {draw.place[0]:+.2f} of "
            "the class's half-width)")


def _interval(lo: float, hi: float) -> str:
    return f"[{lo:.5g}, {hi:.5g}]"


def mass_placement(klass: ParameterBox, truth: np.ndarray | None,
                   final: ParameterBox | None) -> str:
    """One line: the mass's class, the truth's place in it, the final box and the truth's place
    in that, and the box's width as a fraction of the class's."""
    lo, hi = float(klass.lower[0]), float(klass.upper[0])
    text = f"class {_interval(lo, hi)} kg"
    if truth is not None:
        text += (f", truth {truth[0]:.5g} kg "
                 f"({place_in_box(truth, klass.lower, klass.upper)[0]:+.2f} in the class)")
    if final is not None:
        text += (f"; final box {_interval(final.lower[0], final.upper[0])} kg, "
                 f"{final.width[0] / klass.width[0]:.2f} of the class's width")
        if truth is not None:
            text += (f", truth at {place_in_box(truth, final.lower, final.upper)[0]:+.2f} "
                     "in it")
    return text


def placement_section(klass: ParameterBox, truth: np.ndarray | None,
                      final: ParameterBox | None) -> list[str]:
    """Markdown lines: per parameter the class, the truth and its place in the class, the final
    box, its width as a fraction of the class's and the truth's place in it."""
    lines = ["## The payload class, the truth and the identified box", "",
             "Places are (value − centre) / half-width: −1 and +1 are the ends, 0 the centre.", "",
             f"- mass: {mass_placement(klass, truth, final)}", "",
             "| parameter | unit | class | truth | place in class | final box | width / class's "
             "| place in box |", "|---|---|---|---|---|---|---|---|"]
    for k, (name, unit) in enumerate(zip(klass.names, klass.units)):
        row = [name, unit, _interval(klass.lower[k], klass.upper[k])]
        row += ([f"{truth[k]:.5g}",
                 f"{place_in_box(truth, klass.lower, klass.upper)[k]:+.2f}"]
                if truth is not None else ["", ""])
        if final is not None:
            ratio = final.width[k] / klass.width[k] if klass.width[k] > 0 else float("nan")
            row += [_interval(final.lower[k], final.upper[k]), f"{ratio:.2f}",
                    f"{place_in_box(truth, final.lower, final.upper)[k]:+.2f}"
                    if truth is not None else ""]
        else:
            row += ["", "", ""]
        lines.append("| " + " | ".join(row) + " |")
    return lines
