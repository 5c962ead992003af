"""A table of the recorded examples: how long each ran, where, and when (as sphinx-gallery's).

Next to each example's own run time stands the wall time of the whole record step that produced it
(every example it ran, with Sphinx and kernel start-up), and its shard when the step was split.

    .. execution-times::

A second table sets the library versions of the recorded runs beside those of the environment that
builds the book and runs its tests (requirements.txt, and the Python that runs Sphinx):

    .. recorded-versions::
"""

from __future__ import annotations

import platform
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import _
from sphinx.util.docutils import SphinxDirective

from downloads import book_pins
from example_cells import local_number, recording_for, stamp_text
from recordings import FRAMEWORK_TITLES, all_examples


def text_table(css_class: str, headers: list[str], widths: tuple[int, ...], rows: list[list[str]],
               groups: list[tuple[str, int]] = ()) -> nodes.table:
    """A table of plain texts: a header row, then one row per list of cell texts. ``groups``, when given,
    is a header row above that one, of (title, columns) pairs: each title spans its number of columns."""
    def row(texts: list[str], spans: list[int] = ()) -> nodes.row:
        row = nodes.row()
        for text, span in zip(texts, spans or [1] * len(texts)):
            entry = nodes.entry("", nodes.paragraph(text=text))
            if span > 1:
                entry["morecols"] = span - 1
            row += entry
        return row

    table = nodes.table(classes=[css_class])
    group = nodes.tgroup(cols=len(headers))
    table += group
    group.extend(nodes.colspec(colwidth=w) for w in widths)
    head = [row([title for title, _span in groups], [span for _title, span in groups])] if groups else []
    group += nodes.thead("", *head, row(headers))
    group += nodes.tbody("", *(row(cells) for cells in rows))
    return table


class ExecutionTimes(SphinxDirective):
    """One row per recorded example, slowest first."""

    def run(self) -> list[nodes.Node]:
        rows = []
        for example in all_examples(Path(self.env.config.examples_dir)):
            stamp = recording_for(self.env, example.framework, example.name).stamp
            self.env.note_dependency(str(example.recording))
            if "record_step" not in stamp:
                raise self.error(f"{example.ident}'s recording does not say how long its record step took; "
                                 f"record it again: {example.refresh_command()}")
            rows.append((stamp["runtime_s"], example, stamp))
        rows.sort(key=lambda row: -row[0])
        headers = [_("Example"), _("Framework"), _("Run time (s)"), _("Record step, wall (s)"), _("Recorded run")]
        cells = [[example.script.name, FRAMEWORK_TITLES[example.framework], self.seconds(runtime),
                  self.record_step(stamp["record_step"]), stamp_text(stamp, self.env.config.language)]
                 for runtime, example, stamp in rows]
        return [text_table("execution-times", headers, (3, 2, 2, 3, 8), cells)]

    def seconds(self, value: float) -> str:
        """``12.3``; in the Turkish book ``12,3``."""
        return local_number(f"{value:.1f}", self.env.config.language)

    def record_step(self, step: dict) -> str:
        text = _("%(wall)s (examples: %(count)d)") % {"wall": self.seconds(step["wall_s"]),
                                                       "count": len(step["examples"])}
        return text + (" " + _("(shard %s)") % step["shard"] if step["shard"] else "")


class RecordedVersions(SphinxDirective):
    """One row per library that the stamps name: its versions in the recorded runs, and its version in
    the book's environment."""

    def run(self) -> list[nodes.Node]:
        recorded: dict[str, set[str]] = {}
        for example in all_examples(Path(self.env.config.examples_dir)):
            for name, version in recording_for(self.env, example.framework, example.name).stamp["versions"].items():
                recorded.setdefault(name, set()).add(version)
        self.env.note_dependency(self.env.config.download_pins_from)
        pins = book_pins(Path(self.env.config.download_pins_from)) | {"python": platform.python_version()}
        missing = sorted(set(recorded) - set(pins))
        if missing:
            raise self.error(f"requirements.txt pins no version of {', '.join(missing)}, which the recordings name")
        headers = [_("Library"), _("Recorded runs"), _("make html and make test")]
        rows = [[name, ", ".join(sorted(versions)), pins[name]] for name, versions in recorded.items()]
        return [text_table("recorded-versions", headers, (2, 3, 3), rows)]


def setup(app: Sphinx) -> dict:
    app.add_directive("execution-times", ExecutionTimes)
    app.add_directive("recorded-versions", RecordedVersions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
