"""The same program on each GPU model: one example's headline figures from its kept runs, side by side.

    .. gpu-comparison:: pytorch/hardware

       Issuing one small operation (µs) | t_gpu_op_issue:.1f µs
       Copy in device memory (GB/s) | memory_copy_gbps:,.0f | memory_peak_gbps | memory_frac

Each line is a label, in the page's language, and a glued value with its format, as the ``measured``
role writes one (a time unit shows seconds in that unit); where the hardware has a limit, then the keys
of that GPU's own limit (shown in the value's format) and of the fraction of it reached (a
percentage). A figure without a limit shows a dash there, and so does a figure that a GPU's run did
not measure (None).

The runs are the recording and the other kept runs of its sources (``<name>.runs.json``): first the
recording, whose outputs the pages show, then each other GPU model's newest run, by name, one column
group each. A note under the table names each of those runs: when, and on which GPU and CPU. Runs on fewer than two
GPU models fail the build, naming the command that records the other GPU; so does a run without a key
that a line names.
"""

from __future__ import annotations

import ast

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import _
from sphinx.util.docutils import SphinxDirective

from example_cells import machine_text, recording_for, scaled_number
from execution_times import text_table
from recordings import RecordingError, load_runs, recorded_when
from stability import gpu_model

NO_FIGURE = "—"
# The table compares: it sets at least this many GPU models side by side.
MIN_MODELS = 2
# How a run on another GPU model joins the kept runs (conf/record.py), online and on an offline GPU machine.
SECOND_GPU = "make record AS_RUN=1 (offline: make gpu-record AS_RUN=1)"


def runs_shown(recording_stamp: dict, runs: list[dict]) -> list[dict]:
    """The recording, the run whose outputs the pages show, then each other GPU model's newest run, by
    model name."""
    first = gpu_model(recording_stamp)
    newest: dict[str, dict] = {}
    for stamp in runs:
        model = gpu_model(stamp)
        if model != first and (model not in newest or stamp["recorded_at"] > newest[model]["recorded_at"]):
            newest[model] = stamp
    return [recording_stamp] + [newest[model] for model in sorted(newest)]


def glued(stamp: dict, key: str):
    """The value a run glued under ``key`` (None where it measured nothing); a run without the key is an
    error that names the run and the key."""
    glue = stamp.get("glue", {})
    if key not in glue:
        raise RecordingError(f"the run of {recorded_when(stamp, minute=True)} on {gpu_model(stamp)} glued no value "
                             f"{key!r}; record that GPU's run again with: {SECOND_GPU}")
    return ast.literal_eval(glue[key])


class GpuComparison(SphinxDirective):
    """One row per figure; per GPU model, the figure, that GPU's limit, and the fraction of it reached."""

    required_arguments = 1
    has_content = True

    def run(self) -> list[nodes.Node]:
        ident = self.arguments[0]
        framework, _slash, name = ident.partition("/")
        try:
            recording = recording_for(self.env, framework, name)
            stamps = runs_shown(recording.stamp, load_runs(recording))
        except RecordingError as err:
            raise self.error(f"{ident}: {err}") from err
        self.env.note_dependency(str(recording.example.recording))
        self.env.note_dependency(str(recording.example.runs))
        if len(stamps) < MIN_MODELS:
            raise self.error(f"{ident}: every kept run comes from one GPU model ({gpu_model(stamps[0])}), but "
                             f"this table needs two; on the other GPU, record its run with: {SECOND_GPU}")
        try:
            rows = [self.row(line, stamps) for line in self.content]
        except (RecordingError, ValueError, SyntaxError, TypeError) as err:
            raise self.error(f"{ident}: {err}") from err
        headers = [_("Figure")] + [_("Measured"), _("Limit"), _("Of the limit")] * len(stamps)
        groups = [("", 1)] + [(gpu_model(stamp), 3) for stamp in stamps]
        table = text_table("gpu-comparison", headers, (5,) + (2, 2, 2) * len(stamps), rows, groups)
        note = nodes.paragraph(text=_("The run the pages show, then each other GPU model's newest (UTC):"),
                               classes=["gpu-comparison-runs"])
        runs = nodes.bullet_list()
        for stamp in stamps:
            runs += nodes.list_item("", nodes.paragraph(
                text=f"{recorded_when(stamp, self.env.config.language, minute=True)}, {machine_text(stamp['machine'])}"))
        return [nodes.container("", table, note, runs, classes=["gpu-comparison"])]

    def row(self, line: str, stamps: list[dict]) -> list[str]:
        """A line's cells: its label, then each run's figure, limit and fraction of the limit."""
        fields = [field.strip() for field in line.split("|")]
        if len(fields) not in (2, 4) or not all(fields):
            raise ValueError(f"write each line as 'label | key:format' or 'label | key:format | limit key | "
                             f"fraction key', not {line!r}")
        label, value, *limit = fields
        key, _colon, spec = value.partition(":")
        cells = [label]
        for stamp in stamps:
            cells.append(self.number(glued(stamp, key), spec))
            if limit:
                cells += [self.number(glued(stamp, limit[0]), spec), self.number(glued(stamp, limit[1]), ".0%")]
            else:
                cells += [NO_FIGURE, NO_FIGURE]
        return cells

    def number(self, value, spec: str) -> str:
        """A value formatted by ``spec`` in the book's language, without its unit (the label names it); a
        dash for a figure the run did not measure."""
        if value is None:
            return NO_FIGURE
        return scaled_number(value, spec, self.env.config.language)[0]


def setup(app: Sphinx) -> dict:
    app.add_directive("gpu-comparison", GpuComparison)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
