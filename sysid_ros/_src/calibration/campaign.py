"""Soundness campaign: many drawn robots and random payloads, calibrated and identified as on
real hardware, each case checked against its known truth (no ROS).

A *draw* is one robot off its catalogue (:func:`~sysid_ros._src.simulation.random_hardware_truth`
with the robot's truth settings below) publishing hardware-like data at one rate; it is
recorded without payload for ``cal_seconds`` and calibrated (:func:`calibrate`, default
options). A *case* is one random dumbbell on one draw: recorded for ``payload_seconds`` and
identified (``lp``, the calibrated facts); it is *contained* when the box is ``ok`` and holds
the true θ_e, *refused* when the identifier answers ``inconsistent`` or ``insufficient_data``
or the calibration refused the draw (with the reason), and *wrong* when an ``ok`` box misses
the truth — the failure soundness rules out.

Draws and cases are plain values that workers turn into data from their seeds alone, so any
executor (:mod:`sysid_ros._src.batch`) computes the same results.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ROBOT_SETUPS", "Draw", "Case", "plan", "calibrate_draw", "run_case", "tally"]

#: Per robot: truth settings (``None``: the robot file's), publication-profile overrides and the
#: dumbbell masses drawn (kg; above the dumbbell's own handle, up to about the arm's payload).
#: The Z1's driver differentiates positions, which the identifier refuses as velocities without
#: an error bound; its campaign uses exact velocities, so that the friction, offsets, drops and
#: noise are what is at stake.
#: The standing B1 + Z1 (floating base) is not calibrated (the calibration stage takes fixed
#: bases): it is identified with the hardware-like data's own assumptions
#: (:func:`~sysid_ros._src.simulation.assumptions.identifier_assumptions`: the sensor's torque bound
#: with the sampling margin, the wide friction box, the trunk IMU's datasheet bounds), its payloads
#: drawn off the centre of the demo's payload class (``demo.prior_box``,
#: :func:`~sysid_ros._src.simulation.offcentre.draw_in_class`) and its velocities exact, as the Z1's.
ROBOT_SETUPS: dict[str, dict[str, Any]] = {
    "gen3": {"truth": "gen3", "profile": {}, "mass_kg": (0.5, 3.63)},
    "z1": {"truth": None, "profile": {"velocity": "exact"}, "mass_kg": (0.45, 1.0)},
    "b1_z1": {"truth": None, "profile": {"velocity": "exact"}, "payload_class": "demo.prior_box",
              "calibrate": False},
}


@dataclass(frozen=True)
class Draw:
    """One drawn robot at one rate."""

    robot: str
    rate_hz: float
    index: int
    seed: int
    cal_seconds: float

    @property
    def key(self) -> str:
        return f"{self.robot}@{self.rate_hz:g}Hz#{self.index}"


@dataclass(frozen=True)
class Case:
    """One random dumbbell on one draw."""

    draw: Draw
    index: int
    mass_kg: float
    payload_seconds: float
    class_seed: int | None = None    # a payload drawn in the setup's class from this seed


@dataclass
class CampaignPlan:
    draws: list[Draw] = field(default_factory=list)
    cases: list[Case] = field(default_factory=list)


def plan(robots: list[str], payloads: int, rates: list[float], draws: int, seed: int,
         cal_seconds: float = 20.0, payload_seconds: float = 6.0) -> CampaignPlan:
    """``payloads`` cases per robot and rate, spread over ``draws`` drawn robots each."""
    unknown = [r for r in robots if r not in ROBOT_SETUPS]
    if unknown:
        raise ValueError(f"robot {unknown[0]!r}: the campaign knows {', '.join(ROBOT_SETUPS)}")
    if payloads < 1 or draws < 1 or not rates or min(rates) <= 0:
        raise ValueError("need payloads >= 1, draws >= 1 and positive rates")
    out = CampaignPlan()
    for r_i, robot in enumerate(robots):
        setup = ROBOT_SETUPS[robot]
        for k_i, rate in enumerate(rates):
            ds = [Draw(robot, float(rate), d, seed * 1000 + 100 * r_i + 10 * k_i + d,
                       cal_seconds) for d in range(min(draws, payloads))]
            out.draws += ds
            if "payload_class" in setup:
                seeds = [seed * 1000 + 100 * r_i + 10 * k_i + p for p in range(payloads)]
                masses = [float(_class_draw(robot, s).payload.mass) for s in seeds]
                out.cases += [Case(ds[p % len(ds)], p, masses[p], payload_seconds, seeds[p])
                              for p in range(payloads)]
                continue
            lo, hi = setup["mass_kg"]
            masses = np.random.default_rng([seed, r_i, k_i]).uniform(lo, hi, payloads).tolist()
            out.cases += [Case(ds[p % len(ds)], p, float(masses[p]), payload_seconds)
                          for p in range(payloads)]
    return out


def _payload_class(robot: Any) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of the robot's campaign payload class (``ROBOT_SETUPS[...]
    ["payload_class"]``, a dotted key of its robot file)."""
    node: Any = robot.config
    for key in ROBOT_SETUPS[robot.name]["payload_class"].split("."):
        node = node[key]
    return np.asarray(node["lower"], float), np.asarray(node["upper"], float)


