"""Show cells of the example scripts, with their recorded outputs, in PyTorch/MXNet tabs.

    .. example:: auto_parallelism
       :cells: devices-alone devices-together
       :alt: Alt text for the charts these cells draw.

    .. example:: auto_parallelism
       :cells: timeline-devices
       :hide-code:
       :alt: ...

    .. helper:: benchmark

    The run took :measured:`pytorch/auto_parallelism::t_together:.3f` seconds.
    Python issued a step in :measured:`pytorch/async_computation::t_step_issue:.1f µs`.
    Its fastest run took :measured:`pytorch/auto_parallelism::t_together_spread[0]:.3f` seconds.

The code comes from the recording, which is checked against the script it was made from, so the page
never shows code that differs from ``examples/``. A stale or missing recording fails the build.
``:hide-code:`` shows only the outputs (harness cells). ``helper`` shows a function of the helpers that the
shown cells import, in both frameworks' tabs. A page's first tab of each example and framework
carries the stamp and two downloads (``downloads.py``): a zip that runs from an empty folder, and the
executed notebook.
The Turkish book writes measured numbers with a decimal comma, and shows the code's comments and
docstrings in Turkish (``code_comments.py``); a shown comment without a translation fails the build.
"""

from __future__ import annotations

import ast
import base64
import os
import re
import textwrap
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.locale import _
from sphinx.util.docutils import SphinxDirective, SphinxRole

from code_comments import SOURCE_LANGUAGE, TranslationError, catalog_path, translate
from downloads import DownloadError, download_files
from recordings import (FRAMEWORK_TITLES, FRAMEWORKS, Example, RecordingError, all_examples, load_recording,
                        recorded_when)


def recording_for(env, framework: str, name: str):
    """Load (once per build) the recording of an example, and make pages depend on its files."""
    cache = env.app.__dict__.setdefault("_example_recordings", {})
    examples_dir = Path(env.app.config.examples_dir)
    key = (framework, name)
    if key not in cache:
        cache[key] = load_recording(Example.parse(examples_dir, f"{framework}/{name}"))
    return cache[key]


# A number as Python formats it in English: digits perhaps grouped by commas, perhaps a decimal part.
ENGLISH_NUMBER = re.compile(r"(\d[\d,]*)(\.\d+)?")


def local_number(text: str, language: str) -> str:
    """The numbers of a formatted text as the book's language writes them. Turkish has a decimal comma
    and groups thousands with a dot from five digits on only: 4096 and 1234,5, but 12.345,6 (English
    4,096, 1,234.5 and 12,345.6), whether or not the format grouped them; a percent sign goes before
    the number (%88 for 88%)."""
    def turkish(number: re.Match) -> str:
        whole = number.group(1).replace(",", "")
        if len(whole) >= 5:
            whole = re.sub(r"(?<=\d)(?=(\d{3})+$)", ".", whole)
        return whole + (number.group(2) or "").replace(".", ",")

    if language != "tr":
        return text
    return re.sub(r"([\d.,]+)%", r"%\1", ENGLISH_NUMBER.sub(turkish, text))


def devices_used(stamp: dict) -> list[str]:
    return ast.literal_eval(stamp["glue"]["devices"])


def machine_text(machine: dict) -> str:
    """The recording machine's GPUs and CPU, e.g. ``1 × NVIDIA H200; Intel(R) Xeon(R) (16 threads)``."""
    gpus = machine["gpus"]
    gpu_text = f"{len(gpus)} × {gpus[0]}" if gpus and len(set(gpus)) == 1 else ", ".join(gpus)
    cpu_text = _("%(cpu)s (%(threads)d threads)") % {"cpu": machine["cpu"], "threads": machine["cpu_threads"]}
    return "; ".join(p for p in (gpu_text, cpu_text) if p)


def versions_text(versions: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in versions.items())


def stamp_text(stamp: dict, language: str = "en") -> str:
    """One line that says where and when the outputs above were produced (numbers as ``language``
    writes them)."""
    parts = [
        _("Recorded %s") % recorded_when(stamp, language),
        _("ran on: %s") % ", ".join(devices_used(stamp)),
        _("machine: %s") % machine_text(stamp["machine"]),
        versions_text(stamp["versions"]),
        _("%s s") % local_number(f"{stamp['runtime_s']:.1f}", language),
        _("source %s") % stamp["source_sha256"][:10],
    ]
    if stamp.get("example_args"):
        parts.append(_("options: %s") % stamp["example_args"])
    return " · ".join(parts)


