"""Line plots of efficiencies against the matrix size (parallelism_sweep).

``draw_efficiency(curves, lang)`` takes ``{label: (sizes, efficiencies)}``
(None efficiencies are skipped) and draws them on a log-2 size axis with
reference lines at 1 (full overlap) and 0.5 (two jobs one after another), in
the words and decimal mark of the book language. Agg-safe.
"""
from typing import Mapping, Optional, Sequence, Tuple

from common.i18n import localize_axis, text


def draw_efficiency(curves: Mapping[str, Tuple[Sequence[int], Sequence[Optional[float]]]],
                    lang: str = "en", title: Optional[str] = None, width: float = 7.0):
    """Draw efficiency-vs-size curves; returns the Figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width, 4.0))
    ax.axhline(1.0, color="gray", linewidth=0.8, linestyle="--")
    ax.axhline(0.5, color="gray", linewidth=0.8, linestyle=":")
    ax.text(1.0, 1.0, " " + text(lang, "fully_parallel"), transform=ax.get_yaxis_transform(), va="center", fontsize=8)
    ax.text(1.0, 0.5, " " + text(lang, "one_after_another"), transform=ax.get_yaxis_transform(), va="center", fontsize=8)
    ticks, top = set(), 1.15
    for (label, (sizes, values)), marker in zip(curves.items(), "osD^v<>"):
        points = [(s, v) for s, v in zip(sizes, values) if v is not None]
        if points:
            ax.plot(*zip(*points), marker=marker, label=label)
            ticks.update(s for s, _ in points)
            top = max(top, max(v for _, v in points) + 0.05)
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
