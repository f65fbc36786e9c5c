"""The built-in simulator: MuJoCo physics of a registry robot with a known payload.

Simulated law per actuated joint (docs/theory/models.md#joint-friction-and-armature; the package's shared convention)::

    (H(q) + diag(Ia)) q̈ + C q̇ + g + Fv q̇ + Fc sign(q̇) + β = τ_motor

with H, C, g from the same URDF as Pinocchio (+ the payload on the EE body), Ia = MuJoCo
armature, Fv = MuJoCo damping (implicit in the Euler integrator), Fc·sign(q̇) + β applied as a
generalized force from the velocity at the start of each physics step (see ``mjmodel``).

A simulator is built in one pass from a resolved
:class:`~sysid_ros._src.simulation.spec.SimulatorSpec` (robot, payload, settings, seed, simulated
robot). Hardware-like physics (a spec with a :class:`~sysid_ros._src.simulation.truth.HardwareTruth`,
usually :meth:`~sysid_ros._src.simulation.spec.SimulatorSpec.hardware_like`): friction, armature and
body inertias come from the truth instead of the robot facts file, Coulomb friction is MuJoCo's
``frictionloss`` constraint (stiff; not a sign law), and β is a torque-*sensor* offset: the arm
feels τ_motor, the sensor reports τ_motor + β (+ noise), as with a real joint-torque sensor or
current-based estimate.

Per physics step (``mj_step1`` → control → ``mj_step2``) the motor torque is

- commanded joints: the last command given to :meth:`Simulator.step`, or, when the command is
  ``None`` (the node passes ``None`` once its command timeout expires), the *hold controller*
  ``τ = Kp (q_hold − q) − Kd q̇ + b(q, q̇)`` with b = MuJoCo's ``qfrc_bias`` (gravity + Coriolis)
  and q_hold the position when holding began (the reset position at start);
- posture joints (robots with ``arm_joints`` in their config, i.e. B1's legs): always the
  standing controller ``Kp (q_posture − q) − Kd q̇ + τ_ff`` towards ``leg_standing_posture``,
  τ_ff the quasi-static torque that carries the robot's weight on its feet
  (:mod:`sysid_ros._src.simulation.standing`), refreshed once per :meth:`Simulator.step` call;

then clipped to ``robot.limits.tau_max`` (the ``clipped`` flag reports it). Gains are the robot
config's ``simulation.hold_kp`` / ``hold_kd``.

Sensors (:meth:`Simulator.measure`): the torque sensor reports the applied motor torque of the
last physics step (after clipping) (+ β with a truth) + uniform noise in ±noise_tau; positions
are quantised to the encoder resolution (round to nearest count); velocities are MuJoCo's
(+ optional uniform noise ±noise_dq); the floating base has an IMU (orientation, body-frame
angular velocity, specific force — +g upward at rest, like a real accelerometer).

Configurations/velocities in :meth:`Simulator.state` follow Pinocchio's convention
(free-flyer q = [x, y, z, qx, qy, qz, qw], v = [base-frame linear, base-frame angular]), so
they feed the package's regressors directly.
"""
from __future__ import annotations

import dataclasses

from dataclasses import dataclass
from collections.abc import Sequence

import mujoco
import numpy as np
from scipy.linalg.lapack import dgesv as _dgesv
from scipy.linalg.lapack import dposv as _dposv

from sysid_ros._src.simulation._util import quantize
from sysid_ros._src.simulation.errors import CommandError, SimConfigError, SimulationError
from sysid_ros._src.simulation.mjmodel import (
    IMU_SENSORS, MujocoRobot, build_mujoco_model, refresh_constants, set_body_theta,
)
from sysid_ros._src.simulation.payload import Payload
from sysid_ros._src.simulation.spec import SimulatorSpec
from sysid_ros._src.simulation.standing import QuasiStaticStance

__all__ = ["Simulator", "Measurement", "ImuReading", "SimState"]


def _as_slice(index: np.ndarray) -> slice | np.ndarray:
    """A contiguous increasing index array as a slice (a view, no copy: cheaper per step)."""
    index = np.asarray(index, dtype=int)
    if index.size and np.array_equal(index, np.arange(index[0], index[0] + index.size)):
        return slice(int(index[0]), int(index[0]) + index.size)
    return index


