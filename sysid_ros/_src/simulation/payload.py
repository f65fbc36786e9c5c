"""Payloads rigidly attached to the end-effector body, and their ground-truth θ_e.

A :class:`Payload` is expressed in the end-effector (EE) body frame, which is the frame of the
robot's ``end_effector_joint`` (Gen3: ``joint_7``; Z1 / B1+Z1: ``joint6``) — the frame θ_e is
written in. θ_e (docs/theory/models.md#θ_e-and-θ_r) is the whole EE body: nominal link + gripper + payload,
10 parameters ``[m, mcx, mcy, mcz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` (Pinocchio order, inertia
about the frame origin). The simulator uses :func:`true_theta_e` as its truth; the identifier never sees it.

The seed paper's (S3) payloads are hex dumbbells of 1.81, 2.27, 2.72, 3.18, 3.63 kg (4-8 lb).
:meth:`Payload.dumbbell` models one as three solid steel cylinders (a handle and two heads,
hexagonal heads approximated by discs), gripped at the middle of the handle:

- handle: radius 12.5 mm, length 110 mm, density 7850 kg/m³ (≈ 0.42 kg);
- heads: radius 45 mm, the rest of the mass split evenly, thickness from the mass
  (7850 kg/m³; 3.63 kg → 33 mm per head, 1.81 kg → 14 mm), each centred at
  ±(55 mm + thickness/2) along the handle;
- grip point and handle direction come from the robot's ``simulation.payload_grip`` section
  (EE frame): Gen3 at the 2F-85 fingertip point 130 mm beyond the tool flange on the tool z
  axis, handle across the fingers' closing direction.

By symmetry the CoM is the grip point and the principal axes are the handle axis and two
perpendicular directions.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pinocchio as pin

from sysid_ros._src.model.simulation_section import simulation_section
from sysid_ros._src.simulation.errors import PayloadError

__all__ = ["Payload", "DUMBBELLS_KG", "true_theta_e", "dumbbell_for"]

#: S3's dumbbell masses (kg).
DUMBBELLS_KG: tuple[float, ...] = (1.81, 2.27, 2.72, 3.18, 3.63)

_STEEL = 7850.0
_HANDLE_R, _HANDLE_L = 0.0125, 0.110
_HEAD_R = 0.045


def _cylinder_inertia(mass: float, radius: float, length: float) -> np.ndarray:
    """Solid cylinder about its centre, axis along y: diag(perp, axial, perp)."""
    axial = 0.5 * mass * radius**2
    perp = mass * (3.0 * radius**2 + length**2) / 12.0
    return np.diag([perp, axial, perp])


@dataclass(frozen=True)
class Payload:
    """Rigid payload: ``mass`` (kg), ``com`` (3,) and ``inertia_com`` (3, 3, about the CoM),
    both in the EE body frame. Validated: mass > 0, finite, symmetric positive semi-definite
    inertia satisfying the triangle inequality (a real body)."""

    mass: float
    com: np.ndarray
    inertia_com: np.ndarray

    def __post_init__(self) -> None:
        com = np.asarray(self.com, dtype=float).reshape(-1)
        inertia = np.asarray(self.inertia_com, dtype=float)
        if not (np.isfinite(self.mass) and self.mass > 0):
            raise PayloadError(f"payload mass must be a positive finite number, got {self.mass!r}")
        if com.shape != (3,) or not np.all(np.isfinite(com)):
            raise PayloadError(f"payload com must be 3 finite numbers, got {self.com!r}")
        if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
            raise PayloadError("payload inertia_com must be a finite 3x3 matrix")
        if not np.allclose(inertia, inertia.T, atol=1e-12):
            raise PayloadError("payload inertia_com must be symmetric")
        eig = np.linalg.eigvalsh(inertia)
        tol = 1e-12 * max(1.0, float(np.max(np.abs(eig))))
        if eig[0] < -tol or eig[2] > eig[0] + eig[1] + tol:
            raise PayloadError(f"payload inertia_com is not a physical inertia (principal "
                               f"moments {eig}: need >= 0 and triangle inequality)")
        object.__setattr__(self, "mass", float(self.mass))
        object.__setattr__(self, "com", com)
        object.__setattr__(self, "inertia_com", inertia)

    @classmethod
    def dumbbell(cls, mass_kg: float, grip_point=(0.0, 0.0, 0.0),
                 handle_axis=(0.0, 1.0, 0.0)) -> Payload:
        """A hex dumbbell of ``mass_kg`` held at ``grip_point`` (EE frame) with its handle along
        ``handle_axis`` (geometry in the module docstring)."""
        handle_m = _STEEL * np.pi * _HANDLE_R**2 * _HANDLE_L
        if not mass_kg > handle_m:
            raise PayloadError(f"dumbbell mass {mass_kg!r} kg must exceed its handle's "
                               f"{handle_m:.3f} kg")
        head_m = 0.5 * (mass_kg - handle_m)
        width = head_m / (_STEEL * np.pi * _HEAD_R**2)
        offset = 0.5 * _HANDLE_L + 0.5 * width
        inertia_local = (_cylinder_inertia(handle_m, _HANDLE_R, _HANDLE_L)
                         + 2.0 * _cylinder_inertia(head_m, _HEAD_R, width)
                         + 2.0 * head_m * offset**2 * np.diag([1.0, 0.0, 1.0]))
        axis = np.asarray(handle_axis, dtype=float)
        if axis.shape != (3,) or not np.linalg.norm(axis) > 0:
            raise PayloadError(f"handle_axis must be a non-zero 3-vector, got {handle_axis!r}")
        rot = _frame_with_y(axis / np.linalg.norm(axis))
        return cls(float(mass_kg), np.asarray(grip_point, dtype=float),
                   rot @ inertia_local @ rot.T)

    def theta(self) -> np.ndarray:
        """The payload's 10 parameters about the EE frame origin (Pinocchio order)."""
        return pin.Inertia(self.mass, self.com, self.inertia_com).toDynamicParameters()


def _frame_with_y(y: np.ndarray) -> np.ndarray:
    """A rotation whose second column is the unit vector ``y``."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(y[0]) < 0.9 else np.array([0.0, 0.0, 1.0])
    x = np.cross(y, helper)
    x /= np.linalg.norm(x)
    return np.column_stack([x, y, np.cross(x, y)])


def dumbbell_for(robot, mass_kg: float) -> Payload:
    """A dumbbell gripped as the robot's ``simulation.payload_grip`` section says."""
    sec = simulation_section(robot)
    return Payload.dumbbell(mass_kg, sec.payload_grip_point, sec.payload_grip_axis)


def true_theta_e(robot, payload: Payload | None) -> np.ndarray:
    """Ground-truth θ_e = nominal EE body + payload, shape (10,), Pinocchio order."""
    theta = robot.theta_e().copy()
    return theta if payload is None else theta + payload.theta()