def chosen_outputs(cell: dict, language: str) -> list[dict]:
    """The outputs of a cell that the book in ``language`` shows: a figure drawn for one language
    (output metadata ``book_language``) appears only in that language's book."""
    return [o for o in cell.get("outputs", []) if o.get("metadata", {}).get("book_language", language) == language]


IMAGE_TYPES = ("image/svg+xml", "image/png")


def image_rst(data: dict, alt: str) -> list[str]:
    """An inline figure: SVG when the run drew one, else PNG."""
    kind = next(k for k in IMAGE_TYPES if k in data)
    payload = data[kind]
    if kind == "image/svg+xml":
        text = payload if isinstance(payload, str) else "".join(payload)
        payload = base64.b64encode(text.encode("utf-8")).decode("ascii")
    payload = payload.replace("\n", "")
    name = kind.split("/")[1].split("+")[0]
    return [f".. image:: data:{kind};base64,{payload}", f"   :alt: {alt}",
            f"   :class: example-image example-{name}", ""]


def cell_rst(cell: dict, alt: str, language: str, show_code: bool = True) -> list[str]:
    """The rST for one cell: its code (unless hidden) with its comments in this language, then each of
    its outputs in this language. A hidden cell that draws shows its drawings only: what it prints
    is no line of the page's program (a shown cell prints what the page quotes)."""
    lines = []
    if show_code:
        lines = [".. code-block:: python", "   :class: example-code", ""]
        lines += textwrap.indent(translate("".join(cell["source"]), language, strict=True), "   ").splitlines() + [""]
    outputs = chosen_outputs(cell, language)
    if not show_code and any(k in o.get("data", {}) for o in outputs for k in IMAGE_TYPES):
        outputs = [o for o in outputs if any(k in o.get("data", {}) for k in IMAGE_TYPES)]
    for output in outputs:
        kind = output["output_type"]
        data = output.get("data", {})
        if kind == "stream":
            text = "".join(output["text"])
        elif kind == "error":
            raise RecordingError("a recording holds an error output; the execute build should have failed")
        elif any(k in data for k in IMAGE_TYPES):
            lines += image_rst(data, alt)
            continue
        elif "text/plain" in data:
            text = "".join(data["text/plain"])
        else:
            continue
        if text.strip():
            lines += [".. code-block:: none", "   :class: example-output", ""]
            lines += textwrap.indent(text.rstrip("\n"), "   ").splitlines() + [""]
    return lines