def _class_draw(robot_name: str, seed: int) -> Any:
    """The payload drawn off the class centre from ``seed`` (a :class:`ClassDraw`)."""
    from sysid_ros._src.model.robots import load_robot
    from sysid_ros._src.simulation.offcentre import draw_in_class

    robot = load_robot(robot_name)
    return draw_in_class(robot, *_payload_class(robot), seed)


def _setup(draw: Draw):
    """The robot, its publication profile and its drawn truth (from the draw's seed alone)."""
    from sysid_ros._src.calibration.synthetic import GEN3_TRUTH
    from sysid_ros._src.model.robots import load_robot
    from sysid_ros._src.simulation import HardwareProfile, random_hardware_truth
    from sysid_ros._src.simulation.truth import hardware_truth_settings

    robot = load_robot(draw.robot)
    setup = ROBOT_SETUPS[draw.robot]
    truth_kw = GEN3_TRUTH if setup["truth"] == "gen3" else hardware_truth_settings(robot)
    profile = HardwareProfile.from_robot(robot, rate_hz=draw.rate_hz, physics_dt=None,
                                         **setup["profile"])
    truth = random_hardware_truth(robot, np.random.default_rng([draw.seed, 0]), **truth_kw)
    return robot, profile, truth


def calibrate_draw(draw: Draw) -> dict[str, Any]:
    """Record and calibrate one draw: ``{"calibration": document or None, "refused": reason or
    None, "friction_inside": the calibrated friction boxes hold the truth, "seconds"}``."""
    from sysid_ros._src.calibration import CalibrationOptions, calibrate
    from sysid_ros._src.calibration.document import calibration_document
    from sysid_ros._src.calibration.errors import CalibrationInconsistentError, \
        CalibrationInputError
    from sysid_ros._src.calibration.synthetic import as_recording
    from sysid_ros._src.simulation import record_hardware_like

    clock = time.perf_counter()
    if not ROBOT_SETUPS[draw.robot].get("calibrate", True):
        return {"calibration": None, "refused": None, "friction_inside": None,
                "uncalibrated": True, "seconds": 0.0}
    robot, profile, truth = _setup(draw)
    rec = record_hardware_like(robot, np.random.default_rng([draw.seed, 1]), None,
                               draw.cal_seconds, profile, truth)
    try:
        res = calibrate(robot, [as_recording(rec, draw.key)], CalibrationOptions())
    except (CalibrationInconsistentError, CalibrationInputError) as err:
        return {"calibration": None, "refused": f"calibration: {err}",
                "friction_inside": None, "seconds": time.perf_counter() - clock}
    inside = bool(np.all((truth.friction >= res.friction_lower - 1e-9)
                         & (truth.friction <= res.friction_upper + 1e-9)))
    doc = calibration_document(res, bags=[draw.key])
    return {"calibration": doc, "refused": None, "friction_inside": inside,
            "seconds": time.perf_counter() - clock}


def run_case(task: tuple[Case, dict[str, Any] | None]) -> dict[str, Any]:
    """Record and identify one case on its draw's calibration (None: the draw was refused)."""
    from sysid_ros._src.identification import identify, load_identification_config
    from sysid_ros._src.model.calibration_overlay import apply_calibration
    from sysid_ros._src.simulation import dumbbell_for, record_hardware_like

    case, calibration = task
    if not ROBOT_SETUPS[case.draw.robot].get("calibrate", True):
        return _run_standing_case(case)
    if calibration is None:
        return {"status": "refused", "reason": "the draw's calibration was refused"}
    clock = time.perf_counter()
    robot, profile, truth = _setup(case.draw)
    rng = np.random.default_rng([case.draw.seed, 2, case.index])
    rec = record_hardware_like(robot, rng, dumbbell_for(robot, case.mass_kg),
                               case.payload_seconds, profile, truth)
    calibrated = apply_calibration(robot, calibration)
    config = load_identification_config(calibrated)
    res = identify(calibrated, config, rec.t, rec.q, rec.dq, rec.tau_meas, "lp",
                   point_estimate=False)
    theta = np.asarray(rec.truth.theta_e, float)
    out: dict[str, Any] = {"status": res.status, "reason": res.reason,
                           "mass_kg": float(theta[0]), "seconds": time.perf_counter() - clock}
    if res.status == "ok" and res.lower is not None and res.upper is not None:
        out |= {"contains": bool(res.contains(theta)),
                "mass_width_kg": float(res.upper[0] - res.lower[0]),
                "mass_width_of_prior": float((res.upper[0] - res.lower[0])
                                             / (config.prior.upper[0] - config.prior.lower[0]))}
    return out


