"""Show cells of the example scripts, with their recorded outputs, in PyTorch/MXNet tabs.

    .. example:: auto_parallelism
       :cells: devices-alone devices-together
       :alt: Alt text for the charts these cells draw.

    The run took :measured:`pytorch/auto_parallelism::t_together:.3f` seconds.

The code comes from the recording, which is checked against the script it was made from, so the page
never shows code that differs from ``examples/``. A stale or missing recording fails the build.
"""

from __future__ import annotations

import ast
import os
import textwrap
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util.docutils import SphinxDirective, SphinxRole

from recordings import FRAMEWORK_TITLES, FRAMEWORKS, Example, RecordingError, load_recording


def recording_for(env, framework: str, name: str):
    """Load (once per build) the recording of an example, and make pages depend on its files."""
    cache = env.app.__dict__.setdefault("_example_recordings", {})
    examples_dir = Path(env.app.config.examples_dir)
    key = (framework, name)
    if key not in cache:
        cache[key] = load_recording(Example.parse(examples_dir, f"{framework}/{name}"))
    return cache[key]


def stamp_text(stamp: dict) -> str:
    """One line that says where and when the outputs above were produced."""
    machine = stamp["machine"]
    gpus = machine["gpus"]
    gpu_text = f"{len(gpus)} × {gpus[0]}" if gpus and len(set(gpus)) == 1 else ", ".join(gpus)
    used = ", ".join(ast.literal_eval(stamp["glue"]["devices"]))
    versions = ", ".join(f"{k} {v}" for k, v in stamp["versions"].items())
    parts = [
        _("Recorded %s") % stamp["recorded_at"][:10],
        _("ran on: %s") % used,
        _("machine: %s") % "; ".join(p for p in (gpu_text, f"{machine['cpu']} ({machine['cpu_threads']} threads)") if p),
        versions,
        _("%.1f s") % stamp["runtime_s"],
        _("source %s") % stamp["source_sha256"][:10],
    ]
    if stamp.get("example_args"):
        parts.append(_("options: %s") % stamp["example_args"])
    return " · ".join(parts)


def cell_rst(cell: dict, alt: str) -> list[str]:
    """The rST for one cell: its code, then each of its outputs."""
    lines = [".. code-block:: python", "   :class: example-code", ""]
    lines += textwrap.indent("".join(cell["source"]), "   ").splitlines() + [""]
    for output in cell.get("outputs", []):
        kind = output["output_type"]
        if kind == "stream":
            text = "".join(output["text"])
        elif kind == "error":
            raise RecordingError("a recording holds an error output; the execute build should have failed")
        elif "image/png" in output.get("data", {}):
            data = output["data"]["image/png"].replace("\n", "")
            lines += [f".. image:: data:image/png;base64,{data}", f"   :alt: {alt}", "   :class: example-image", ""]
            continue
        elif "text/plain" in output.get("data", {}):
            text = "".join(output["data"]["text/plain"])
        else:
            continue
        if text.strip():
            lines += [".. code-block:: none", "   :class: example-output", ""]
            lines += textwrap.indent(text.rstrip("\n"), "   ").splitlines() + [""]
    return lines


class ExampleDirective(SphinxDirective):
    """Framework tabs holding the chosen cells of one example, with outputs and a recording stamp."""

    required_arguments = 1
    option_spec = {"cells": directives.unchanged_required, "alt": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        tags = self.options.get("cells", "").split()
        if not tags:
            raise self.error(f"example {name}: give the cells to show with :cells:")
        alt = self.options.get("alt", "")
        lines = [".. tab-set::", "   :sync-group: framework", "   :class: example-tabs", ""]
        for framework in FRAMEWORKS:
            try:
                recording = recording_for(self.env, framework, name)
                body = [line for tag in tags for line in cell_rst(recording.cell(tag), alt)]
                if any(line.startswith(".. image::") for line in body) and not alt:
                    raise RecordingError(f"cells {' '.join(tags)} draw images: give them :alt: text")
            except RecordingError as err:
                raise self.error(f"example {framework}/{name}: {err}") from None
            for path in recording.example.sources() + [recording.example.recording]:
                self.env.note_dependency(str(path))
            script = recording.example.script
            relative = os.path.relpath(script, Path(self.env.doc2path(self.env.docname)).parent)
            body += [".. rst-class:: recording-stamp", "", stamp_text(recording.stamp), "",
                     ".. rst-class:: example-download", "",
                     f":download:`{_('Download %s') % script.name} <{relative}>`", ""]
            lines += [f"   .. tab-item:: {FRAMEWORK_TITLES[framework]}", f"      :sync: {framework}", ""]
            lines += textwrap.indent("\n".join(body), "      ").splitlines() + [""]
        container = nodes.container(classes=["example"])
        self.state.nested_parse(StringList(lines, source=self.get_source_info()[0]), self.content_offset, container)
        return [container]


class MeasuredRole(SphinxRole):
    """A value glued by an example's recorded run: ``framework/script::key[:format]``."""

    def run(self):
        ident, sep, rest = self.text.partition("::")
        key, _colon, spec = rest.partition(":")
        framework, _slash, name = ident.partition("/")
        try:
            if not sep or not key:
                raise RecordingError("write it as framework/script::key[:format], e.g. pytorch/auto_parallelism::t_run:.3f")
            raw = recording_for(self.env, framework, name).value(key)
            value = ast.literal_eval(raw)
            if value is None:
                raise RecordingError("the recorded run did not measure it (None); the prose must not quote it")
            text = format(value, spec) if spec else str(value)
        except (RecordingError, ValueError, SyntaxError, TypeError) as err:
            msg = self.inliner.reporter.error(f"measured value {self.text!r}: {err}", line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        return [nodes.inline(text, text, classes=["measured"])], []


def check_all_recordings(app: Sphinx) -> None:
    """Fail early, listing every example whose recording is missing or stale."""
    from recordings import all_examples

    problems = []
    for example in all_examples(Path(app.config.examples_dir)):
        try:
            load_recording(example)
        except RecordingError as err:
            problems.append(str(err))
    if problems:
        raise ExtensionError("recordings are not current:\n  " + "\n  ".join(problems))


def setup(app: Sphinx) -> dict:
    app.add_config_value("examples_dir", None, "env")
    app.add_directive("example", ExampleDirective)
    app.add_role("measured", MeasuredRole())
    app.connect("builder-inited", check_all_recordings)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
