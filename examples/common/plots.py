"""Line plots of the overlap against the matrix size (parallelism_sweep).

``draw_overlap(curves, lang)`` takes ``{label: (sizes, overlaps)}`` (None values
are skipped) and draws them on a log-2 size axis between two reference lines:
1, full overlap, and 0, taking turns, whatever the lengths of the two jobs. It
writes the words and the decimal mark of the book language. Agg-safe.
"""
from typing import Mapping, Optional, Sequence, Tuple

from common.i18n import localize_axis, text


Curve = Tuple[Sequence[int], Sequence[Optional[float]]]


def sweep_curves(rows: Mapping[int, dict], two_jobs_label: str, copies_label: Optional[str] = None):
    """One device's sweep rows ({size: row}) as curves: two jobs at once and, with ``copies_label``,
    products next to copies."""
    sizes = list(rows)
    curves = {two_jobs_label: (sizes, [r["overlap_two"] for r in rows.values()])}
    if copies_label is not None:
        curves[copies_label] = (sizes, [r["overlap_copy"] for r in rows.values()])
    return curves


def draw_overlap(curves: Mapping[str, Curve], lang: str = "en", title: Optional[str] = None,
                 width: float = 7.0):
    """Draw overlap-against-size curves; returns the Figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, 4.0))
    for level, key, style in ((1.0, "full_overlap", "--"), (0.0, "taking_turns", ":")):
        ax.axhline(level, color="gray", linewidth=0.8, linestyle=style)
        ax.text(1.0, level, " " + text(lang, key), transform=ax.get_yaxis_transform(), va="center", fontsize=8)
    ticks, bottom, top = set(), -0.1, 1.15
    for (label, (sizes, values)), marker in zip(curves.items(), "osD^v<>"):
        points = [(s, v) for s, v in zip(sizes, values) if v is not None]
        if points:
            ax.plot(*zip(*points), marker=marker, label=label)
            ticks.update(s for s, _ in points)
            bottom = min(bottom, min(v for _, v in points) - 0.05)
            top = max(top, max(v for _, v in points) + 0.05)
    ax.set_xscale("log", base=2)
    if ticks:
        ax.set_xticks(sorted(ticks))
        ax.set_xticklabels([str(t) for t in sorted(ticks)])
        ax.minorticks_off()
    localize_axis(ax.yaxis, lang)
    ax.set_xlabel(text(lang, "matrix_size"))
    ax.set_ylabel(text(lang, "overlap"))
    ax.set_ylim(bottom, top)
    ax.grid(alpha=0.3)
    if curves:
        ax.legend(fontsize=8, loc="center right")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    return fig
