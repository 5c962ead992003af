"""How far a ratio can be trusted: its values across every run of the same code that the book keeps.

A ratio is **stable** when at least ``MIN_RUNS`` runs on at least ``MIN_GPU_MODELS`` GPU models agree
within ``STABLE_WITHIN`` (the highest over the lowest); **noisy** when any two runs differ by more; and
**host-bound** when ``HOST_BOUND_RATIOS`` names it: the host's CPU, its clocks and Python set it, not
the device, so it moves with the machine whatever the runs show. With fewer
runs, or runs on one GPU model only, a ratio that has not yet moved has **too few runs** to be called
stable. The prose quotes a ratio as a number only when it is neither noisy nor host-bound.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from recordings import Recording, load_runs

STABLE_WITHIN = 0.03
MIN_RUNS = 3
MIN_GPU_MODELS = 2
# A glued value that is a ratio: overlaps, fractions of a limit, speed-ups and slowdowns.
RATIO = re.compile(r"^(?!t_)(\w+_)?overlap(_\w+)?$|_frac$|^speedup|^slowdown")

STABLE, NOISY, HOST_BOUND, TOO_FEW = "stable", "noisy", "host-bound", "too few runs"

# The ratios that the host sets, not the device, and why: its CPU, its clocks and Python's speed at
# issuing short calls. Every table labels them host-bound, and the prose quotes none of them as a number.
HOST_ISSUES = "Python issues each small kernel, and the kernels end before the next arrives"
HOST_BOUND_RATIOS = {
    "pytorch/hybridize::speedup_compiled": HOST_ISSUES,
    "pytorch/hybridize::speedup_graph": HOST_ISSUES,
    "pytorch/hybridize::small_eager_overlap": HOST_ISSUES,
    "pytorch/parallelism_sweep::small_overlap_streams": HOST_ISSUES,
    "pytorch/hybridize::t_compile": "the compiler runs on the CPU",
    "pytorch/hardware::slowdown_pageable_h2d": "the CPU copies pageable memory through a pinned buffer",
    "pytorch/hardware::slowdown_pageable_d2h": "the CPU copies pageable memory through a pinned buffer",
    "mxnet/hybridize::speedup_compiled": "hybridizing saves Python's work per operator",
    "mxnet/hybridize::speedup_graph": "hybridizing saves Python's work per operator",
}


def gpu_model(stamp: dict) -> str:
    """The first GPU of the machine a run was recorded on (``no GPU`` without one)."""
    gpus = stamp.get("machine", {}).get("gpus") or []
    return gpus[0] if gpus else "no GPU"


def relative_spread(values: list[float]) -> float:
    """How far apart the runs are: the highest over the lowest, less one (infinite when they straddle 0)."""
    low, high = min(values), max(values)
    if low == high:
        return 0.0
    return high / low - 1 if low > 0 else float("inf")


@dataclass(frozen=True)
class Runs:
    """One ratio in every kept run: its values, oldest first, the runs' stamps, and whether
    HOST_BOUND_RATIOS names it."""

    values: list[float]
    stamps: list[dict]
    host_bound: bool = False

    @property
    def models(self) -> list[str]:
        return sorted({gpu_model(stamp) for stamp in self.stamps})

    def verdict(self) -> str:
        """The rule of the module's docstring."""
        if self.host_bound:
            return HOST_BOUND
        if len(self.values) > 1 and relative_spread(self.values) > STABLE_WITHIN:
            return NOISY
        if len(self.values) < MIN_RUNS or len(self.models) < MIN_GPU_MODELS:
            return TOO_FEW
        return STABLE


def ratio_runs(recording: Recording, key: str) -> Runs:
    """The key's value in every kept run of the recording's code, the recording last."""
    stamps = [*load_runs(recording), recording.stamp]
    values = [ast.literal_eval(stamp["glue"][key]) if key in stamp.get("glue", {}) else None for stamp in stamps]
    kept = [(value, stamp) for value, stamp in zip(values, stamps) if value is not None]
    return Runs([value for value, _ in kept], [stamp for _, stamp in kept],
                f"{recording.example.ident}::{key}" in HOST_BOUND_RATIOS)
