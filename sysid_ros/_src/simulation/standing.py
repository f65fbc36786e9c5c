"""Standing controller for the legs of a floating-base robot (B1 + Z1) in the simulator.

Law per leg joint, every physics step::

    τ_leg = Kp (q_posture − q) − Kd q̇ + τ_ff

with ``Kp``/``Kd`` the robot file's ``simulation.hold_kp``/``hold_kd`` leg entries (B1: 600 N·m/rad
and 15 N·m·s/rad) and τ_ff the **quasi-static feed-forward**, refreshed once per
:meth:`Simulator.step` call (one publication period, 1 ms at 1 kHz) from the current state:

- h = C(q, v) v + g(q), MuJoCo's ``qfrc_bias`` (gravity of the whole robot, arm included, and
  the velocity terms);
- the **arm's reaction** M_base,arm q̈_arm, with q̈_arm the fixed-trunk forward dynamics of the
  arm under the torque it is commanded *in the same period* (``arm_torque``:
  M_arm,arm q̈_arm = τ_arm − h_arm, trunk and legs held still). This is the wrench the arm's
  command puts on the trunk: fed forward, the feet take it at the instant it appears instead of
  the trunk accelerating until the legs' PD reacts. Measured (standing B1, arm-view robust
  controller, 1 kg dumbbell, ``bench.bench_chatter``): without it, every torque step of the arm
  (the controller's Coulomb feed-forward switching on as a joint leaves its rest band, ~1–2 N·m
  in one period) kicks the trunk to ‖α‖ ≈ 2.6 rad/s², and the robust input's switching at small
  V_max to 25–50 rad/s². Taken from the *command*, not from the measured q̈ (which carries
  contact-impulse noise: fed forward from the last step's q̈ it excited the trunk — 8° roll and
  0.25 m of foot slip under a 0.5 Hz arm swing). Coulomb friction of the arm is left out (a
  stuck joint's friction is unknown to a stance controller); a real B1 needs the same from its
  legs' controller (docs/theory/simulation.md#the-arm-view-of-a-floating-base-robot: what the arm view assumes of it);
- the contact forces f (3 per foot, world frame, at the foot sphere's lowest point) that hold the
  trunk still: the six free-joint rows of M q̈ + h = Sᵀτ + J_cᵀ f with q̈_base = q̈_leg = 0 give
  J_c,baseᵀ f = h_base + M_base,arm q̈_arm, solved for the minimum-norm f (least horizontal
  force: for a level stance mostly vertical, inside the friction cone of μ = 1 for the postures
  used here);
- the leg rows then give τ_ff = h_leg − J_c,legᵀ f (the arm and the legs are different branches
  of the tree, so M_leg,arm = 0).

Without τ_ff the PD alone sags by τ/Kp (≈ 0.1 rad on the B1's calves) and the trunk pitches
whenever the arm's centre of mass moves; with it the legs stay at the posture to the PD's error
on the *unmodelled* part only (contact compliance, the arm's friction).
Contacts are MuJoCo's (no welds): the feet can lift and slip, and the tests bound both.
"""
from __future__ import annotations

import mujoco
import numpy as np
from scipy.linalg.lapack import dposv as _dposv

from sysid_ros._src.simulation.errors import SimulationError

__all__ = ["QuasiStaticStance"]


class QuasiStaticStance:
    """τ_ff of the leg joints (see the module docstring) from a compiled model's data.

    ``free_dof``: first dof of the free joint; ``leg_dofs``/``arm_dofs``: MuJoCo dof addresses of
    the posture (leg) joints; ``feet``: contact geom ids (one
    sphere per foot)."""

    def __init__(self, model: mujoco.MjModel, free_dof: int, leg_dofs: np.ndarray,
                 feet: np.ndarray) -> None:
        self.model = model
        self.base = slice(free_dof, free_dof + 6)
        self.leg_dofs = np.asarray(leg_dofs, int)
        self.feet = np.asarray(feet, int)
        # lowest point of each foot sphere relative to its centre (world frame)
        self._down = np.zeros((self.feet.size, 3))
        self._down[:, 2] = -model.geom_rbound[self.feet]
        self._foot_body = model.geom_bodyid[self.feet].copy()
        self._jac = np.zeros((3 * self.feet.size, model.nv))
        # the arm: every dof that is neither the free joint's nor a leg's
        others = np.setdiff1d(np.arange(model.nv), np.r_[np.arange(free_dof, free_dof + 6),
                                                          self.leg_dofs])
        self.arm_dofs = others
        self._mass = np.zeros((model.nv, model.nv))
        #: contact forces of the last evaluation (world frame, (n_feet, 3), N)
        self.forces = np.zeros((self.feet.size, 3))

    def torques(self, data: mujoco.MjData,
                arm: tuple[slice | np.ndarray, np.ndarray] | None = None) -> np.ndarray:
        """τ_ff for the leg dofs (N·m) at ``data``'s current kinematics (after ``mj_step1`` or
        ``mj_forward``). ``arm``: (dof addresses, torque) applied to the arm during the coming
        period (motor command minus the constant offset β; dofs not given get h, i.e. no
        acceleration); None: the arm is held (q̈_arm = 0, no reaction fed forward)."""
        m = self.model
        points = data.geom_xpos[self.feet] + self._down
        for k in range(self.feet.size):
            mujoco.mj_jac(m, data, self._jac[3 * k:3 * k + 3], None, points[k],
                          int(self._foot_body[k]))
        h = data.qfrc_bias
        base_wrench = h[self.base]
        if arm is not None and self.arm_dofs.size:
            force = h.copy()
            force[arm[0]] = arm[1]
            dofs = self.arm_dofs
            mujoco.mj_fullM(m, data, self._mass)
            acc = np.linalg.solve(self._mass[np.ix_(dofs, dofs)], force[dofs] - h[dofs])
            base_wrench = base_wrench + self._mass[self.base, dofs] @ acc
        jb = self._jac[:, self.base]                       # (3 n_feet, 6)
        # minimum-norm f with jbᵀ f = h_base: f = jb (jbᵀ jb)⁻¹ h_base (jbᵀ jb is 6×6, SPD
        # whenever three feet are not collinear)
        chol, y, info = _dposv(jb.T @ jb, base_wrench, lower=1)
        pivots = np.abs(np.diag(chol))
        if info != 0 or pivots.min() < 1e-6 * pivots.max():
            raise SimulationError("standing controller: the feet do not span the trunk's six "
                                  "degrees of freedom (fewer than three non-collinear feet)")
        f = jb @ y
        self.forces = f.reshape(-1, 3)
        return h[self.leg_dofs] - self._jac[:, self.leg_dofs].T @ f
