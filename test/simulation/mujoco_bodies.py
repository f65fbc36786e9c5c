"""What MuJoCo simulates of a body, read back from the compiled model."""
from __future__ import annotations

import mujoco
import numpy as np
import pinocchio as pin


def mj_body_theta(model: mujoco.MjModel, body: int) -> np.ndarray:
    """θ of a compiled MuJoCo body (its principal inertia rotated back), Pinocchio order."""
    rot = np.empty(9)
    mujoco.mju_quat2Mat(rot, model.body_iquat[body])
    rot = rot.reshape(3, 3)
    inertia = rot @ np.diag(model.body_inertia[body]) @ rot.T
    return pin.Inertia(model.body_mass[body], model.body_ipos[body], inertia).toDynamicParameters()
