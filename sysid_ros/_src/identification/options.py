"""The values the identification's options take, in a module that loads nothing else: the
command-line parser reads them without loading the solvers, the robot model or the bag reader
(a batch's driver process, or ``sysid-identify --help``, never needs those)."""
from __future__ import annotations

__all__ = ["METHODS", "ONLINE_METHODS", "FRICTION_MODES", "VELOCITY_NOISE_SCOPES", "EXIT_CODES",
           "GAP_FACTOR", "GAP_FLOOR", "GAP_RULE"]

METHODS = ("lp", "lp-cuts", "lp-lmi", "sensitivity")
ONLINE_METHODS = ("lp", "lp-cuts", "lp-lmi")
FRICTION_MODES = ("config", "wide", "none")
VELOCITY_NOISE_SCOPES = ("all", "payload")

#: ``sysid-identify``'s exit codes for one recording
EXIT_CODES = {"ok": 0, "bad_input": 2, "inconsistent": 3, "insufficient_data": 4,
              "ok_with_warnings": 5}

#: the default gap rule: consecutive samples further apart than max(GAP_FACTOR × the median
#: step, GAP_FLOOR s) split the windows (IdentificationConfig.gap_factor / gap_floor)
GAP_FACTOR = 2.5
GAP_FLOOR = 0.0025
GAP_RULE = f"max({GAP_FACTOR:g} x median step, {GAP_FLOOR * 1e3:g} ms)"
