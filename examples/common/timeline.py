"""Gantt charts of measured activity: one row per device or stream.

A ``Span`` is one measured activity: the row it belongs to (a device or a
stream, e.g. ``"cuda:0 compute"``), its start and end in seconds on any clock,
and an optional label. ``draw_timeline`` draws one panel per group of spans,
each aligned to its own origin (its earliest start), on a shared time axis in
seconds so that the panels compare at a glance. It works with the Agg backend.
"""
from typing import List, Mapping, NamedTuple, Optional, Sequence


class Span(NamedTuple):
    """One measured activity on one row: [start, end] in seconds."""
    row: str
    start: float
    end: float
    label: str = ""


def rows_in_order(spans: Sequence[Span]) -> List[str]:
    """The distinct rows, in the order they first appear."""
    seen: List[str] = []
    for span in spans:
        if span.row not in seen:
            seen.append(span.row)
    return seen


def align(spans: Sequence[Span]) -> List[Span]:
    """The spans shifted so that the earliest start is 0."""
    if not spans:
        return []
    origin = min(s.start for s in spans)
    return [s._replace(start=s.start - origin, end=s.end - origin) for s in spans]


def draw_timeline(panels: Mapping[str, Sequence[Span]], title: Optional[str] = None,
                  width: float = 8.0):
    """Draw one Gantt panel per entry of ``panels`` (title -> spans); returns the Figure."""
    import matplotlib
    if matplotlib.get_backend().lower() in ("", "none"):  # pragma: no cover
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(panels)
    aligned = {name: align(panels[name]) for name in names}
    heights = [max(1, len(rows_in_order(aligned[n]))) for n in names]
    fig, axes = plt.subplots(len(names), 1, sharex=True, squeeze=False,
                             figsize=(width, 0.9 + 0.55 * sum(heights) + 0.5 * len(names)),
                             gridspec_kw={"height_ratios": heights})
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    all_rows: List[str] = []
    for name in names:
        all_rows += [r for r in rows_in_order(aligned[name]) if r not in all_rows]
    end = max([s.end for n in names for s in aligned[n]] + [1e-9])
    for ax, name in zip(axes[:, 0], names):
        rows = rows_in_order(aligned[name])
        for i, row in enumerate(rows):
            bars = [(s.start, max(s.end - s.start, end * 1e-3)) for s in aligned[name] if s.row == row]
            color = colors[all_rows.index(row) % len(colors)]
            ax.broken_barh(bars, (i - 0.35, 0.7), facecolors=color, edgecolors="white", linewidth=0.3)
            for s in aligned[name]:
                if s.row == row and s.label and (s.end - s.start) > 0.15 * end:
                    ax.text((s.start + s.end) / 2, i, s.label, ha="center", va="center",
                            fontsize=8, color="white")
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(rows)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_title(name, fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlim(0, end * 1.02)
    axes[-1, 0].set_xlabel("time (s)")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
