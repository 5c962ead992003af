"""A table of the ratios the book quotes, in this recording and in the run before it.

    .. reproducibility::

       GPU and CPU jobs: parallel efficiency | pytorch/auto_parallelism::parallel_eff
       Reading once: speed-up | pytorch/async_computation::speedup_read_once

Each line is a label, in the page's language, and a glued value. The previous run is the stamp that
``conf/record.py`` keeps when a run replaces a recording of the same sources. The last column gives the
change from that run; beyond ±3 % it says that the figure is noisy, and the prose may then draw no
conclusion finer than that change. Without a previous run of the same sources, the row says so.
"""

from __future__ import annotations

import ast

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import _
from sphinx.util.docutils import SphinxDirective

from example_cells import local_number, recording_for
from execution_times import text_table
from recordings import RecordingError, load_previous

# A ratio that moves more than this between two runs of the same code is noisy.
NOISY_ABOVE = 0.03


def relative_change(previous: float, current: float) -> float:
    return current / previous - 1


def is_noisy(previous: float, current: float) -> bool:
    return abs(relative_change(previous, current)) > NOISY_ABOVE


class Reproducibility(SphinxDirective):
    """One row per quoted ratio: the previous run, this recording, and the change."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        headers = [_("Ratio"), _("Previous run"), _("This recording"), _("Change")]
        rows, runs = [], set()
        for line in self.content:
            label, bar, value = line.rpartition("|")
            ident, sep, key = value.strip().partition("::")
            if not bar or not sep:
                raise self.error(f"write each line as 'label | framework/script::key', not {line!r}")
            framework, _slash, name = ident.partition("/")
            try:
                recording = recording_for(self.env, framework, name)
                previous = load_previous(recording)
                current = ast.literal_eval(recording.value(key))
            except (RecordingError, ValueError, SyntaxError) as err:
                raise self.error(f"{value.strip()}: {err}") from err
            self.env.note_dependency(str(recording.example.previous))
            if previous is None:
                cells = [label.strip(), "—", self.number(current), _("no earlier run of this code")]
            else:
                before = ast.literal_eval(previous["glue"][key])
                change = self.percent(relative_change(before, current))
                if is_noisy(before, current):
                    change += " " + _("(noisy)")
                cells = [label.strip(), self.number(before), self.number(current), change]
                runs.add(run_pair(previous, recording.stamp))
            rows.append(cells)
        table = text_table("reproducibility", headers, (10, 3, 3, 4), rows)
        note = nodes.paragraph(classes=["reproducibility-runs"])
        for before, now in sorted(runs):
            note += nodes.Text(_("Previous run recorded %(before)s; this recording %(now)s (UTC). ")
                               % {"before": before, "now": now})
        return [table, note] if runs else [table]

    def number(self, value) -> str:
        """The value with 2 decimals; "n/a" for a figure the run did not produce (a GPU figure in a
        check recording made without a GPU)."""
        return "n/a" if value is None else local_number(f"{value:.2f}", self.env.config.language)

    def percent(self, change: float) -> str:
        """``+2.4 %`` in English; ``+%2,4`` in Turkish, whose percent sign comes first. A real minus sign,
        and no sign for a change that rounds to zero."""
        digits = f"{abs(change) * 100:.1f}"
        sign = "" if digits == "0.0" else "+" if change > 0 else "\N{MINUS SIGN}"
        if self.env.config.language == "tr":
            return f"{sign}%{local_number(digits, 'tr')}"
        return f"{sign}{digits}\N{NO-BREAK SPACE}%"


def run_pair(previous: dict, current: dict) -> tuple[str, str]:
    """When two runs were recorded, to the minute (UTC), so that the note under the table names each
    pair of record steps once. The examples of one step share its time (conf/record.py); recordings
    made before that were stamped seconds apart."""
    return tuple(stamp["recorded_at"][:16].replace("T", " ") for stamp in (previous, current))


def setup(app: Sphinx) -> dict:
    app.add_directive("reproducibility", Reproducibility)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
