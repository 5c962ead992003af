"""Every lesson page is a program: its shown cells, in page order, run as shown (see page_programs.py).

On the CPU, the names and the device guards are checked statically, the MXNet programs run to their
end (MXNet runs on CPU contexts anyway), and the PyTorch programs run until the first section that
needs a GPU, which stops them with one line. On a GPU (`make test-gpu`), every program runs to its end
and prints the lines that its page shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from contextlib import nullcontext
from pathlib import Path

import pytest

from example_runs import TINY_COMPILED, compiling_alone
from page_programs import (EXAMPLES, FRAMEWORKS, LESSONS, Cell, device_guards, hidden_cells, shown_cells, undefined_names,
                           write_program)

PAGES = [(page, framework) for page in LESSONS for framework in FRAMEWORKS if shown_cells(page, framework)]
STOPPED = "what follows needs"
# Values may differ from the recorded run, and so may the unit a time is printed in.
# A value the run printed: a number, with its unit if any; "never", the break-even of a saving that
# did not come; or the compile cache's state, "empty" or "warm", which depends on what ran before
# (the hybridize page prints one or the other, as the run went).
# a value, with its sign (an overlap may come out just below 0), but not the dash of a range: [94.0-107]
NUMBER = re.compile(r"(?:(?<![\w.\]])-)?\d+(?:[.,]\d+)?(?: (?:s|ms|µs)\b)?|\bnever\b|(?<=^compile cache: )(?:empty|warm)$")
# The model in "device: cuda:0 (NVIDIA H200)" is the machine's, not the program's.
DEVICE_MODEL = re.compile(r"^(device: \S+) \(.*\)$")


def masked(line: str) -> str:
    """A printed line with its values and the device's model masked."""
    return NUMBER.sub("#", DEVICE_MODEL.sub(r"\1 (#)", line))


def run_program(page: str, framework: str, *args: str, timeout: int) -> subprocess.CompletedProcess:
    """Save the page's program in a scratch folder and run it from ``examples/<framework>/``, whose
    helpers it imports. Saved beside them, it would count as one of their sources and make every
    recording stale while it exists (a build running meanwhile, in another test process, would fail)."""
    folder = EXAMPLES / framework
    with tempfile.TemporaryDirectory() as scratch:
        path = write_program(page, framework, Path(scratch))
        imports = os.pathsep.join(filter(None, [str(folder), os.environ.get("PYTHONPATH")]))
        return subprocess.run([sys.executable, str(path), *args], cwd=folder, capture_output=True, text=True,
                              timeout=timeout,
                              env=dict(os.environ, MPLBACKEND="Agg", PYTHONUNBUFFERED="1", PYTHONPATH=imports))


def test_every_lesson_page_shows_a_program_in_both_frameworks():
    """Each lesson page shows PyTorch cells, and all but the measuring page show MXNet cells too."""
    shown = {(page, framework) for page, framework in PAGES}
    assert {(page, "pytorch") for page in LESSONS} <= shown
    assert {(page, "mxnet") for page in LESSONS if page != "measuring"} <= shown


@pytest.mark.parametrize("page,framework", PAGES)
def test_the_first_shown_cell_sets_up_and_every_name_comes_from_a_shown_cell(page, framework):
    """The program starts with its imports, and no shown cell uses a name that only a hidden cell defines."""
    cells = shown_cells(page, framework)
    assert "import helpers" in cells[0].source, f"{page}: the first shown cell is not the set-up"
    assert undefined_names(cells) == []


@pytest.mark.parametrize("page,framework", PAGES)
def test_no_shown_cell_tests_for_a_device(page, framework):
    """Shown cells carry no device guards: a section that needs a GPU stops through helpers.gpu()."""
    assert device_guards(shown_cells(page, framework)) == []


def test_the_checks_catch_a_hidden_name_and_a_guard():
    """The static checks fail on what the old pages showed: names from hidden cells, and guards."""
    cells = [Cell("x", "setup", "import torch\nx = torch.rand(2)\n"),
             Cell("x", "run", "def run():\n    return x @ w\n\nif gpus:\n    y = run()\nz = y if on_gpu else 0\n")]
    assert undefined_names(cells) == ["x:run: gpus", "x:run: on_gpu", "x:run: w"]
    assert device_guards(cells) == ["x:run: gpus", "x:run: on_gpu"]
    assert undefined_names([Cell("x", "a", "import helpers\nfor i in range(2):\n    print(i, helpers)\n")]) == []


