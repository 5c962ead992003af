"""A table of ratios across every kept run of the code that the book shows.

    .. reproducibility::

       GPU and CPU jobs: overlap | pytorch/auto_parallelism::overlap_devices
       Reading once: speed-up | pytorch/async_computation::speedup_read_once

Each line is a label, in the page's language, and a glued value. The runs are the recording and the other
runs of its sources that ``conf/record.py`` keeps (``<name>.runs.json``). Each row gives how many runs
hold the ratio, its lowest and highest value, this recording's, and a verdict (``stability.py``): stable,
noisy, host-bound (``stability.HOST_BOUND_RATIOS``), or too few runs to tell. A note under the table
names each run once, when and on which GPU it was recorded; while every run comes from one GPU model, it
says that no ratio can be stable yet.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import _
from sphinx.util.docutils import SphinxDirective

from example_cells import local_number, recording_for
from execution_times import text_table
from recordings import RecordingError, recorded_when
from stability import HOST_BOUND, MIN_GPU_MODELS, NOISY, STABLE, TOO_FEW, gpu_model, \
    ratio_runs, relative_spread


def ratio_decimals(value: float) -> int:
    """Decimals that show a ratio with 3 significant digits, 2 at most: one run's ratio is no more
    precise than that."""
    return 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0


class Reproducibility(SphinxDirective):
    """One row per ratio: its runs, their range, this recording, and the verdict."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        verdicts = {STABLE: _("stable"), NOISY: _("noisy"), HOST_BOUND: _("host-bound"), TOO_FEW: _("too few runs")}
        headers = [_("Ratio"), _("Runs"), _("Lowest–highest"), _("This recording"), _("Verdict")]
        rows, runs = [], set()
        for line in self.content:
            label, bar, value = line.rpartition("|")
            ident, sep, key = value.strip().partition("::")
            if not bar or not sep:
                raise self.error(f"write each line as 'label | framework/script::key', not {line!r}")
            framework, _slash, name = ident.partition("/")
            try:
                recording = recording_for(self.env, framework, name)
                kept = ratio_runs(recording, key)
            except (RecordingError, ValueError, SyntaxError) as err:
                raise self.error(f"{value.strip()}: {err}") from err
            self.env.note_dependency(str(recording.example.runs))
            if not kept.values:
                raise self.error(f"{value.strip()}: no run measured it (None); leave it out of the table")
            verdict = kept.verdict()
            shown = verdicts[verdict]
            spread = relative_spread(kept.values)
            if verdict == NOISY and spread != float("inf"):  # runs reaching 0 or below have no relative spread
                shown += f" ({self.percent(spread)})"
            low, high = min(kept.values), max(kept.values)
            span = "—" if len(kept.values) == 1 else self.number_range(low, high)
            current = kept.values[-1] if kept.stamps[-1] is recording.stamp else None
            rows.append([label.strip(), str(len(kept.values)), span, self.number(current), shown])
            runs |= {(recorded_when(stamp, self.env.config.language, minute=True), gpu_model(stamp)) for stamp in kept.stamps}
        table = text_table("reproducibility", headers, (9, 2, 4, 3, 4), rows)
        note = nodes.paragraph(classes=["reproducibility-runs"])
        note += nodes.Text(_("Runs (UTC), each row counting those of its own example: %s.")
                           % "; ".join(f"{at}, {gpu}" for at, gpu in sorted(runs)))
        if len({gpu for _at, gpu in runs}) < MIN_GPU_MODELS:
            note += nodes.Text(" " + _("All these runs come from one GPU model, so no ratio can be called stable yet."))
        return [table, note]

    def number(self, value) -> str:
        """The value with 3 significant digits, 2 decimals at most (0.96, 10.7, 123), and a real minus
        sign (U+2212); "n/a" for a figure the run did not produce."""
        if value is None:
            return "n/a"
        return local_number(f"{value:.{ratio_decimals(value)}f}", self.env.config.language).replace("-", "\N{MINUS SIGN}")

    def number_range(self, low: float, high: float) -> str:
        """``0.96–1.00``; spaced where an end is negative, ``−0.13 – −0.01``, so that the dash does not
        run into the minus sign."""
        dash = " – " if low < 0 else "–"  # low <= high
        return f"{self.number(low)}{dash}{self.number(high)}"

    def percent(self, change: float) -> str:
        """``8.6 %`` in English; ``%8,6`` in Turkish, whose percent sign comes first (a finite change)."""
        digits = f"{change * 100:.1f}"
        if self.env.config.language == "tr":
            return f"%{local_number(digits, 'tr')}"
        return f"{digits}\N{NO-BREAK SPACE}%"


def setup(app: Sphinx) -> dict:
    app.add_directive("reproducibility", Reproducibility)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