class ExampleDirective(SphinxDirective):
    """Framework tabs holding the chosen cells of one example, with outputs and a recording stamp.

    The first time a page shows an example of a framework, the tab carries the full stamp and the
    downloads; later tabs of the same example on that page carry neither.
    ``:hide-code:`` shows the cells' outputs without their code (harness cells). ``:frameworks:``
    names the tabs to show, for cells that can run in one framework only (GPU-only cells next to
    an MXNet that has no GPU); the page's prose says why the other tab is missing.
    """

    required_arguments = 1
    option_spec = {"cells": directives.unchanged_required, "alt": directives.unchanged,
                   "hide-code": directives.flag, "frameworks": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        tags = self.options.get("cells", "").split()
        if not tags:
            raise self.error(f"example {name}: give the cells to show with :cells:")
        alt = self.options.get("alt", "")
        show_code = "hide-code" not in self.options
        language = self.env.config.language
        seen = self.env.temp_data.setdefault("examples_shown", set())
        frameworks = self.options.get("frameworks", " ".join(FRAMEWORKS)).split()
        if not frameworks or set(frameworks) - set(FRAMEWORKS):
            raise self.error(f"example {name}: :frameworks: takes some of {', '.join(FRAMEWORKS)}, "
                             f"not {' '.join(frameworks) or 'nothing'}")
        lines = [".. tab-set::", "   :sync-group: framework", "   :class: example-tabs", ""]
        shows_something = False
        for framework in [f for f in FRAMEWORKS if f in frameworks]:
            try:
                recording = recording_for(self.env, framework, name)
                body = [line for tag in tags for line in cell_rst(recording.cell(tag), alt, language, show_code)]
                if any(line.startswith(".. image::") for line in body) and not alt:
                    raise RecordingError(f"cells {' '.join(tags)} draw images: give them :alt: text")
            except (RecordingError, TranslationError) as err:
                raise self.error(f"example {framework}/{name}: {err}") from None
            shows_something = shows_something or bool(body)
            for path in recording.example.sources() + [recording.example.recording]:
                self.env.note_dependency(str(path))
            note_catalog_dependency(self.env)
            if not body:  # hidden cells that print nothing in this framework: say so, not an empty tab
                body = [".. rst-class:: example-nothing", "",
                        _("The %s version prints nothing here.") % FRAMEWORK_TITLES[framework], ""]
            if (framework, name) not in seen:
                body += self.stamp_rst(recording)
                seen.add((framework, name))
            lines += [f"   .. tab-item:: {FRAMEWORK_TITLES[framework]}", f"      :sync: {framework}", ""]
            lines += textwrap.indent("\n".join(body), "      ").splitlines() + [""]
        if not shows_something:
            raise self.error(f"example {name}: cells {' '.join(tags)} print nothing in either framework, and "
                             ":hide-code: hides their code; leave them off the page")
        container = nodes.container(classes=["example"])
        self.state.nested_parse(StringList(lines, source=self.get_source_info()[0]), self.content_offset, container)
        return [container]

    def stamp_rst(self, recording) -> list[str]:
        """The full stamp of a recording and its two downloads."""
        stamp = recording.stamp
        here = Path(self.env.doc2path(self.env.docname)).parent
        self.env.note_dependency(self.env.config.download_pins_from)  # the zip's requirements.txt
        try:
            downloads = download_files(self.env, recording)
        except DownloadError as err:
            raise self.error(f"example {recording.example.ident}: {err}") from None
        links = [f":download:`{_('Download %s') % path.name} <{os.path.relpath(path, here)}>`"
                 for path in downloads]
        return [".. recording-stamp::", "", f"   {stamp_text(stamp, self.env.config.language)}", "",
                ".. rst-class:: example-download", "", " · ".join(links), ""]


def note_catalog_dependency(env) -> None:
    """Rebuild a page that shows code when the catalog of its comments changes."""
    if env.config.language != SOURCE_LANGUAGE:
        env.note_dependency(str(catalog_path(env.config.language)))


def helper_source(examples_dir: Path, framework: str, name: str) -> str:
    """The source of the function ``name`` in a framework's helpers.py, as the file writes it."""
    path = examples_dir / framework / "helpers.py"
    source = path.read_text(encoding="utf-8")
    found = [node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef) and node.name == name]
    if not found:
        raise RecordingError(f"{path} defines no function {name}")
    return ast.get_source_segment(source, found[0])


