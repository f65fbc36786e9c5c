"""A simulated payload drawn inside a catalogued payload class, off its centre.

A payload class (``identification.priors`` entries such as the Gen3's ``dumbbell_8lb`` or the
Z1's ``dumbbell_1kg``, the B1 + Z1's ``demo.prior_box``) is a θ_e box around a catalogued
payload: its CAD mass, CoM and inertia ± a tolerance. Simulating exactly the catalogued payload
puts the truth at the box's centre, where the box's own point already sits: the centre would
equal the truth whether or not the data taught anything. A real payload of the class is
anywhere in it, so the simulator carries one drawn there instead.

:func:`draw_in_class` places θ_e (end-effector body + payload) at a seeded point of the box: the
mass at a fraction 0.3–0.8 of the class's half-width from its centre (either side), every other
coordinate at up to 0.8 of its half-width. The payload is θ_e minus the nominal end-effector
body; a draw is kept only if that payload is a real rigid body (positive mass, inertia about its
CoM positive semi-definite with the triangle inequality, :class:`Payload`'s checks) and the
simulator's truth of it, :func:`~sysid_ros._src.simulation.payload.true_theta_e`, lies in the box.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sysid_ros._src.model.robots import Robot
from sysid_ros._src.simulation.errors import PayloadError
from sysid_ros._src.simulation.payload import Payload, true_theta_e

__all__ = ["ClassDraw", "MASS_FRACTION", "OTHER_FRACTION", "is_payload_class", "draw_in_class",
           "place_in_box"]

#: |mass − class centre| / class half-width of a drawn payload
MASS_FRACTION: tuple[float, float] = (0.3, 0.8)
#: largest |θ_k − centre_k| / half-width_k of the other nine coordinates
OTHER_FRACTION = 0.8
_TRIES = 200


@dataclass(frozen=True, eq=False)
class ClassDraw:
    """One drawn payload: the body, the seed it came from, the simulated θ_e it makes and where
    that sits in the class (:func:`place_in_box`: −1 lower end, 0 centre, +1 upper end)."""

    payload: Payload
    seed: int
    theta_e: np.ndarray
    place: np.ndarray


def is_payload_class(robot: Robot, lower: np.ndarray) -> bool:
    """Whether the θ_e box with these lower ends is a payload class rather than a generic tool
    box: it excludes the unloaded end-effector body (every mass in it is above the body's own),
    as ``control.prior`` distinguishes them."""
    return bool(float(np.asarray(lower, float)[0]) > float(robot.theta_e()[0]))


def place_in_box(theta: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """(θ − centre) / half-width per coordinate (0 for a coordinate of zero width): within
    [−1, 1] exactly when θ is in the box."""
    lo, hi = np.asarray(lower, float), np.asarray(upper, float)
    half = 0.5 * (hi - lo)
    off = np.asarray(theta, float) - 0.5 * (lo + hi)
    return np.divide(off, half, out=np.zeros_like(off), where=half > 0)


def _payload_of(theta_p: np.ndarray) -> Payload:
    """The rigid body with these 10 parameters (inertia about the EE frame origin)."""
    m = float(theta_p[0])
    if not m > 0:
        raise PayloadError(f"drawn payload mass {m!r} kg is not positive")
    com = theta_p[1:4] / m
    ixx, ixy, iyy, ixz, iyz, izz = theta_p[4:10]
    i_origin = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    i_com = i_origin - m * (float(com @ com) * np.eye(3) - np.outer(com, com))
    return Payload(m, com, i_com)


def draw_in_class(robot: Robot, lower: np.ndarray, upper: np.ndarray, seed: int) -> ClassDraw:
    """A payload whose simulated θ_e lies in the class box ``[lower, upper]`` off its centre
    (module doc), reproducibly from ``seed``; PayloadError if the box is not a payload class or
    no real body was drawn in it."""
    lo, hi = np.asarray(lower, float), np.asarray(upper, float)
    if not is_payload_class(robot, lo):
        raise PayloadError(f"the θ_e box with mass [{lo[0]:g}, {hi[0]:g}] kg contains the "
                           f"unloaded {robot.ee_joint} body ({robot.theta_e()[0]:g} kg): not a "
                           "payload class to draw a payload from")
    centre, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    body = robot.theta_e()
    rng = np.random.default_rng(int(seed))
    for _ in range(_TRIES):
        u = rng.uniform(-OTHER_FRACTION, OTHER_FRACTION, lo.size)
        u[0] = rng.choice((-1.0, 1.0)) * rng.uniform(*MASS_FRACTION)
        try:
            payload = _payload_of(centre + half * u - body)
        except PayloadError:
            continue                     # not a real body: draw again
        theta = true_theta_e(robot, payload)
        place = place_in_box(theta, lo, hi)
        if np.all(np.abs(place) <= 1.0):
            return ClassDraw(payload, int(seed), theta, place)
    raise PayloadError(f"no rigid payload found in the class box in {_TRIES} draws (seed "
                       f"{seed}): its inertia bounds admit no real body off centre")
