"""Gantt charts of measured activity: one row per device or stream.

A ``Span`` is one measured activity: the row it belongs to (a device or a
stream, e.g. ``"cuda:0 compute"``), its start and end in seconds on any clock,
and an optional label. ``draw_timeline`` draws one panel per group of spans,
each aligned to its own origin (its earliest start), on a shared time axis in
seconds so that the panels compare at a glance, with the axis words and
decimal mark of the book language. It works with the Agg backend.
"""
from typing import List, Mapping, NamedTuple, Optional, Sequence

from common.i18n import localize_axis, text


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


def draw_timeline(panels: Mapping[str, Sequence[Span]], lang: str = "en",
                  title: Optional[str] = None, width: float = 8.0, color_by: str = "row"):
    """Draw one Gantt panel per entry of ``panels`` (title -> spans); returns the Figure.

    ``color_by="row"`` colours each row; ``color_by="label"`` colours each kind of
    activity (e.g. "product" and "copy" on one stream) and adds a legend.
    """
    if color_by not in ("row", "label"):
        raise ValueError("color_by must be 'row' or 'label'")
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
    keys: List[str] = []  # every row (or label), for one colour per key across panels
    for name in names:
        for s in aligned[name]:
            key = s.row if color_by == "row" else s.label
            if key not in keys:
                keys.append(key)
    end = max([s.end for n in names for s in aligned[n]] + [1e-9])
    order = rows_in_order([s for name in names for s in panels[name]])  # the same in every panel
    for ax, name in zip(axes[:, 0], names):
        rows = [r for r in order if any(s.row == r for s in aligned[name])]
        for i, row in enumerate(rows):
            mine = [s for s in aligned[name] if s.row == row]
            bars = [(s.start, max(s.end - s.start, end * 4e-3)) for s in mine]  # keep short ones visible
            face = [colors[keys.index(s.row if color_by == "row" else s.label) % len(colors)] for s in mine]
            ax.broken_barh(bars, (i - 0.35, 0.7), facecolors=face, edgecolors="white", linewidth=0.2)
            for s in mine:
                if color_by == "row" and s.label and (s.end - s.start) > 0.15 * end:
                    ax.text((s.start + s.end) / 2, i, s.label, ha="center", va="center",
                            fontsize=8, color="white")
        ax.set_yticks(range(len(rows)))
        ax.set_yticklabels(rows)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_title(name, fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
        localize_axis(ax.xaxis, lang)
    if color_by == "label":
        from matplotlib.patches import Patch
        axes[0, 0].legend(handles=[Patch(color=colors[i % len(colors)], label=k or "?")
                                   for i, k in enumerate(keys)],
                          loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=8,
                          ncol=len(keys), frameon=False)
    axes[-1, 0].set_xlim(0, end * 1.02)
    axes[-1, 0].set_xlabel(text(lang, "time_s"))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
