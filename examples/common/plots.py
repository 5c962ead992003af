"""Line plots of efficiencies against the matrix size (parallelism_sweep).

``draw_efficiency(curves, lang)`` takes ``{label: (sizes, efficiencies,
no_overlap)}`` (None values are skipped) and draws the efficiencies on a log-2
size axis with a reference line at 1 (full overlap) and, dotted in each
curve's colour, the curve's own efficiency without any overlap (0.5 for two
equal jobs one after another; max / sum for products and copies), in the
words and decimal mark of the book language. Agg-safe.
"""
from typing import Mapping, Optional, Sequence, Tuple

from common.i18n import localize_axis, text
from common.stats import overlap_efficiency


Curve = Tuple[Sequence[int], Sequence[Optional[float]], Sequence[Optional[float]]]


def sweep_curves(rows: Mapping[int, dict], parallel_label: str, copies_label: Optional[str] = None):
    """One device's sweep rows ({size: row}) as curves: two jobs at once, whose no-overlap reference
    is 0.5, and with ``copies_label`` products next to copies, whose reference is max / sum."""
    sizes = list(rows)
    curves = {parallel_label: (sizes, [r["parallel_eff"] for r in rows.values()], [0.5] * len(sizes))}
    if copies_label is not None:
        curves[copies_label] = (sizes, [r["overlap_eff"] for r in rows.values()],
                                [overlap_efficiency(r["one"], r["copy"], r["one"] + r["copy"]) for r in rows.values()])
    return curves


def draw_efficiency(curves: Mapping[str, Curve], lang: str = "en", title: Optional[str] = None,
                    width: float = 7.0):
    """Draw efficiency-vs-size curves, each with its own no-overlap reference; returns the Figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, 4.0))
    ax.axhline(1.0, color="gray", linewidth=0.8, linestyle="--")
    ax.text(1.0, 1.0, " " + text(lang, "fully_parallel"), transform=ax.get_yaxis_transform(), va="center", fontsize=8)
    ticks, top = set(), 1.15
    for (label, (sizes, values, no_overlap)), marker in zip(curves.items(), "osD^v<>"):
        points = [(s, v) for s, v in zip(sizes, values) if v is not None]
        if points:
            line, = ax.plot(*zip(*points), marker=marker, label=label)
            ticks.update(s for s, _ in points)
            top = max(top, max(v for _, v in points) + 0.05)
            reference = [(s, r) for s, r in zip(sizes, no_overlap) if r is not None]
            ax.plot(*zip(*reference), color=line.get_color(), linewidth=1.0, linestyle=":")
    ax.plot([], [], color="gray", linewidth=1.0, linestyle=":", label=text(lang, "one_after_another"))
    ax.set_xscale("log", base=2)
    if ticks:
        ax.set_xticks(sorted(ticks))
        ax.set_xticklabels([str(t) for t in sorted(ticks)])
        ax.minorticks_off()
    localize_axis(ax.yaxis, lang)
    ax.set_xlabel(text(lang, "matrix_size"))
    ax.set_ylabel(text(lang, "efficiency"))
    ax.set_ylim(0, top)
    ax.grid(alpha=0.3)
    if curves:
        ax.legend(fontsize=8, loc="lower right")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig
