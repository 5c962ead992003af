"""What a reader sees in the built books (``make test`` builds them first into _build/html)."""

from __future__ import annotations

import ast
import base64
import functools
import platform
import re
import shutil
from importlib import metadata
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from book_facts import ExampleUse, tree_facts
from built_links import broken_links
from code_comments import translate
from recordings import FRAMEWORK_TITLES, FRAMEWORKS, Example, load_recording, recorded_when
from tiny_books import build_tiny_book, built_index_pages

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
LANGUAGES = ("en", "tr")
PAGES = {lang: tree_facts(ROOT / "docs" / lang) for lang in LANGUAGES}


def soup(lang: str, page: str) -> BeautifulSoup:
    path = HTML / lang / page.replace(".rst", ".html")
    if not path.exists():
        pytest.fail(f"{path} is missing: build the books with 'make html' (make test does it first)")
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def normalised(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def image_src(data: dict) -> str:
    """The ``src`` of the inline image a reader sees for an output that holds a figure (SVG first)."""
    if "image/svg+xml" in data:
        svg = data["image/svg+xml"]
        payload = base64.b64encode(("".join(svg) if isinstance(svg, list) else svg).encode()).decode()
        return f"data:image/svg+xml;base64,{payload}"
    return "data:image/png;base64," + "".join(data["image/png"]).replace("\n", "")


def output_blocks(cell: dict, lang: str) -> list[tuple[str, str]]:
    """The blocks a reader of the ``lang`` book must see for a cell's outputs, in their order: each text
    output that is not blank, and each figure (one drawn for another language, output metadata
    ``book_language``, shows only in that language's book)."""
    blocks = []
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if output.get("metadata", {}).get("book_language", lang) != lang:
            continue
        if output["output_type"] == "stream":
            text = "".join(output["text"])
        elif {"image/png", "image/svg+xml"} & set(data):
            blocks.append(("image", image_src(data)))
            continue
        else:
            text = "".join(data.get("text/plain", ""))
        if text.strip():
            blocks.append(("output", normalised(text)))
    return blocks


@functools.cache
def script_cells(framework: str, name: str) -> dict[str, str]:
    """The code of each tagged cell of an example script, read as the record step reads it (jupytext's
    percent format): a page is compared with the script, not with a recording that may have been edited."""
    import jupytext

    notebook = jupytext.read(ROOT / "examples" / framework / f"{name}.py", fmt="py:percent")
    cells: dict[str, str] = {}
    for cell in notebook.cells:
        for tag in cell.metadata.get("tags", []):
            cells.setdefault(tag, cell.source)
    return cells


def expected_blocks(use: ExampleUse, framework: str, lang: str, first_use: bool) -> list[tuple[str, str]]:
    """What one framework's tab of an example must show, top to bottom: for each cell in the order the
    page names them, its code as the script has it, comments in the book's language (unless
    :hide-code:), then that cell's own recorded
    outputs (of a hidden cell that draws, its drawings only); a note when the tab would show nothing else;
    on the page's first use of the example in this framework, the stamp and then the downloads."""
    recording = load_recording(Example.parse(ROOT / "examples", f"{framework}/{use.name}"))
    blocks = []
    for tag in use.cells:
        if not use.hide_code:
            blocks.append(("code", normalised(translate(script_cells(framework, use.name)[tag], lang, strict=True))))
        outputs = output_blocks(recording.cell(tag), lang)
        if use.hide_code and any(kind == "image" for kind, _ in outputs):
            outputs = [(kind, what) for kind, what in outputs if kind == "image"]
        blocks += outputs
    if not blocks:
        blocks.append(("nothing", ""))
    return blocks + ([("stamp", ""), ("downloads", "")] if first_use else [])


# The classes of the blocks in a framework tab, and what each block is (the texts of the stamp, the
# downloads and the note are checked by the tests below).
BLOCK_CLASSES = {"example-code": "code", "example-output": "output", "example-image": "image",
                 "example-nothing": "nothing", "recording-stamp": "stamp", "example-download": "downloads"}


def shown_blocks(panel) -> list[tuple[str, str]]:
    """The blocks of a tab as the reader sees them, top to bottom: (kind, its code or output text, or the
    image's src)."""
    blocks = []
    for element in panel.select(", ".join(f".{name}" for name in BLOCK_CLASSES)):
        kind = next(BLOCK_CLASSES[name] for name in element["class"] if name in BLOCK_CLASSES)
        content = {"code": normalised(element.get_text()), "output": normalised(element.get_text()),
                   "image": element.get("src", "")}.get(kind, "")
        blocks.append((kind, content))
    return blocks


def first_difference(expected: list[tuple[str, str]], shown: list[tuple[str, str]]) -> str:
    """Where a tab's blocks first differ from what it must show, in a few words."""
    def brief(blocks, index):
        return f"{blocks[index][0]} {blocks[index][1][:70]!r}" if index < len(blocks) else "nothing"

    index = next(i for i in range(max(len(expected), len(shown))) if expected[i:i + 1] != shown[i:i + 1])
    return f"block {index + 1} is {brief(shown, index)}, not {brief(expected, index)}"


def example_problems(block, use: ExampleUse, lang: str, seen: set, where: str) -> list[str]:
    """How an example's tabs differ from what they must show: the tabs the page names, each under its own
    framework's label, each holding its cells' code and outputs in order (``expected_blocks``). ``seen``
    holds the (framework, example) pairs shown earlier on the page; this example's are added."""
    frameworks = [f for f in FRAMEWORKS if not use.frameworks or f in use.frameworks]
    labels = block.select("label.sd-tab-label")
    titles = [(label.get_text(strip=True), label.get("data-sync-id")) for label in labels]
    if titles != [(FRAMEWORK_TITLES[f], f) for f in frameworks]:
        return [f"{where}: {use.name} {' '.join(use.cells)} has the tabs {titles}, not {frameworks}"]
    problems = []
    for framework, label in zip(frameworks, labels):
        panel = label.find_next_sibling(class_="sd-tab-content")
        expected = expected_blocks(use, framework, lang, (framework, use.name) not in seen)
        seen.add((framework, use.name))
        shown = shown_blocks(panel)
        if shown != expected:
            problems.append(f"{where}: the {framework} tab of {use.name} {' '.join(use.cells)}: "
                            f"{first_difference(expected, shown)}")
        if not all(img.get("alt", "").strip() for img in panel.select("img.example-image")):
            problems.append(f"{where}: the {framework} tab of {use.name}: an image has no alt text")
    return problems


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_is_built_in_its_language_without_unresolved_references(lang: str):
    """Each source page becomes an HTML page in its language, with no broken reference or markup."""
    for page in PAGES[lang]:
        html = soup(lang, page)
        assert html.html["lang"] == lang, page
        assert not html.select(".problematic, .system-message"), f"{lang}/{page} has broken markup"
        assert "??" not in html.get_text(), f"{lang}/{page} has an unresolved numbered reference"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_tab_shows_each_cells_code_from_the_script_then_its_own_outputs(lang: str):
    """Every example on every page shows, under the label of each framework it names, each cell's code as
    the script has it (not as a recording may have been edited), directly followed by that cell's recorded
    outputs and figures, in their order and in this book's language: no output above its code, under
    another cell or in the other framework's tab."""
    problems, shown = [], 0
    for page, facts in PAGES[lang].items():
        if not facts.examples:
            continue
        blocks = soup(lang, page).select("div.example")
        assert len(blocks) == len(facts.examples), f"{lang}/{page}: examples shown vs. written"
        seen: set = set()
        for block, use in zip(blocks, facts.examples):
            problems += example_problems(block, use, lang, seen, f"{lang}/{page}")
            shown += 1
    assert shown, f"the {lang} book shows no example"
    assert not problems, "\n".join(problems)


def test_the_tab_check_notices_an_output_above_its_code_and_tabs_under_the_other_label():
    """The check above fails for the breakages it exists for, made on a real page: an output moved above
    its cell's code, and the two frameworks' tab contents swapped."""
    page, use, block = next((page, use, block) for page, facts in PAGES["en"].items() if facts.examples
                            for use, block in zip(facts.examples, soup("en", page).select("div.example"))
                            if len(block.select(".sd-tab-content")) == 2
                            and block.select_one(".example-code + .example-output"))
    assert not example_problems(block, use, "en", set(), page), f"{page} is broken before the test breaks it"
    output = block.select_one(".example-code + .example-output")
    code = output.find_previous_sibling(class_="example-code")
    code.insert_before(output.extract())
    assert example_problems(block, use, "en", set(), page), "an output above its code passed"
    code.insert_after(output.extract())
    assert not example_problems(block, use, "en", set(), page), "the output did not go back"
    panels = block.select(".sd-tab-content")
    contents = [list(panel.children) for panel in panels]
    for panel, children in zip(panels, reversed(contents)):
        panel.clear()
        panel.extend(children)
    assert example_problems(block, use, "en", set(), page), "tabs under the other framework's label passed"


# The words of a stamp in each book, as the reader sees them.
THREADS = {"en": "{} threads", "tr": "{} iş parçacığı"}
SECONDS = {"en": "{} s", "tr": "{} s"}


def decimal(text: str, lang: str) -> str:
    """An English number as the Turkish book writes it: a decimal comma, a dot between thousands only
    from five digits on (1234,5 but 12.345,6), and the percent sign first (%88)."""
    if lang != "tr":
        return text
    text = re.sub(r"(?<![\d.])(\d),(\d{3})(?![\d,])", r"\1\2", text)  # four digits: no separator
    text = re.sub(r"(?<![\d.,])\d{5,}", lambda m: f"{int(m.group()):,}", text)  # five or more: grouped
    return re.sub(r"([\d.,]+)%", r"%\1", text.translate(str.maketrans(".,", ",.")))


def expected_stamp_parts(stamp: dict, lang: str) -> list[str]:
    """Every field that a full stamp shows: date, devices used, machine, versions, run time, source, options."""
    machine = stamp["machine"]
    parts = [recorded_when(stamp, lang), *ast.literal_eval(stamp["glue"]["devices"]), *machine["gpus"],
             machine["cpu"], THREADS[lang].format(machine["cpu_threads"]),
             *(f"{name} {version}" for name, version in stamp["versions"].items()),
             SECONDS[lang].format(decimal(f"{stamp['runtime_s']:.1f}", lang)), stamp["source_sha256"][:10]]
    return parts + ([stamp["example_args"]] if stamp.get("example_args") else [])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_full_stamp_and_downloads_once_per_example_and_framework_later_tabs_carry_nothing(lang: str):
    """On each page, an example's first tab of each framework carries the full stamp and the downloads;
    later tabs of that example on the page carry no stamp, no short mark and no downloads."""
    checked = 0
    for page, facts in PAGES[lang].items():
        html = soup(lang, page)
        seen = set()
        for block, use in zip(html.select("div.example"), facts.examples):
            for framework, panel in zip(FRAMEWORKS, block.select(".sd-tab-content")):
                where = f"{lang}/{page} {framework}/{use.name} {use.cells}"
                stamps = panel.select(".recording-stamp")
                downloads = panel.select("a.download")
                assert not panel.select("details, .recording-mark"), f"{where}: a folded short mark"
                if (framework, use.name) in seen:
                    assert not stamps and not downloads, \
                        f"{where}: a later tab repeats {len(stamps)} stamps and {len(downloads)} downloads"
                    continue
                seen.add((framework, use.name))
                assert len(stamps) == 1 and len(downloads) == 2, \
                    f"{where}: first use with {len(stamps)} stamps and {len(downloads)} downloads"
                stamp = load_recording(Example.parse(ROOT / "examples", f"{framework}/{use.name}")).stamp
                text = stamps[0].get_text(" ", strip=True)
                missing = [part for part in expected_stamp_parts(stamp, lang) if part not in text]
                assert not missing, f"{where}: the stamp {text!r} lacks {missing}"
                checked += 1
        shown = len(html.select("div.example .recording-stamp"))
        assert shown == len(seen), f"{lang}/{page}: {shown} stamps for {len(seen)} examples and frameworks"
    assert checked, f"the {lang} book shows no example"


def test_recordings_name_only_devices_the_machine_has():
    """A recording that says it used a GPU names one of its machine's GPUs; MXNet 1.9.1 has no CUDA build
    for the recorded GPU, so every MXNet recording used CPU contexts only."""
    for example in _examples():
        stamp = load_recording(example).stamp
        used = ast.literal_eval(stamp["glue"]["devices"])
        assert used, f"{example.ident} names no device"
        for device in used:
            if device.startswith(("cuda", "gpu")):
                assert any(gpu in device for gpu in stamp["machine"]["gpus"]), f"{example.ident}: {device}"
        if example.framework == "mxnet":
            assert all(device.startswith("cpu(") for device in used), f"{example.ident} ran on {used}"


def test_every_recording_holds_its_scripts_cells():
    """A recording's cells are its script's cells, as jupytext reads it: the same kinds, tags and code, in
    order. The source hash covers the script, not the recording, so a hand-edited cell keeps it."""
    import jupytext

    for example in _examples():
        script = [(cell.cell_type, cell.metadata.get("tags", []), cell.source)
                  for cell in jupytext.read(example.script, fmt="py:percent").cells]
        recorded = [(cell["cell_type"], cell.get("metadata", {}).get("tags", []), "".join(cell["source"]))
                    for cell in load_recording(example).notebook["cells"]]
        changed = [f"{kind} {tags}" for (kind, tags, source), other in zip(recorded, script)
                   if (kind, tags, source) != other]
        assert len(recorded) == len(script) and not changed, \
            f"{example.ident}: the recording's cells differ from the script's ({changed or 'their number'}); " \
            f"record it again: {example.refresh_command()}"


def test_recorded_outputs_show_no_python_warning():
    """A library's warning printed into a cell (cuBLAS's missing context, torch.export's buffers) shows
    the GPU machine's paths and distracts from the lesson: no recording may hold one."""
    for example in _examples():
        for cell in load_recording(example).notebook["cells"]:
            for output in cell.get("outputs", []):
                text = "".join(output.get("text", ""))
                assert not re.search(r"\w+Warning: ", text), f"{example.ident}: {text[:300]}"


MEASURED = re.compile(r":measured:`(\w+)/(\w+)::(\w+)(?:\[(\d+)\])?(?::([^`]*))?`")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_measured_values_equal_the_recordings_formatted_as_asked(lang: str):
    """Each value quoted in the prose is the recorded one, in the format its role asks for; the Turkish
    book writes it with a decimal comma."""
    quoted = 0
    for page in PAGES[lang]:
        roles = MEASURED.findall((ROOT / "docs" / lang / page).read_text(encoding="utf-8"))
        shown = [span.get_text() for span in soup(lang, page).select("span.measured")]
        assert len(shown) == len(roles), f"{lang}/{page}: {len(roles)} measured roles, {len(shown)} values shown"
        for (framework, name, key, index, spec), text in zip(roles, shown):
            value = ast.literal_eval(load_recording(Example.parse(ROOT / "examples", f"{framework}/{name}")).value(key))
            if index:
                value = value[int(index)]
            spec, _, unit = spec.partition(" ")  # a time shown in a smaller unit: ".1f µs"
            scale = {"": 1, "s": 1, "ms": 1e3, "µs": 1e6}[unit]
            expected = format(value * scale, spec) if spec else str(value)
            if isinstance(value, (int, float)):
                expected = decimal(expected, lang)
                assert not re.search(r"\de[-+]\d", expected), f"{lang}/{page}: {key} shows {expected!r}"
            if unit:
                expected += "\N{NO-BREAK SPACE}" + unit
            assert text == expected, f"{lang}/{page}: {framework}/{name}::{key}:{spec} shows {text!r}, not {expected!r}"
            quoted += 1
    assert quoted, f"the {lang} book quotes no measured value"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_figures_have_numbers_captions_and_alt_text(lang: str):
    """Each drawn figure of the chapter is numbered, captioned and described for screen readers."""
    figures = [fig for page in PAGES[lang] for fig in soup(lang, page).select("figure")]
    assert figures, f"the {lang} book has no figure"
    for fig in figures:
        assert fig.select_one("figcaption .caption-number"), fig
        assert fig.select_one("img").get("alt", "").strip(), fig


# How each book writes a citation of several authors, and an arXiv entry.
CITATION_STYLE = {"en": ("Chen et al.", " and Zheng", "arXiv preprint"),
                  "tr": ("Chen vd.", " ve Zheng", "arXiv ön baskısı")}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_citations_resolve_to_the_bibliography_in_the_books_style(lang: str):
    """The citation of Chen et al. (2015), MXNet's paper, links to its entry in the bibliography, both
    written as the book's language writes them ("vd.", "ve" and "ön baskısı" in Turkish)."""
    et_al, and_last, preprint = CITATION_STYLE[lang]
    html = soup(lang, "chapter_computational-performance/hybridize.rst")
    links = [a for a in html.select("a.reference.internal") if a.get_text(strip=True).startswith("Chen")]
    assert links, "the page does not cite Chen et al."
    for link in links:
        assert link.get_text(" ", strip=True).startswith(et_al), link.get_text()
        entry = html.find(id=link["href"].lstrip("#"))
        assert entry is not None and "heterogeneous distributed systems" in entry.get_text(), link
        text = entry.get_text(" ", strip=True)
        assert and_last in text and preprint in text, text


def test_root_page_is_a_chooser_that_never_redirects_on_a_timer():
    """The root page links both books and has no meta refresh (WCAG 2.2.1); the browser test checks
    that it follows the reader's languages with JavaScript."""
    page = BeautifulSoup((HTML / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert not page.select('meta[http-equiv="refresh" i]'), "the root page redirects on a timer"
    assert {a["href"] for a in page.select("a")} >= {"tr/index.html", "en/index.html"}


def _examples():
    from recordings import all_examples

    return all_examples(ROOT / "examples")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_execution_times_table_lists_every_recording(lang: str):
    """The execution-times page lists each example once, slowest first, with its framework, its recorded
    run time (decimal comma in Turkish) and its stamp."""
    rows = [[td.get_text(" ", strip=True) for td in row.select("td")]
            for row in soup(lang, "execution-times.rst").select("table.execution-times tbody tr")]
    expected = sorted(((load_recording(e).stamp, e) for e in _examples()), key=lambda item: -item[0]["runtime_s"])
    assert [(r[0], r[1]) for r in rows] == [(e.script.name, FRAMEWORK_TITLES[e.framework]) for _, e in expected]
    for row, (stamp, example) in zip(rows, expected):
        assert row[2] == decimal(f"{stamp['runtime_s']:.1f}", lang), f"{example.ident}: run time {row[2]!r}"
        assert stamp["source_sha256"][:10] in row[-1] and recorded_when(stamp, lang) in row[-1], row


@pytest.mark.parametrize("lang", LANGUAGES)
def test_execution_times_page_sets_the_recorded_versions_beside_the_books(lang: str):
    """The Execution Times page shows, for each library a stamp names, its versions in the recordings and
    its version in the environment that builds the book and runs the tests (requirements.txt, and the
    Python that runs Sphinx), so that torch 2.11.0 of the recording and 2.13.0+cpu here are both said."""
    table = soup(lang, "execution-times.rst").select_one("table.recorded-versions")
    assert table, f"the {lang} Execution Times page has no table of versions"
    rows = {tds[0]: tds[1:] for tds in ([td.get_text(strip=True) for td in row.select("td")]
                                        for row in table.select("tbody tr"))}
    recorded: dict[str, set[str]] = {}
    for example in _examples():
        for name, version in load_recording(example).stamp["versions"].items():
            recorded.setdefault(name, set()).add(version)
    assert set(rows) == set(recorded), f"{lang}: the table lists {sorted(rows)}, the stamps name {sorted(recorded)}"
    python = platform.python_version()
    for name, versions in recorded.items():
        here = python if name == "python" else metadata.version(name)
        assert rows[name] == [", ".join(sorted(versions)), here], f"{lang}: {name} {rows[name]}"


# The example directive on a synthetic recording
# ----------------------------------------------
# What the real book cannot show today (a hidden-code harness cell, a figure per language, an SVG),
# built from a hand-made recording in a temporary project.

SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="400" height="100"><title>en</title></svg>'
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def synthetic_project(tmp_path: Path) -> Path:
    import json
    import textwrap

    for framework in FRAMEWORKS:
        folder = tmp_path / "examples" / framework
        folder.mkdir(parents=True)
        (folder / "tiny.py").write_text("# ---\n# jupyter:\n# ---\n# %% tags=[\"queue\"]\nx = 1\n")
        (folder / "helpers.py").write_text("WHERE = 'here'\n")
    (tmp_path / "examples" / "common").mkdir()
    (tmp_path / "examples" / "common" / "__init__.py").write_text("")
    # the zips take their figures' units from the examples' own module of names (downloads.py)
    shutil.copy(ROOT / "examples" / "common" / "keys.py", tmp_path / "examples" / "common" / "keys.py")
    for framework in FRAMEWORKS:
        example = Example.parse(tmp_path / "examples", f"{framework}/tiny")
        cells = [
            {"cell_type": "code", "metadata": {"tags": ["queue"]}, "source": "x = 1\n", "outputs": [
                {"output_type": "stream", "name": "stdout", "text": "queued\n"}]},
            {"cell_type": "code", "metadata": {"tags": ["plot"]}, "source": "draw_both()\n", "outputs": [
                {"output_type": "stream", "name": "stdout", "text": "drawn\n"},
                {"output_type": "display_data", "metadata": {"book_language": "en"},
                 "data": {"image/svg+xml": SVG, "text/plain": "<Figure>"}},
                {"output_type": "display_data", "metadata": {"book_language": "tr"},
                 "data": {"image/png": PNG, "text/plain": "<Figure>"}}]},
            {"cell_type": "code", "metadata": {"tags": ["quiet"]}, "source": "publish()\n", "outputs": []},
            {"cell_type": "code", "metadata": {"tags": ["gpu-only"]}, "source": "time_copies()\n", "outputs": [
                {"output_type": "stream", "name": "stdout", "text": "copied\n"}] if framework == "pytorch" else []},
        ]
        stamp = {"source_sha256": example.source_hash(), "recorded_at": "2026-12-01T10:00:00+00:00",
                 "runtime_s": 1.25, "machine": {"gpus": [], "cpu": "Some CPU", "cpu_threads": 2},
                 "versions": {"python": "3.11.7", "torch" if framework == "pytorch" else "mxnet": "9.9.9"},
                 "example_args": "--size 64", "glue": {"devices": "['cpu']", "big": "1234.5678",
                                                            "step": "4.65e-05", "compile": "0.9067",
                                                            "spread": "[4.1e-05, 5.25e-05]"}}
        example.recording.parent.mkdir(parents=True, exist_ok=True)
        example.recording.write_text(json.dumps({"cells": cells, "metadata": {"recording": stamp},
                                                 "nbformat": 4, "nbformat_minor": 5}))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.rst").write_text(textwrap.dedent("""\
        Tiny
        ====

        Big: :measured:`pytorch/tiny::big:,.1f`. Step: :measured:`pytorch/tiny::step:.1f µs`.
        Compile: :measured:`pytorch/tiny::compile:.2f s`, slowest :measured:`pytorch/tiny::spread[1]:.1f µs`.

        .. example:: tiny
           :cells: queue

        .. example:: tiny
           :cells: plot
           :hide-code:
           :alt: A chart.

        .. example:: tiny
           :cells: gpu-only
           :hide-code:

        .. example:: tiny
           :cells: gpu-only
           :hide-code:
           :frameworks: pytorch
        """))
    return tmp_path


def edited_synthetic_build(tmp_path: Path, edit):
    """Build the English synthetic project after ``edit`` (old page text -> new); the finished process."""
    project = synthetic_project(tmp_path)
    index = project / "docs" / "index.rst"
    index.write_text(edit(index.read_text()))
    return build_tiny_book(project)


def failed_synthetic_build(tmp_path: Path, edit) -> str:
    """Build the synthetic project after ``edit``; assert that the build fails and return its stderr."""
    built = edited_synthetic_build(tmp_path, edit)
    assert built.returncode != 0, "the broken page built"
    return built.stderr


@pytest.fixture(scope="module")
def synthetic_books(tmp_path_factory) -> dict[str, BeautifulSoup]:
    return built_index_pages(synthetic_project(tmp_path_factory.mktemp("synthetic")), LANGUAGES)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_hide_code_shows_outputs_and_only_this_languages_figure(synthetic_books, lang):
    """A :hide-code: example shows its outputs without code, and of a cell that draws only its drawing
    (what that cell printed is no line of the page's program); of a figure drawn per language, each book
    shows its own (SVG in English here, PNG in Turkish); the later use of the example carries no stamp,
    no short mark and no downloads."""
    first, second, *_ = synthetic_books[lang].select("div.example")
    for panel in first.select(".sd-tab-content"):
        assert [pre.get_text() for pre in panel.select(".example-code pre")] == ["x = 1\n"]
        assert len(panel.select("a.download")) == 2 and not panel.select("details")
        stamps = [stamp.get_text() for stamp in panel.select(".recording-stamp")]
        assert len(stamps) == 1, stamps
        assert "--size 64" in stamps[0] and {"en": "1.2 s", "tr": "1,2 s"}[lang] in stamps[0], stamps[0]
    for panel in second.select(".sd-tab-content"):
        assert not panel.select(".example-code"), "a :hide-code: example shows code"
        assert [pre.get_text() for pre in panel.select(".example-output pre")] == []  # "drawn\n" printed
        images = panel.select("img.example-image")
        kind = {"en": "data:image/svg+xml;", "tr": "data:image/png;"}[lang]
        assert len(images) == 1 and images[0]["src"].startswith(kind), [i["src"][:30] for i in images]
        assert ("example-svg" in images[0]["class"]) == (lang == "en")
        assert not panel.select("a.download, .recording-stamp, details"), "a later use repeats the stamp"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_tab_whose_cells_print_nothing_says_so(synthetic_books, lang):
    """A hidden cell that prints in one framework only: the other tab says, in the book's language, that
    its version prints nothing here, instead of standing empty."""
    gpu_only = synthetic_books[lang].select("div.example")[2]
    pytorch, mxnet = gpu_only.select(".sd-tab-content")
    assert [pre.get_text() for pre in pytorch.select(".example-output pre")] == ["copied\n"]
    assert not pytorch.select(".example-nothing")
    assert not mxnet.select(".example-output")
    assert mxnet.select_one(".example-nothing").get_text(strip=True) == {
        "en": "The MXNet version prints nothing here.", "tr": "MXNet sürümü burada hiçbir şey yazdırmaz."}[lang]


def test_a_first_use_that_prints_nothing_says_so_above_its_stamp(tmp_path):
    """When the cells that print nothing in one framework are the example's first use on the page, that tab
    still says so, and carries the stamp and downloads as every first use does."""
    built = edited_synthetic_build(tmp_path, lambda text: text.replace(
        ".. example:: tiny\n   :cells: queue\n", ".. example:: tiny\n   :cells: gpu-only\n   :hide-code:\n\n"
        ".. example:: tiny\n   :cells: queue\n", 1))
    assert built.returncode == 0, built.stderr
    first = BeautifulSoup((tmp_path / "html" / "en" / "index.html").read_text(encoding="utf-8"),
                          "html.parser").select_one("div.example")
    pytorch, mxnet = first.select(".sd-tab-content")
    assert not pytorch.select(".example-nothing") and pytorch.select(".recording-stamp")
    assert mxnet.select_one(".example-nothing").get_text(strip=True) == "The MXNet version prints nothing here."
    assert len(mxnet.select(".recording-stamp")) == 1 and len(mxnet.select("a.download")) == 2


@pytest.mark.parametrize("lang", LANGUAGES)
def test_frameworks_option_shows_only_the_named_tabs(synthetic_books, lang):
    """``:frameworks: pytorch`` on a cell that runs in one framework only: one tab, no empty MXNet tab."""
    one_tab = synthetic_books[lang].select("div.example")[3]
    assert [label.get_text(strip=True) for label in one_tab.select("label.sd-tab-label")] == ["PyTorch"]
    assert [pre.get_text() for pre in one_tab.select(".example-output pre")] == ["copied\n"]
    assert not one_tab.select(".example-nothing")


def test_frameworks_option_rejects_an_unknown_framework(tmp_path):
    """A framework the book does not have fails the build and names the ones it has."""
    stderr = failed_synthetic_build(tmp_path, lambda text: text.replace(":frameworks: pytorch", ":frameworks: jax"))
    assert ":frameworks: takes some of pytorch, mxnet, not jax" in stderr, stderr


def test_measured_role_formats_with_the_books_separators_and_units(synthetic_books):
    """``:,.1f`` gives 1,234.6 in English and 1234,6 in Turkish (a dot between thousands only from five
    digits on); ``:.1f µs`` shows seconds in microseconds, ``:.2f s`` names the unit, s in both books;
    ``spread[1]`` shows the second item of a glued list."""
    shown = {lang: [span.get_text() for span in book.select("span.measured")]
             for lang, book in synthetic_books.items()}
    assert shown == {"en": ["1,234.6", "46.5\N{NO-BREAK SPACE}µs", "0.91\N{NO-BREAK SPACE}s", "52.5\N{NO-BREAK SPACE}µs"],
                     "tr": ["1234,6", "46,5\N{NO-BREAK SPACE}µs", "0,91\N{NO-BREAK SPACE}s", "52,5\N{NO-BREAK SPACE}µs"]}


def test_measured_role_rejects_an_item_beyond_a_list(tmp_path):
    """An item past a glued list's end fails the build, naming the value asked for."""
    stderr = failed_synthetic_build(tmp_path, lambda text: text.replace("spread[1]", "spread[2]"))
    assert "measured value 'pytorch/tiny::spread[2]:.1f µs': list index out of range" in stderr, stderr


def test_measured_role_rejects_an_unknown_unit(tmp_path):
    """A unit the role does not know fails the build and names the units it knows."""
    stderr = failed_synthetic_build(tmp_path, lambda text: text.replace(":,.1f`", ":.1f ns`"))
    assert "unknown unit 'ns'; write one of s, ms, µs" in stderr, stderr


def test_a_hidden_cell_that_prints_nothing_fails_the_build(tmp_path):
    """A :hide-code: example whose cells print nothing in either framework would show only an empty box
    and a stamp: the build fails and says to leave it off the page."""
    stderr = failed_synthetic_build(
        tmp_path, lambda text: text + "\n.. example:: tiny\n   :cells: quiet\n   :hide-code:\n")
    assert "cells quiet print nothing in either framework" in stderr, stderr


# The seed's lesson: one measure of overlap, and how far Python runs ahead --------------------------

GONE_MEASURES = re.compile(r"speed-up per job|iş başına hızlanma|parallel efficiency|overlap efficiency"
                           r"|paralel verim|örtüşme verim", re.I)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_one_measure_of_overlap_and_no_speed_up_per_job(lang):
    """The auto-parallelism page teaches one measure, the overlap O (its formula on the page, its value
    printed by a shown cell); "speed-up per job", which read as a slowdown for jobs that overlapped
    fully, and the two efficiencies it replaced appear nowhere in the book or in the scripts."""
    page = soup(lang, "chapter_computational-performance/auto-parallelism.rst")
    text = page.get_text(" ")
    assert re.search(r"\boverlap: -?\d+\.\d\d", text), "the shown O is printed"
    formulas = [" ".join(formula.get_text().split()) for formula in page.find_all("math")]
    together = {"en": "together", "tr": "birlikte"}[lang]
    assert any(f.startswith("O=") and together in f and "min(" in f for f in formulas), \
        f"the formula of O, over the shorter job, is shown: {formulas}"
    pages = sorted((HTML / lang).rglob("*.html"))
    found = [f"{p.relative_to(HTML)}: {m.group(0)}" for p in pages
             for m in [GONE_MEASURES.search(BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser").get_text(" "))]
             if m]
    scripts = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in sorted((ROOT / "examples").glob("*/*.py"))
               for m in [GONE_MEASURES.search(p.read_text(encoding="utf-8"))] if m]
    assert not found + scripts, found + scripts


def test_the_measure_check_sees_speed_up_per_job():
    """The check above reads words a reader would see, in either language."""
    assert GONE_MEASURES.search("speed-up per job: 0.79") and GONE_MEASURES.search("Paralel verim: 0,86")
    assert not GONE_MEASURES.search("speed-up: 1.62") and not GONE_MEASURES.search("örtüşme oranı")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_async_page_measures_how_far_python_runs_ahead(lang):
    """The async page shows the run-ahead cell in both frameworks, with the number of calls that
    returned at once out of those issued, and quotes both frameworks' counts in its prose."""
    page = soup(lang, "chapter_computational-performance/async-computation.rst")
    text = page.get_text(" ")
    counts = re.findall(r"calls that returned at once: (\d+) of (\d+)", text)
    assert len(counts) == 2, counts  # the PyTorch and the MXNet tab
    assert all(0 < int(ahead) <= int(issued) for ahead, issued in counts), counts
    prose = " ".join(p.get_text(" ") for p in page.find_all("p"))
    assert all(ahead in prose for ahead, _ in counts), "the prose quotes what each run found"


def test_every_link_of_the_built_books_leads_somewhere():
    """Every href and src of every page of both books and of the root page names a file of the site, and
    every #fragment an element of its page: the download menu's PDF and sources, the zips, the language
    links, the theme's styles and scripts."""
    assert len(list(HTML.rglob("*.html"))) > 10, f"{HTML} holds almost no page: 'make test' builds it first"
    problems = broken_links(HTML)
    assert not problems, "\n".join(problems)


def named_gpus(text: str) -> set[str]:
    """The NVIDIA GPU models that ``text`` names, as "NVIDIA H100"."""
    return set(re.findall(r"NVIDIA [A-Z]\d+\w*", text))


def test_the_gpu_check_reads_a_model_from_prose():
    assert named_gpus("from one NVIDIA H100 GPU, not an NVIDIA A100-SXM4") == {"NVIDIA H100", "NVIDIA A100"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_chapter_names_the_gpu_that_recorded_its_outputs(lang: str):
    """The chapter's index says which GPU its PyTorch outputs come from; the name is typed, so this
    fails when the recordings move to another GPU model and the prose stays behind."""
    recorded = {gpu for e in _examples() if e.framework == "pytorch"
                for gpu in named_gpus(" ".join(load_recording(e).stamp["machine"]["gpus"]))}
    assert len(recorded) == 1, f"the PyTorch recordings come from several GPU models: {recorded}"
    text = soup(lang, "chapter_computational-performance/index.rst").select_one("article").get_text(" ")
    assert named_gpus(text) == recorded, f"{lang}: the chapter names {named_gpus(text)}, the recordings {recorded}"


HELPERS = {"pytorch": "def same():\n    return 1  # one\n\n\ndef own():\n    return 'torch'\n",
           "mxnet": "def same():\n    return 1  # one\n\n\ndef own():\n    return 'mxnet'\n"}


@pytest.fixture(scope="module")
def helper_listings(tmp_path_factory) -> dict[str, BeautifulSoup]:
    """A tiny book of two helpers: one the same in both frameworks' helpers.py, one not."""
    project = tmp_path_factory.mktemp("helpers")
    for framework, source in HELPERS.items():
        (project / "examples" / framework).mkdir(parents=True)
        (project / "examples" / framework / "helpers.py").write_text(source)
    (project / "docs").mkdir()
    (project / "docs" / "index.rst").write_text("Tiny\n====\n\n.. helper:: same\n\n.. helper:: own\n")
    return built_index_pages(project, LANGUAGES)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_a_helper_the_same_in_both_frameworks_is_listed_once_and_says_so(helper_listings, lang):
    """A function that both frameworks' helpers write alike is one listing, without tabs, whose caption
    says it is the same in both; one that differs gets a tab per framework."""
    same, own = helper_listings[lang].select("div.helper")
    assert not same.select(".sd-tab-set") and len(same.select("pre")) == 1
    assert {"en": "the same in both frameworks", "tr": "iki çerçevede de aynı"}[lang] in same.get_text()
    assert [label.get_text(strip=True) for label in own.select(".sd-tab-set label")] == ["PyTorch", "MXNet"]
    assert ["'torch'" in own.select("pre")[0].get_text(), "'mxnet'" in own.select("pre")[1].get_text()] == [True, True]