class HelperDirective(SphinxDirective):
    """One function of the helpers the shown cells import, from ``examples/<framework>/helpers.py``
    itself (``.. helper:: benchmark``): the page shows the code that runs, and the program of the page
    imports it; its comments in the book's language. Framework tabs where the frameworks' versions
    differ; one listing, said to be the same in both, where they do not."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        examples_dir = Path(self.env.config.examples_dir)
        sources = {}
        for framework in FRAMEWORKS:
            try:
                sources[framework] = translate(helper_source(examples_dir, framework, name),
                                               self.env.config.language, strict=True)
            except (RecordingError, TranslationError) as err:
                raise self.error(f"helper {framework}/{name}: {err}") from None
            self.env.note_dependency(str(examples_dir / framework / "helpers.py"))
        note_catalog_dependency(self.env)
        if len(set(sources.values())) == 1:
            caption = _("%s in helpers.py, the same in both frameworks, which the program imports") % f"``{name}``"
            lines = self.listing(caption, sources[FRAMEWORKS[0]])
        else:
            caption = _("%s in helpers.py, which the program imports") % f"``{name}``"
            lines = [".. tab-set::", "   :sync-group: framework", "   :class: example-tabs", ""]
            for framework, source in sources.items():
                lines += [f"   .. tab-item:: {FRAMEWORK_TITLES[framework]}", f"      :sync: {framework}", ""]
                lines += textwrap.indent("\n".join(self.listing(caption, source)), " " * 6).splitlines() + [""]
        container = nodes.container(classes=["helper"])
        self.state.nested_parse(StringList(lines, source=self.get_source_info()[0]), self.content_offset, container)
        return [container]

    @staticmethod
    def listing(caption: str, source: str) -> list[str]:
        return [".. code-block:: python", "   :class: helper-code", "   :caption: " + caption, "",
                *textwrap.indent(source, " " * 3).splitlines(), ""]


class RecordingStampDirective(SphinxDirective):
    """The stamp of a recorded run: a paragraph of class ``recording-stamp``."""

    has_content = True

    def run(self) -> list[nodes.Node]:
        holder = nodes.Element()
        self.state.nested_parse(self.content, self.content_offset, holder)
        stamp = holder[0]
        stamp["classes"].append("recording-stamp")
        return [stamp]




# A time in seconds may be shown in a smaller unit: ``key:.1f µs`` scales it and names the unit, with
# the same symbol in both books (s, as the programs print it).
TIME_UNITS = {"s": 1.0, "ms": 1e3, "µs": 1e6}


def scaled_number(value, spec: str, language: str) -> tuple[str, str]:
    """A glued value formatted by ``spec``, a format spec optionally followed by a space and a time
    unit (the value is in seconds, shown in that unit), with numbers in the book's language; and the
    unit ("" without one)."""
    spec, _space, unit = spec.partition(" ")
    if unit and unit not in TIME_UNITS:
        raise ValueError(f"unknown unit {unit!r}; write one of {', '.join(TIME_UNITS)}")
    if unit and not isinstance(value, (int, float)):
        raise TypeError(f"a unit needs a number of seconds, not {value!r}")
    text = format(value * TIME_UNITS[unit] if unit else value, spec) if spec else str(value)
    if isinstance(value, (int, float)):
        text = local_number(text, language)
    return text, unit


def format_measured(value, spec: str, language: str) -> str:
    """A glued value as the prose shows it (``scaled_number``), followed by its time unit if any."""
    text, unit = scaled_number(value, spec, language)
    return f"{text}\N{NO-BREAK SPACE}{unit}" if unit else text


# A glued key, or one item of a glued list (a time's fastest and slowest run: ``t_run_spread[0]``).
ITEM = re.compile(r"(?P<key>\w+)(?:\[(?P<index>\d+)\])?")


class MeasuredRole(SphinxRole):
    """A value glued by an example's recorded run: ``framework/script::key[:format[ unit]]``, where
    ``key`` may be ``key[i]``, the i-th item of a glued list."""

    def run(self):
        ident, sep, rest = self.text.partition("::")
        key, _colon, spec = rest.partition(":")
        framework, _slash, name = ident.partition("/")
        indexed = ITEM.fullmatch(key)
        try:
            if not sep or not indexed:
                raise RecordingError("write it as framework/script::key[:format], e.g. pytorch/auto_parallelism::t_run:.3f"
                                     ", or key[i] for an item of a list, e.g. t_run_spread[0]")
            raw = recording_for(self.env, framework, name).value(indexed["key"])
            value = ast.literal_eval(raw)
            if indexed["index"] is not None:
                value = value[int(indexed["index"])]
            if value is None:
                raise RecordingError("the recorded run did not measure it (None); the prose must not quote it")
            text = format_measured(value, spec, self.env.config.language)
        except (RecordingError, ValueError, SyntaxError, TypeError, IndexError) as err:
            msg = self.inliner.reporter.error(f"measured value {self.text!r}: {err}", line=self.lineno)
            return [self.inliner.problematic(self.rawtext, self.rawtext, msg)], [msg]
        return [nodes.inline(text, text, classes=["measured"])], []


def check_all_recordings(app: Sphinx) -> None:
    """Fail early, listing every example whose recording is missing or stale."""
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
    app.add_config_value("conf_sources_sha256", "", "env")  # conf.py: pages are read again when it changes
    # What the downloads' requirements.txt pins, and the Pythons their README names (downloads.py).
    app.add_config_value("download_pins_from", None, "env")
    app.add_config_value("download_pins_since", {}, "env")
    app.add_config_value("download_pythons", [], "env")
    app.add_directive("example", ExampleDirective)
    app.add_directive("helper", HelperDirective)
    app.add_directive("recording-stamp", RecordingStampDirective)
    app.add_role("measured", MeasuredRole())
    app.connect("builder-inited", check_all_recordings)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
