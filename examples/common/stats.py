"""Statistics for the timing experiments: medians, spreads, turns, efficiencies, rates.

Every function takes plain numbers (seconds, bytes, FLOPs) and returns a plain
Python float, int or None. None means "not measured / not applicable" and
passes through: an overlap of a missing time is None, never an error.

Overlap, the book's one measure of parallelism:
- overlap = (sum of T_i alone - T_together) / (sum of T_i alone - max T_i alone):
  the time saved over taking turns, as a share of the most that could be saved.
  For two jobs the denominator is the shorter job, so it is the share of the
  shorter job that ran hidden under the longer one. 1 means the jobs ran fully
  at the same time, 0 that they took turns, whatever their lengths; below 0,
  running them together was slower than taking turns.
"""
import math
import statistics
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence

Number = Optional[float]


def median(values: Iterable[float]) -> float:
    """The median of the measured values (the figure the examples report)."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("median of no values")
    return float(statistics.median(values))


def spread(values: Iterable[float]) -> List[float]:
    """[min, max] of the measured values: how far the repeats scattered."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("spread of no values")
    return [min(values), max(values)]


def in_turns(time_once: Callable[[Any], Any], cases: Mapping[str, Any], repeats: int,
             warmup: int = 1) -> Dict[str, list]:
    """Samples of several cases, timed in turns: each round times every case once.

    ``time_once(case)`` times one call of a case and returns its sample.
    ``warmup`` untimed rounds come first. Taking turns spreads the slow drifts
    of a shared machine (other work, clock changes) over every case alike, so
    that their ratios, such as an overlap, compare like with like.
    """
    for _ in range(warmup):
        for case in cases.values():
            time_once(case)
    samples: Dict[str, list] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, case in cases.items():
            samples[name].append(time_once(case))
    return samples


def count_equal(pairs: Iterable[Sequence[Any]], equal: Callable[[Any, Any], bool]) -> int:
    """How many (a, b) pairs are equal by ``equal``: e.g. host copies against device results."""
    return sum(1 for a, b in pairs if equal(a, b))


def _known(*values: Number) -> bool:
    return all(v is not None and math.isfinite(v) for v in values)


def ratio(numerator: Number, denominator: Number) -> Number:
    """numerator / denominator, or None if either is missing or the denominator <= 0."""
    if not _known(numerator, denominator) or denominator <= 0:
        return None
    return float(numerator) / float(denominator)


def overlap(t_alone: Sequence[Number], t_together: Number) -> Number:
    """(sum(T_i alone) - T_together) / (sum(T_i alone) - max(T_i alone)) for jobs (or a compute and a
    copy) run alone and then together: 1 at full overlap, 0 when they take turns."""
    if not t_alone or not _known(*t_alone, t_together):
        return None
    return ratio(sum(t_alone) - t_together, sum(t_alone) - max(t_alone))


def significant(value: Number, digits: int = 1) -> Number:
    """``value`` rounded to ``digits`` significant digits (26.3 -> 30.0), for figures that two runs
    of the same code reproduce only that far, such as latencies of a few microseconds."""
    return None if not _known(value) else float(f"{value:.{digits}g}")


def speedup(t_before: Number, t_after: Number) -> Number:
    """How many times faster ``after`` is than ``before`` (t_before / t_after)."""
    return ratio(t_before, t_after)


def matmul_flops(n: int, count: int = 1) -> float:
    """Floating-point operations of ``count`` products of two n x n matrices (2 n^3 each)."""
    return 2.0 * float(n) ** 3 * count


def rate(amount: Number, seconds: Number, unit: float = 1.0) -> Number:
    """amount / seconds / unit, e.g. rate(nbytes, t, 1e9) in GB/s or rate(flops, t, 1e12) in TFLOP/s."""
    value = ratio(amount, seconds)
    return None if value is None else value / unit


def size_for_time(flops_per_second: float, seconds: float, count: int,
                  smallest: int = 16, largest: Optional[int] = None) -> int:
    """The matrix side n whose ``count`` products take about ``seconds`` at the given rate.

    Solves count * 2 n^3 / rate = seconds for n, rounded to a multiple of 16
    and clipped to [smallest, largest].
    """
    if not _known(flops_per_second, seconds) or flops_per_second <= 0 or seconds <= 0:
        raise ValueError("size_for_time needs a positive rate and time")
    n = (flops_per_second * seconds / (2.0 * count)) ** (1.0 / 3.0)
    n = max(smallest, int(round(n / 16.0)) * 16)
    if largest is not None:
        n = min(n, largest)
    return max(1, n)