@dataclass(frozen=True)
class ImuReading:
    """Floating-base IMU: orientation quaternion (x, y, z, w; world ← IMU), angular velocity
    (rad/s, IMU frame), linear acceleration (specific force, m/s², IMU frame)."""

    orientation_xyzw: np.ndarray
    angular_velocity: np.ndarray
    linear_acceleration: np.ndarray


@dataclass(frozen=True)
class Measurement:
    """What the robot's sensors report at time ``t`` (actuated joints, config order)."""

    t: float
    q: np.ndarray
    dq: np.ndarray
    tau_measured: np.ndarray
    clipped: np.ndarray          # per joint: clipped during the last step() call
    imu: ImuReading | None = None


@dataclass(frozen=True)
class SimState:
    """Exact simulator state in Pinocchio's convention (q: (nq,), v: (nv,))."""

    t: float
    q: np.ndarray
    v: np.ndarray


class Simulator:
    """MuJoCo simulation of a :class:`~sysid_ros._src.simulation.spec.SimulatorSpec`: its robot
    carrying its payload (or nothing), as the facts file has it or as its ``truth`` (then β is a
    sensor offset). :attr:`spec` stays what the run started from; :attr:`payload` and
    :attr:`truth` (the simulated robot) follow :meth:`set_payload`.

    Not thread-safe: one thread steps and measures (the node serialises access).
    """

    def __init__(self, spec: SimulatorSpec) -> None:
        # One pass over the resolved specification, phase by phase: each phase reads only the
        # spec and what the phases before it built.
        if not isinstance(spec, SimulatorSpec):
            raise TypeError(f"Simulator takes a SimulatorSpec (Simulator(SimulatorSpec(robot, "
                            f"payload, config, seed))), got {type(spec).__name__}")
        self.spec = spec
        self.robot, self.payload, self.config = spec.robot, spec.payload, spec.config
        #: the simulated robot (None: the facts file's nominal model, β acting on the arm)
        self.truth = spec.truth
        self.hold_kp, self.hold_kd = spec.hold_kp, spec.hold_kd
        self.command_joints: tuple[str, ...] = spec.command_joints
        self.home = spec.home
        self._build_physics()
        self._init_sensors()
        self._init_joint_roles()
        self._init_friction()
        self._init_control_state()
        self.reset()

    def _build_physics(self) -> None:
        """The simulated robot's MuJoCo model and data."""
        spec = self.spec
        self._theta_e = spec.theta_e.copy()
        self.mj: MujocoRobot = build_mujoco_model(spec.robot, spec.payload, spec.physics_dt,
                                                  spec.config.integrator, truth=spec.truth,
                                                  coulomb=spec.config.coulomb)
        self.model = self.mj.model
        self.data = mujoco.MjData(self.model)
        self._full_m = np.zeros((self.model.nv, self.model.nv))   # full_mass_matrix's buffer

    def _init_sensors(self) -> None:
        """Sensor noise bounds, their generator, encoder quantisation and the IMU's addresses."""
        spec = self.spec
        self._rng = np.random.default_rng(spec.seed)
        self._noise_tau, self._noise_dq = spec.noise_tau, spec.noise_dq
        self._resolution = res = spec.resolution
        self._quantize = ((lambda q: np.round(q / res) * res) if np.all(res > 0)
                          else (lambda q: quantize(q, res)))
        self._imu_adr = ({name: (int(self.model.sensor(name).adr[0]),
                                 int(self.model.sensor(name).dim[0])) for name in IMU_SENSORS}
                         if self.mj.imu_body is not None else {})

    def _init_joint_roles(self) -> None:
        """Which joints take commands and which hold a posture (B1's legs), as index arrays."""
        nj, names = self.robot.nj, list(self.robot.joint_names)
        self._cmd_idx = np.array([names.index(n) for n in self.command_joints], dtype=int)
        self._posture_mask = np.ones(nj, dtype=bool)
        self._posture_mask[self._cmd_idx] = False
        self._has_posture = bool(np.any(self._posture_mask))     # legs held by PD (B1)
        self._commands_all = bool(np.array_equal(self._cmd_idx, np.arange(nj)))
        self._posture = self.spec.posture.copy()

    def _init_friction(self) -> None:
        """Friction and offset per joint (nominal or the truth's) and the Coulomb solve's
        preallocated selections and buffers."""
        nj, fr = self.robot.nj, self.spec.friction
        self._fc, self._fv = fr[:, 0].copy(), fr[:, 1].copy()
        if self.config.coulomb == "mujoco":   # MuJoCo's frictionloss does it; the law is off
            self._fc[:] = 0.0
        # β: a torque on the arm in the nominal simulator, a sensor offset with a truth
        self._beta = fr[:, 3].copy() if self.truth is None else np.zeros(nj)
        self._beta_sensor = np.zeros(nj) if self.truth is None else fr[:, 3].copy()
        # a position-dependent load (HardwareTruth.ripple), evaluated at every physics step
        self._ripple = None if self.truth is None or self.truth.ripple is None else self.truth
        self._coulomb_force = np.zeros(nj)
        self._fc_idx = np.flatnonzero(self._fc > 0)
        self._has_fc = self._fc_idx.size > 0
        # S of the Coulomb solve: every joint with dry friction or implicit damping (Fv)
        s_joints = np.flatnonzero((self._fc > 0) | (self._fv > 0))
        self._fc_pos = _as_slice(np.searchsorted(s_joints, self._fc_idx))
        self._s_sel = _as_slice(self.mj.dof_adr[s_joints])
        self._fc_sel = _as_slice(self._fc_idx)
        self._fc_list = self._fc[self._fc_idx].tolist()
        self._coulomb_out = np.zeros(nj)
        self._h_fv_s = self.spec.physics_dt * self._fv[s_joints]
        self._eye_s = np.eye(s_joints.size)
        self._y = np.zeros((1 + s_joints.size, self.model.nv))
        self._y[1 + np.arange(s_joints.size), self.mj.dof_adr[s_joints]] = 1.0
        self._x = np.zeros_like(self._y)

    def _init_control_state(self) -> None:
        """Torque limits, address maps, the command / hold / posture controller state and the
        standing feed-forward (a floating base standing on its legs)."""
        robot, nj = self.robot, self.robot.nj
        self._tau_max = robot.limits.tau_max.copy()
        # address maps as slices where contiguous (views: the per-step reads copy nothing)
        self._qa, self._da = _as_slice(self.mj.qpos_adr), _as_slice(self.mj.dof_adr)
        self._q_index, self._v_index = robot.q_index, robot.v_index   # (properties rebuild them)
        self._tau_applied = np.zeros(nj)
        self._clipped = np.zeros(nj, dtype=bool)
        self._cmd_full = np.zeros(nj)
        self._holding = True
        self._hold_q = np.zeros(nj)
        # PD joints' targets (hold position of the arm, posture of the legs) and feed-forward
        self._pd_all = np.ones(nj, dtype=bool)
        self._target = self._posture.copy()
        self._ff = np.zeros(nj)
        self._stance: QuasiStaticStance | None = None
        if self.spec.standing:
            assert self.mj.free_dof is not None      # a floating base has its free joint
            self._stance = QuasiStaticStance(
                self.model, self.mj.free_dof, self.mj.dof_adr[self._posture_mask],
                self.mj.contact_geoms)
        self._cmd_dofs = _as_slice(self.mj.dof_adr[self._cmd_idx])
        self._cmd_sel = _as_slice(self._cmd_idx)

    # ------------------------------------------------------------------ state
    @property
    def time(self) -> float:
        return float(self.data.time)

    @property
    def physics_dt(self) -> float:
        return float(self.model.opt.timestep)

    @property
    def q(self) -> np.ndarray:
        """Exact actuated joint positions (config order)."""
        return self.data.qpos[self._qa].copy()

    @property
    def dq(self) -> np.ndarray:
        return self.data.qvel[self._da].copy()

    @property
    def holding(self) -> bool:
        """True while the hold controller drives the commanded joints."""
        return self._holding

    @property
    def hold_target(self) -> np.ndarray:
        return self._hold_q.copy()

    @property
    def tau_applied(self) -> np.ndarray:
        """Motor torque applied during the last physics step (after clipping), N·m."""
        return self._tau_applied.copy()

    def dry_friction(self) -> np.ndarray:
        """Dry-friction torque of the last physics step per actuated joint (N·m), signed as in
        the identifier's law (the share of the motor torque it takes: +Fc·sign(q̇) while a
        joint slides). From MuJoCo's frictionloss constraint forces with
        ``coulomb="mujoco"``, else the simulator's own Coulomb force."""
        if self.config.coulomb != "mujoco":
            return -self._coulomb_force.copy()
        d = self.data
        n = d.nefc
        rows = np.flatnonzero(d.efc_type[:n] == mujoco.mjtConstraint.mjCNSTR_FRICTION_DOF)
        force = np.zeros(self.model.nv)
        # a dof-friction row's Jacobian is the unit vector of its dof: force = efc_force
        np.add.at(force, d.efc_id[rows], d.efc_force[rows])
        return -force[self._da]

    def full_mass_matrix(self) -> np.ndarray:
        """MuJoCo's mass matrix over every dof (nv, nv; a floating base's six first), as the
        last step left it. A view of a buffer the next call overwrites."""
        mujoco.mj_fullM(self.model, self.data, self._full_m)
        return self._full_m

    def joint_mass_matrix(self) -> np.ndarray:
        """The true joint-space mass matrix H(q) + diag(armature) over the robot joints (nj, nj),
        from MuJoCo's own factorisation of the current state (evaluation: the true Lyapunov
        function ½ rᵀ H r of the closed loops)."""
        return self.full_mass_matrix()[np.ix_(self.mj.dof_adr, self.mj.dof_adr)]

    def true_theta_e(self) -> np.ndarray:
        """Ground-truth θ_e (EE body + payload, as simulated now), for evaluation only."""
        return self._theta_e.copy()

    def set_payload(self, payload: Payload | None) -> None:
        """Swap the payload mid-run (the EE body changes by new − old payload; the state is
        kept). θ is additive per body, so this is exact for any EE link."""
        old = np.zeros(10) if self.payload is None else self.payload.theta()
        new = np.zeros(10) if payload is None else payload.theta()
        theta_e = self._theta_e - old + new
        set_body_theta(self.model, self.mj.ee_body, theta_e)
        refresh_constants(self.model)
        self.payload, self._theta_e = payload, theta_e
        if self.truth is not None:
            self.truth = dataclasses.replace(self.truth, theta_e=theta_e)
            self._ripple = None if self.truth.ripple is None else self.truth

    def state(self) -> SimState:
        """Exact state in Pinocchio's convention."""
        q = np.zeros(self.robot.nq)
        v = np.zeros(self.robot.nv)
        q[self._q_index] = self.data.qpos[self._qa]
        v[self._v_index] = self.data.qvel[self._da]
        a, d = self.mj.free_qpos, self.mj.free_dof   # both set for a free joint, both None if not
        if a is not None and d is not None:
            wxyz = self.data.qpos[a + 3:a + 7]
            q[:3] = self.data.qpos[a:a + 3]
            q[3:7] = [wxyz[1], wxyz[2], wxyz[3], wxyz[0]]
            rot = np.empty(9)
            mujoco.mju_quat2Mat(rot, wxyz)
            v[:3] = rot.reshape(3, 3).T @ self.data.qvel[d:d + 3]
            v[3:6] = self.data.qvel[d + 3:d + 6]
        return SimState(self.time, q, v)

    def reset(self, q0: np.ndarray | None = None, dq0: np.ndarray | None = None,
              t0: float = 0.0) -> None:
        """Restart at time ``t0`` (a node keeps its clock monotonic across resets) from actuated
        positions ``q0`` (default: ``simulation.home``) and velocities ``dq0`` (default 0); a
        floating base starts level, at rest, its lowest contact geometry 2 mm above the
        ground."""
        nj = self.robot.nj
        q0 = self.home if q0 is None else np.asarray(q0, dtype=float)
        dq0 = np.zeros(nj) if dq0 is None else np.asarray(dq0, dtype=float)
        for name, arr in (("q0", q0), ("dq0", dq0)):
            if arr.shape != (nj,) or not np.all(np.isfinite(arr)):
                raise SimConfigError(f"{name} must be {nj} finite numbers, got shape {arr.shape}")
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[self._qa] = q0
        self.data.qvel[self._da] = dq0
        if self.mj.free_qpos is not None:
            self._place_on_ground(self.mj.free_qpos)
        mujoco.mj_forward(self.model, self.data)
        self.data.time = float(t0)
        self._hold_q = q0.copy()
        self._target[self._cmd_idx] = q0[self._cmd_idx]
        self._ff[:] = 0.0
        self._holding = True
        self._tau_applied[:] = 0.0
        self._clipped[:] = False

    def _place_on_ground(self, a: int) -> None:
        """Level pose, lowest contact 2 mm above the ground; ``a``: the free joint's qpos address."""
        self.data.qpos[a:a + 7] = [0, 0, 0, 1, 0, 0, 0]
        mujoco.mj_kinematics(self.model, self.data)
        geoms = self.mj.contact_geoms
        if geoms.size == 0:
            raise SimConfigError("floating-base robot has no contact geometry "
                                 "(simulation.contact_links)")
        lowest = np.min(self.data.geom_xpos[geoms, 2] - self.model.geom_rbound[geoms])
        self.data.qpos[a + 2] = -lowest + 0.002

    # ------------------------------------------------------------------ stepping
    def _expand(self, tau_cmd) -> np.ndarray:
        tau = np.asarray(tau_cmd, dtype=float).reshape(-1)
        if not np.isfinite(tau).all():
            raise CommandError("torque command has non-finite entries")
        if self._commands_all and tau.size == self._cmd_idx.size:
            return tau.copy()                 # every joint commanded, in order (fixed arms)
        full = np.zeros(self.robot.nj)
        if tau.size == self.robot.nj:
            full[self._cmd_idx] = tau[self._cmd_idx]  # entries of posture joints are ignored
        elif tau.size == self._cmd_idx.size:
            full[self._cmd_idx] = tau
        else:
            raise CommandError(
                f"torque command has {tau.size} entries; expected {self.robot.nj} "
                f"(robot joints) or {self._cmd_idx.size} (commanded joints {self.command_joints})")
        return full

    def step(self, tau_cmd: np.ndarray | Sequence[float] | None = None, n_steps: int = 1) -> None:
        """Advance ``n_steps`` physics steps with motor torque command ``tau_cmd`` held constant.

        ``tau_cmd``: one value per robot joint (config order) or per commanded joint
        (``arm_joints`` for B1 + Z1); ``None`` engages the hold controller.
        """
        if n_steps < 1:
            raise SimConfigError(f"n_steps must be >= 1, got {n_steps}")
        if tau_cmd is None:
            if not self._holding:
                self._hold_q = self.data.qpos[self._qa].copy()
                self._target[self._cmd_idx] = self._hold_q[self._cmd_idx]
                self._holding = True
            self._cmd_full[:] = 0.0
        else:
            self._cmd_full = self._expand(tau_cmd)
            self._holding = False
        self._clipped[:] = False
        m, d = self.model, self.data
        qa, da = self._qa, self._da
        if not (self._holding or self._has_fc or self._has_posture or self._ripple is not None):
            # A commanded fixed-base arm without the Coulomb law: the applied torque is the
            # same in every substep, so MuJoCo steps them in one call (mj_step is mj_step1 +
            # mj_step2 for the Euler and implicit integrators, with qfrc_applied unchanged):
            # the per-substep loop below costs ~5x MuJoCo itself in Python.
            raw = self._cmd_full
            tau = np.minimum(np.maximum(raw, -self._tau_max), self._tau_max)
            self._clipped |= tau != raw
            self._tau_applied = tau
            d.qfrc_applied[da] = tau - self._beta
            mujoco.mj_step(m, d, n_steps)
            return
        pd = self._pd_all if self._holding else self._posture_mask
        # feed-forward of the PD joints: the bias at each step for held arm joints (below),
        # the standing controller's quasi-static torque for the legs (once per call)
        ff = self._ff
        bias_dofs = self._cmd_dofs if self._holding else None
        kp, kd, target, tmax = self.hold_kp, self.hold_kd, self._target, self._tau_max
        for i in range(n_steps):
            mujoco.mj_step1(m, d)
            q, dq = d.qpos[qa], d.qvel[da]
            if i == 0 and self._stance is not None:
                ff[self._posture_mask] = self._stance.torques(d, self._arm_force(q, dq))
            if bias_dofs is not None:
                ff[self._cmd_sel] = d.qfrc_bias[bias_dofs]
            raw = np.where(pd, kp * (target - q) - kd * dq + ff, self._cmd_full)
            tau = np.minimum(np.maximum(raw, -tmax), tmax)
            self._clipped |= tau != raw
            self._tau_applied = tau
            if self._has_fc:
                self._coulomb_force = self._coulomb(dq, tau)
                d.qfrc_applied[da] = tau - self._beta + self._coulomb_force
            else:
                d.qfrc_applied[da] = tau - self._beta
            if self._ripple is not None:
                d.qfrc_applied[da] -= self._ripple.ripple_torque(q)
            mujoco.mj_step2(m, d)

    def _arm_force(self, q: np.ndarray, dq: np.ndarray) -> tuple[slice | np.ndarray, np.ndarray] | None:
        """(dofs, force) the commanded arm puts on its joints this period — motor command − β +
        this step's Coulomb friction (legs at their last torque) — whose reaction the standing
        controller feeds forward (standing.py); None while the arm is held."""
        if self._holding:
            return None
        sel = self._cmd_sel
        force = self._cmd_full[sel] - self._beta[sel]
        if self._has_fc:
            raw = np.where(self._posture_mask, self.hold_kp * (self._target - q)
                           - self.hold_kd * dq + self._ff, self._cmd_full)
            force = force + self._coulomb(dq, np.clip(raw, -self._tau_max, self._tau_max))[sel]
        return self._cmd_dofs, force

    def _coulomb(self, dq: np.ndarray, tau: np.ndarray) -> np.ndarray:
        """Coulomb friction torques for this physics step (actuated joints, config order).

        Set-valued Coulomb law at velocity level (what an explicit Fc·sign(q̇) gets wrong: on
        the Z1's light wrist it flips the velocity by Fc·h/I ≈ 0.3 rad/s every step): joints
        that keep sliding through the step get exactly −Fc·sign(q̇); joints that would stop or
        reverse get the force in [−Fc, Fc] that leaves them at rest at the step's end, solved
        jointly with the full mass matrix (A = M + h·Fv, MuJoCo's implicit-damping Euler step)
        by a small active-set iteration.

        Only the rows of A⁻¹ on the k friction joints (S: their dofs) are needed. With MuJoCo's
        own sparse factor of M (``mj_solveM``, computed by ``mj_step1``), P = SᵀM⁻¹S and
        u = SᵀM⁻¹y, the push-through identity gives SᵀA⁻¹[y S] = (I + P·hD)⁻¹ [u P] (D = Fv on
        S): one k×k solve instead of a dense nv×nv factorisation (nv = 24 on the B1 + Z1).
        Contact forces (B1's feet) enter as the last step's ``qfrc_constraint``, an estimate:
        a floating base's stick/slip decision is exact only up to the change of the contact
        forces over one physics step.
        """
        m, d = self.model, self.data
        y, x = self._y, self._x
        np.subtract(d.qfrc_passive, d.qfrc_bias, out=y[0])
        y[0, self._da] += tau - self._beta
        if self.mj.free_dof is not None:
            y[0] += d.qfrc_constraint
        mujoco.mj_solveM(m, d, x, y)
        xs = x[:, self._s_sel]
        _, _, sol, info = _dgesv(self._eye_s + xs[1:] * self._h_fv_s, xs.T)
        if info != 0:
            raise SimulationError(f"mass matrix singular at t = {self.time}")
        sol = sol[self._fc_pos]
        v_free = dq[self._fc_sel] + self.physics_dt * sol[:, 0]  # end-of-step q̇, no Coulomb
        w = self.physics_dt * sol[:, 1:][:, self._fc_pos]   # its response to unit Coulomb torques
        out = self._coulomb_out
        # (small k: the decisions below are Python scalars; numpy's per-call overhead on
        # 6-vectors would dominate the physics step)
        fc = self._fc_list
        dq_l = dq[self._fc_sel].tolist()
        if 0.0 not in dq_l:
            f = np.array([-c if v > 0 else c for c, v in zip(fc, dq_l)])
            v_end = (v_free + w @ f).tolist()
            if all((a > 0) == (b > 0) and a != 0 for a, b in zip(v_end, dq_l)):
                out[self._fc_sel] = f
                return out
        # every friction joint stuck: the forces that stop them all, if each is within ±Fc
        _, f_all, info = _dposv(w, -v_free, lower=1)
        if info == 0 and all(abs(a) <= c for a, c in zip(f_all.tolist(), fc)):
            out[self._fc_sel] = f_all
            return out
        out[self._fc_sel] = self._active_set(v_free, w, self._fc[self._fc_idx])
        return out

    @staticmethod
    def _active_set(v_free: np.ndarray, w: np.ndarray, fc: np.ndarray) -> np.ndarray:
        """Coulomb forces f (|f| ≤ fc) for end-of-step velocities v_free + w f: joints released
        one at a time (largest excess over Fc first) to slide at ±Fc, the rest stopped.

        A sliding joint's force opposes its own end-of-step velocity given the others' forces
        (maximum dissipation), never the sign of the force that would have stopped it jointly
        with the others: through a light wrist's coupling that force can point along the motion
        (a Z1 elbow sliding at +0.1 rad/s got +Fc, friction doing positive work)."""
        k = fc.size
        stuck = np.ones(k, dtype=bool)
        f = np.zeros(k)
        diag = np.diag(w)

        def solve_stuck() -> None:
            free = ~stuck
            if stuck.any():
                w_k = w[stuck]
                b = -(v_free[stuck] + w_k[:, free] @ f[free])
                _, f_k, info = _dposv(w_k[:, stuck], b, lower=1)
                f[stuck] = f_k if info == 0 else np.linalg.lstsq(w_k[:, stuck], b,
                                                                 rcond=None)[0]

        def slide_signs(restick: bool = False) -> bool:
            """Set the sliding joints' ±Fc against their own end velocity; True if changed.
            The stuck joints enter at most at ±Fc (a larger stopping force is not real).
            ``restick``: a sliding joint that full friction would reverse is stopped instead."""
            free = ~stuck
            g = np.clip(f, -fc, fc)
            own = v_free[free] + w[free] @ g - diag[free] * g[free]
            new = np.where(own != 0.0, -np.sign(own), np.sign(f[free])) * fc[free]
            changed = bool(np.any(new != f[free]))
            f[free] = new
            if restick:
                back = np.abs(own) < diag[free] * fc[free]
                if back.any():
                    stuck[np.flatnonzero(free)[back]] = True
                    changed = True
            return changed

        for _ in range(k):
            solve_stuck()
            excess = np.where(stuck, np.abs(f) - fc, -np.inf)
            j = int(np.argmax(excess))
            if excess[j] <= 0.0:
                break
            stuck[j] = False
            slide_signs()
            if not stuck.any():
                break
        for _ in range(k):          # the final forces: every sliding sign consistent
            if not slide_signs(restick=True):
                break
            solve_stuck()
        return np.clip(f, -fc, fc)

    # ------------------------------------------------------------------ sensors
    def measure(self) -> Measurement:
        """Sensor readings at the current time (noise drawn from the simulator's RNG)."""
        nj = self.robot.nj
        q = self.data.qpos[self._qa].copy()
        if self.config.quantize:
            q = self._quantize(q)
        # one draw for both noises (fewer calls per publication; same bounds)
        u = self._rng.uniform(-1.0, 1.0, 2 * nj)
        dq = self.data.qvel[self._da] + u[:nj] * self._noise_dq
        tau = self._tau_applied + self._beta_sensor + u[nj:] * self._noise_tau
        return Measurement(self.time, q, dq, tau, self._clipped.copy(), self._imu())

    def _imu(self) -> ImuReading | None:
        if self.mj.imu_body is None:
            return None
        # mj_step2 leaves sensors at the pre-step state; recompute them for the current one.
        mujoco.mj_forward(self.model, self.data)
        data = self.data.sensordata

        def read(name: str) -> np.ndarray:
            adr, dim = self._imu_adr[name]
            return data[adr:adr + dim].copy()

        wxyz = read("imu_quat")
        return ImuReading(np.array([wxyz[1], wxyz[2], wxyz[3], wxyz[0]]), read("imu_gyro"),
                          read("imu_acc"))