@pytest.mark.parametrize("page", [p for p, f in PAGES if f == "mxnet"])
def test_mxnet_page_programs_run_to_their_end_on_cpu_contexts(page):
    """Every MXNet page program runs as shown, and its timings come out with their spread."""
    done = run_program(page, "mxnet", "--size", "48", "--repeats", "1", timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert STOPPED not in done.stdout and "Traceback" not in done.stderr
    assert re.search(r"^[^:\n]+: \S+ (?:s|ms|µs) \[", done.stdout, re.M), done.stdout


@pytest.mark.parametrize("page", [p for p, f in PAGES if f == "pytorch"])
def test_pytorch_page_programs_run_on_the_cpu_until_a_section_needs_a_gpu(page):
    """Without a GPU, a PyTorch page program runs what the CPU allows, then stops with one line and
    exit status 0; a page that needs no GPU runs to its end."""
    with compiling_alone() if any("torch.compile" in cell.source for cell in shown_cells(page, "pytorch")) \
            else nullcontext():
        done = run_program(page, "pytorch", "--size", TINY_COMPILED, "--repeats", "1", "--device", "cpu", timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    stops = [line for line in done.stdout.splitlines() if STOPPED in line]
    needs_gpu = any("helpers.gpu()" in cell.source for cell in shown_cells(page, "pytorch"))
    assert len(stops) == (1 if needs_gpu else 0), done.stdout
    if needs_gpu:
        assert done.stdout.rstrip().endswith("so the program stops here."), done.stdout[-500:]


def shown_output_lines(page: str, framework: str) -> list[str]:
    """The text lines the recorded run printed under the shown cells, numbers masked."""
    notebook = json.loads((EXAMPLES / "recordings" / framework / f"{shown_cells(page, framework)[0].example}.ipynb")
                          .read_text())
    tags = {cell.tag for cell in shown_cells(page, framework)}
    lines = []
    for cell in notebook["cells"]:
        if set(cell.get("metadata", {}).get("tags", [])) & tags:
            for output in cell.get("outputs", []):
                if output.get("output_type") == "stream" and output.get("name") == "stdout":
                    lines += [masked(line) for line in "".join(output["text"]).splitlines() if line.strip()]
    return lines


@pytest.mark.gpu
@pytest.mark.parametrize("page,framework", PAGES)
def test_page_programs_run_to_their_end_on_the_gpu_and_print_what_the_page_shows(page, framework):
    """On a GPU every page program runs to its end and prints each line its page shows (values aside)."""
    args = ("--repeats", "2") if framework == "pytorch" else ("--size", "256", "--repeats", "1")
    done = run_program(page, framework, *args, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert STOPPED not in done.stdout
    printed = {masked(line) for line in done.stdout.splitlines()}
    expected = [line for line in shown_output_lines(page, framework) if not line.startswith("size: #")]
    missing = [line for line in expected if line not in printed]
    assert not missing, f"{page}/{framework}: the page shows lines the program did not print: {missing}"


def printed_text(framework: str, example: str, tags: set[str]) -> list[str]:
    """What the recorded cells with these tags printed (stdout and stderr)."""
    notebook = json.loads((EXAMPLES / "recordings" / framework / f"{example}.ipynb").read_text())
    return ["".join(output["text"]) for cell in notebook["cells"] if set(cell["metadata"].get("tags", [])) & tags
            for output in cell.get("outputs", []) if output.get("output_type") == "stream"]


def draws(framework: str, example: str, tag: str) -> bool:
    notebook = json.loads((EXAMPLES / "recordings" / framework / f"{example}.ipynb").read_text())
    return any("image/png" in output.get("data", {}) or "image/svg+xml" in output.get("data", {})
               for cell in notebook["cells"] if tag in cell["metadata"].get("tags", []) for output in cell["outputs"])


@pytest.mark.parametrize("page", LESSONS)
def test_hidden_cells_a_page_displays_print_nothing(page):
    """A lesson page shows text that a program prints only under the program's own shown cells: the
    hidden cells it displays only draw (figures), so that the page's program prints every line the
    page shows."""
    for cell in hidden_cells(page):
        for framework in FRAMEWORKS:
            if (EXAMPLES / "recordings" / framework / f"{cell.example}.ipynb").exists() \
                    and not draws(framework, cell.example, cell.tag):  # the book shows a drawing cell's figure only
                assert printed_text(framework, cell.example, {cell.tag}) == [], (page, framework, cell.tag)


def test_the_hidden_cell_check_sees_a_printing_harness():
    """The check above reads real prints: the async page's hidden read-once-harness prints its speed-up."""
    assert any("times as fast" in text for text in printed_text("pytorch", "async_computation",
                                                                   {"read-once-harness"}))


def test_the_side_stream_recipe_shown_is_safe():
    """The shown run_and_copy orders each copy after its product (an event), keeps each result's
    memory until its copy ran (record_stream), and the shown check waits before the host reads."""
    cells = {cell.tag: cell.source for cell in shown_cells("auto-parallelism", "pytorch")}
    assert "copy_stream.wait_event(" in cells["side-stream"]
    assert ".record_stream(copy_stream)" in cells["side-stream"]
    check = cells["check"]
    assert check.index("torch.cuda.synchronize(gpu)") < check.index("torch.equal(p.to(gpu), y)")


@pytest.mark.parametrize("language, definition", [
    ("en", r"O = (T_0^\text{alone} + T_1^\text{alone} - T^\text{together}) / \min(T_0^\text{alone}, T_1^\text{alone})"),
    ("tr", r"O = (T_0^\text{yalnız} + T_1^\text{yalnız} - T^\text{birlikte}) / \min(T_0^\text{yalnız}, T_1^\text{yalnız})")])
def test_the_glossary_defines_the_overlap_as_the_time_saved_over_the_most_that_can_be_saved(language, definition):
    """The book's one measure of overlap is the time saved over taking turns, divided by the most that
    can be saved, the shorter job: 1 at full overlap, 0 in turns, whatever the jobs' lengths; the
    glossary says so, in the form the pages and the code use."""
    text = (EXAMPLES.parent / "docs" / language / "glossary.rst").read_text(encoding="utf-8")
    assert definition in " ".join(text.split())


def test_masking_hides_values_and_the_device_model_but_not_the_words():
    """Two runs' lines match when only values or the GPU model differ, and differ when a word does."""
    assert masked("device: cuda:0 (NVIDIA H200)") == masked("device: cuda:0 (NVIDIA H100 80GB HBM3)")
    assert masked("calls until compiling pays off: never") == masked("calls until compiling pays off: 4271")
    assert masked("eager loop: 5.84 ms [5.79-6.00]") == masked("eager loop: 812 µs [800-900]")
    assert masked("eager loop: 5.84 ms") != masked("eager step: 5.84 ms")
    assert masked("overlap, (sum - together) / shorter: -0.01") == masked("overlap, (sum - together) / shorter: 0.99")
    assert masked("same result: True") != masked("same result: False")