def _run_standing_case(case: Case) -> dict[str, Any]:
    """Record and identify one standing floating-base case (uncalibrated; ``ROBOT_SETUPS``):
    the box against the truth, and against the payload class the truth was drawn in."""
    from sysid_ros._src.identification import identify, load_identification_config
    from sysid_ros._src.simulation.assumptions import identifier_assumptions
    from sysid_ros._src.simulation.offcentre import place_in_box
    from sysid_ros._src.simulation.standing_hardware import record_standing_hardware_like

    clock = time.perf_counter()
    robot, profile, truth = _setup(case.draw)
    assert case.class_seed is not None
    drawn = _class_draw(case.draw.robot, case.class_seed)
    rng = np.random.default_rng([case.draw.seed, 2, case.index])
    rec = record_standing_hardware_like(robot, rng, drawn.payload, case.payload_seconds,
                                        profile, truth=truth)
    config = load_identification_config(robot, **identifier_assumptions(robot, profile))
    res = identify(robot, config, rec.t, rec.q, rec.dq, rec.tau_meas, "lp", imu=rec.imu,
                   point_estimate=False)
    theta = np.asarray(rec.truth.theta_e, float)
    lo_c, hi_c = _payload_class(robot)
    out: dict[str, Any] = {"status": res.status, "reason": res.reason,
                           "mass_kg": float(theta[0]),
                           "class_mass_kg": [float(lo_c[0]), float(hi_c[0])],
                           "mass_place_in_class": float(place_in_box(theta, lo_c, hi_c)[0]),
                           "seconds": time.perf_counter() - clock}
    if res.status == "ok" and res.lower is not None and res.upper is not None:
        out |= {"contains": bool(res.contains(theta)),
                "mass_box_kg": [float(res.lower[0]), float(res.upper[0])],
                "mass_width_kg": float(res.upper[0] - res.lower[0]),
                "mass_width_of_prior": float((res.upper[0] - res.lower[0])
                                             / (config.prior.upper[0] - config.prior.lower[0])),
                "mass_place_in_box": float(place_in_box(theta, res.lower, res.upper)[0])}
    # reference, not a claim: the same data with the exact IMU and its bounds at zero, i.e.
    # what the IMU's stated error costs in width
    assert config.imu is not None                       # a floating base's config has one
    ref = identify(robot, config.with_overrides(imu=config.imu.scaled(0.0)), rec.t, rec.q,
                   rec.dq, rec.tau_meas, "lp", imu=rec.imu_exact, point_estimate=False)
    if ref.status == "ok" and ref.lower is not None and ref.upper is not None:
        out["mass_width_kg_exact_imu"] = float(ref.upper[0] - ref.lower[0])
    return out


def tally(cases: list[Case], results: list[dict[str, Any] | None],
          errors: list[str | None]) -> dict[str, dict[str, Any]]:
    """Per ``robot@rate``: cases, contained, refused (with reasons), wrong, errors, widths."""
    groups: dict[str, dict[str, Any]] = {}
    for case, res, err in zip(cases, results, errors):
        g = groups.setdefault(f"{case.draw.robot}@{case.draw.rate_hz:g}Hz", {
            "cases": 0, "contained": 0, "refused": 0, "wrong": 0, "errors": 0,
            "widths": [], "width_of_prior": [], "refusals": [], "error_messages": []})
        g["cases"] += 1
        if res is None:
            g["errors"] += 1
            g["error_messages"].append(err)
        elif res["status"] == "ok":
            g["contained" if res["contains"] else "wrong"] += 1
            g["widths"].append(res["mass_width_kg"])
            g["width_of_prior"].append(res["mass_width_of_prior"])
        else:
            g["refused"] += 1
            g["refusals"].append(f"{case.draw.key} payload {case.index}: {res['status']}: "
                                 f"{res['reason']}")
    for g in groups.values():
        w = g.pop("widths")
        wp = g.pop("width_of_prior")
        g["containment"] = g["contained"] / g["cases"]
        g["mass_width_kg_median"] = float(np.median(w)) if w else None
        g["mass_width_kg_max"] = float(np.max(w)) if w else None
        g["mass_width_of_prior_median"] = float(np.median(wp)) if wp else None
    return groups
