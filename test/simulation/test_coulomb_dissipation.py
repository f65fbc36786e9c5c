"""The simulator's set-valued Coulomb law never lets dry friction do positive work: a joint that
slides through a physics step (same non-zero velocity sign at both ends) takes +Fc·sign(q̇) of the
motor torque, whatever the other joints do. The reference is the physical law itself.

The case that broke it: the Z1 moving its elbow and wrist pitch in opposite directions while the
wrist roll joints rest (their velocity exactly 0 sends the step through the joint stick/slip
solve); the elbow sliding at +0.1 rad/s was given +Fc *along* its motion through the light
wrist's coupling, which made the closed loop drift (V 200× V_max) and the identifier report
the data inconsistent."""
from __future__ import annotations

import numpy as np
import pinocchio as pin

from sysid_ros._src.simulation import SimConfig, Simulator, SimulatorSpec, dumbbell_for



def test_sliding_joints_friction_opposes_motion(z1):
    sim = Simulator(SimulatorSpec(z1, dumbbell_for(z1, 1.0), SimConfig(quantize=False), seed=0))
    fc = z1.friction.nominal[:, 0]
    rng = np.random.default_rng(3)
    home = np.asarray(z1.config["simulation"]["home"], float)
    model = z1.model.copy()
    model.inertias[z1.ee_joint_id] = pin.Inertia.FromDynamicParameters(
        np.array(sim.true_theta_e(), float))
    data = model.createData()
    checked = 0
    for _ in range(40):
        q = home + rng.uniform(-0.3, 0.3, 6)
        dq = np.concatenate([rng.uniform(-0.3, 0.3, 4), [0.0, 0.0]])   # wrist roll at rest
        dq[2], dq[3] = 0.1, -0.25                                        # elbow vs wrist pitch
        sim.reset(q, dq)
        tau = pin.computeGeneralizedGravity(model, data, q) + rng.uniform(-2.0, 2.0, 6)
        v0 = sim.measure().dq
        sim.step(tau, 1)
        v1 = sim.measure().dq
        friction = sim.dry_friction()           # +Fc·sign(q̇) while sliding
        sliding = (np.sign(v0) == np.sign(v1)) & (v0 != 0.0) & (v1 != 0.0)
        assert np.all(np.abs(friction) <= fc + 1e-12)
        assert np.all(friction[sliding] * v0[sliding] >= 0.0), (q, dq, friction, v0, v1)
        np.testing.assert_allclose(np.abs(friction[sliding]), fc[sliding], rtol=1e-12)
        checked += int(sliding.sum())
    assert checked >= 100
