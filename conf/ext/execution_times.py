"""A table of the recorded examples: how long each ran, where, and when (as sphinx-gallery's).

    .. execution-times::
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import _
from sphinx.util.docutils import SphinxDirective

from example_cells import recording_for, stamp_text
from recordings import FRAMEWORK_TITLES, all_examples


class ExecutionTimes(SphinxDirective):
    """One row per recorded example, slowest first."""

    def run(self) -> list[nodes.Node]:
        rows = []
        for example in all_examples(Path(self.env.config.examples_dir)):
            stamp = recording_for(self.env, example.framework, example.name).stamp
            self.env.note_dependency(str(example.recording))
            rows.append((stamp["runtime_s"], example, stamp))
        rows.sort(key=lambda row: -row[0])
        headers = [_("Example"), _("Framework"), _("Run time (s)"), _("Recorded run")]
        table = nodes.table(classes=["execution-times"])
        group = nodes.tgroup(cols=len(headers))
        table += group
        group.extend(nodes.colspec(colwidth=w) for w in (3, 2, 2, 8))
        group += nodes.thead("", self.row(headers))
        body = nodes.tbody()
        for runtime, example, stamp in rows:
            cells = [example.script.name, FRAMEWORK_TITLES[example.framework], f"{runtime:.1f}",
                     stamp_text(stamp)]
            body += self.row(cells)
        group += body
        return [table]

    @staticmethod
    def row(texts: list[str]) -> nodes.row:
        row = nodes.row()
        for text in texts:
            row += nodes.entry("", nodes.paragraph(text=text))
        return row


def setup(app: Sphinx) -> dict:
    app.add_directive("execution-times", ExecutionTimes)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
