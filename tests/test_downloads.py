"""The downloads a reader gets from each example tab: a zip that runs from an empty folder, and the
executed notebook (``make test`` builds ``_build/html`` first)."""

from __future__ import annotations

import ast
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote

import pytest
from bs4 import BeautifulSoup
from packaging.version import Version

from code_comments import translate, translate_notebook
from downloads import BOOK_FIGURES, CPU_REQUIREMENTS, TORCH_CPU_INDEX, VENV_PYTHON
from example_runs import NOTEBOOK
from pip_resolution import (
    CUDA_PACKAGE,
    PLATFORMS,
    cpu_index_standin,
    install_line,
    pins_for,
    reader_env,
    resolve_command,
    resolved,
    with_standin,
)
from recordings import FRAMEWORK_TITLES, FRAMEWORKS, Example, load_recording

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
LANGUAGES = ("en", "tr")


def tab_downloads(lang: str) -> dict[tuple[str, str], list[Path]]:
    """For each (framework, example) of a book: the files its tabs link for download."""
    found: dict[tuple[str, str], list[Path]] = {}
    pages = [p for p in (HTML / lang).rglob("*.html") if not p.relative_to(HTML / lang).parts[0].startswith("_")]
    if not pages:
        pytest.fail(f"{HTML / lang} has no pages: build the books with 'make html' (make test does it first)")
    for page in pages:
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        for tab_set in soup.select("div.example .sd-tab-set"):
            labels = [label.get_text(strip=True) for label in tab_set.select(":scope > label.sd-tab-label")]
            for label, panel in zip(labels, tab_set.select(":scope > .sd-tab-content")):
                framework = next(f for f, title in FRAMEWORK_TITLES.items() if title == label)
                for link in panel.select("a.download"):
                    path = (page.parent / unquote(link["href"])).resolve()
                    name = path.name.rsplit("-", 1)[0]
                    found.setdefault((framework, name), []).append(path)
    # An example shown on several pages links the same two files from each of them.
    return {key: sorted(set(paths)) for key, paths in found.items()}


@pytest.fixture(scope="module", params=LANGUAGES)
def downloads(request) -> tuple[str, dict[tuple[str, str], list[Path]]]:
    """A book's language, and its downloads."""
    return request.param, tab_downloads(request.param)


def test_every_example_tab_offers_a_zip_and_the_notebook(downloads):
    """Each example that a book shows offers, in each framework's tab, one zip and one notebook."""
    _lang, downloads = downloads
    examples = {name for _, name in downloads}
    assert examples, "no example tab offers a download"
    for framework in FRAMEWORKS:
        for name in examples:
            files = downloads.get((framework, name), [])
            kinds = sorted(p.suffix for p in files)
            assert kinds == [".ipynb", ".zip"], f"{framework}/{name}: downloads {files}"
            assert all(p.is_file() for p in files), f"{framework}/{name}: a link leads nowhere: {files}"


def test_each_tab_serves_its_own_framework(downloads):
    """The PyTorch tab's zip holds the PyTorch script and the MXNet tab's the MXNet one, and the notebook
    is that framework's recording: in the English book byte for byte, in the Turkish book with the
    comments and docstrings that its pages show in Turkish, and nothing else changed."""
    lang, downloads = downloads
    for (framework, name), files in downloads.items():
        example = Example.parse(ROOT / "examples", f"{framework}/{name}")
        archive = next(p for p in files if p.suffix == ".zip")
        script = translate(example.script.read_text(encoding="utf-8"), lang)
        with zipfile.ZipFile(archive) as opened:
            assert opened.read(example.script.name).decode() == script, (
                f"{archive.name} does not hold examples/{framework}/{name}.py with its {lang} comments")
            helpers = (example.script.parent / "helpers.py").read_text(encoding="utf-8")
            assert opened.read("helpers.py").decode() == translate(helpers, lang), f"{archive.name}: helpers.py"
        alone = next(p for p in files if p.suffix == ".ipynb").read_bytes()
        notebook = json.loads(alone)
        guard, *cells = notebook["cells"]
        recording = translate_notebook(load_recording(example).notebook, lang)
        assert guard["metadata"]["tags"][0] == "zip-guard", f"{framework}/{name}: the notebook's first cell is no guard"
        assert {**notebook, "cells": cells} == recording, f"{framework}/{name}: not its recording with its {lang} comments"
        with zipfile.ZipFile(archive) as opened:
            assert opened.read(f"{name}.ipynb") == alone, f"{archive.name} does not hold the notebook beside its helpers"


def test_every_note_that_a_zip_cites_is_in_it(downloads):
    """What a script prints "(see X.md)" about lies in its zip (MXNet's MEASUREMENTS.md), as in examples/."""
    _lang, downloads = downloads
    cited = set()
    for (framework, name), files in downloads.items():
        with zipfile.ZipFile(next(p for p in files if p.suffix == ".zip")) as opened:
            notes = {n for n in opened.namelist() if n.endswith(".md")}
            for member in (n for n in opened.namelist() if n.endswith(".py")):
                for note in re.findall(r"see (\w+\.md)", opened.read(member).decode()):
                    cited.add(note)
                    assert note in notes, f"{framework}/{name}: {member} cites {note}, which the zip lacks"
                    assert opened.read(note) == (ROOT / "examples" / framework / note).read_bytes()
    assert "MEASUREMENTS.md" in cited


def zip_texts(archive: Path) -> tuple[str, str]:
    """The README.txt and requirements.txt of a zip."""
    with zipfile.ZipFile(archive) as opened:
        return opened.read("README.txt").decode(), opened.read("requirements.txt").decode()


def readme_pythons(readme: str) -> list[str]:
    """The Pythons that a zip's README names, in English ("Python 3.11 or 3.12") or Turkish."""
    found = re.search(r"Python (\d\.\d+)((?:(?:,| or| ya da) \d\.\d+)*)", readme)
    assert found, f"the README names no Python version:\n{readme}"
    return [found[1], *re.findall(r"\d\.\d+", found[2])]


def test_zip_names_what_to_install(downloads):
    """The zip's requirements.txt pins, for the Python that runs the tests, exactly the versions of the
    book's environment, with which test_zip_runs_from_an_empty_folder runs it (torch without +cpu:
    the install line chooses the build), and matplotlib, which the figures need; its README names
    Python 3.11 and 3.12, gives the install lines (PyTorch: without and with a GPU) and how to run."""
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    _lang, downloads = downloads
    for (framework, name), files in downloads.items():
        readme, requirements = zip_texts(next(p for p in files if p.suffix == ".zip"))
        pins = pins_for(requirements, here)
        installed = {package: Version(metadata.version(package)).public for package in pins}
        assert pins == installed, f"{framework}/{name}: requirements.txt pins {pins}, the tests run {installed}"
        assert {"matplotlib", {"pytorch": "torch", "mxnet": "mxnet"}[framework]} <= set(pins), pins
        assert {"3.11", "3.12"} <= set(readme_pythons(readme)), readme
        assert f"    {VENV_PYTHON} -m venv .venv\n" in readme and "python3 -m venv" not in readme, readme
        install_line(readme, "requirements.txt")
        if framework == "pytorch":
            install_line(readme, CPU_REQUIREMENTS)
        assert f"python {name}.py --help" in readme and f"python {name}.py\n" in readme, readme
        assert f"{name}.ipynb" in readme and "EXAMPLE_ARGS=" in readme, readme  # the notebook's options


def test_each_zip_carries_the_books_figures_with_their_run_and_units(downloads):
    """book-figures.json holds every figure the recording glued, as values, under the names that --json
    prints (the example's keys), with the units --json gives and the recording's machine, versions and
    date; the README names it."""
    sys.path.insert(0, str(ROOT / "examples"))
    from common import keys

    lang, downloads = downloads
    for (framework, name), files in downloads.items():
        with zipfile.ZipFile(next(p for p in files if p.suffix == ".zip")) as opened:
            figures = json.loads(opened.read(BOOK_FIGURES))
            readme = " ".join(opened.read("README.txt").decode().split())
        stamp = load_recording(Example.parse(ROOT / "examples", f"{framework}/{name}")).stamp
        assert figures["values"] == {key: ast.literal_eval(text) for key, text in stamp["glue"].items()}, name
        assert set(figures["values"]) >= set(keys.published(getattr(keys, name.upper()))), name
        assert figures["units"] == {key: keys.unit(key) for key in figures["values"] if keys.unit(key)}, name
        assert [figures[k] for k in ("example", "recorded_at", "machine", "versions")] == \
            [f"{framework}/{name}", stamp["recorded_at"], stamp["machine"], stamp["versions"]], name
        assert BOOK_FIGURES in readme and "--json" in readme and f"python {name}.py --compare" in readme, (lang, readme)


def test_the_pytorch_cpu_file_cannot_resolve_to_the_cuda_build(downloads):
    """requirements-cpu.txt pins torch's CPU build, which only PyTorch's CPU index has, and takes the rest
    from requirements.txt; requirements.txt names no index (a GPU machine installs it from PyPI)."""
    _lang, downloads = downloads
    for (framework, name), files in downloads.items():
        with zipfile.ZipFile(next(p for p in files if p.suffix == ".zip")) as opened:
            if framework == "mxnet":
                assert CPU_REQUIREMENTS not in opened.namelist(), name
                continue
            cpu = [line for line in opened.read(CPU_REQUIREMENTS).decode().splitlines() if not line.startswith("#")]
            torch = pins_for(opened.read("requirements.txt").decode(), "3.11")["torch"]
            assert cpu == [f"--extra-index-url {TORCH_CPU_INDEX}", f"torch=={torch}+cpu", "-r requirements.txt"], cpu
            assert "index-url" not in opened.read("requirements.txt").decode()


def test_turkish_zip_readme_says_the_script_prints_english():
    """The Turkish book's zips are explained in Turkish, and say that the script prints English."""
    for (framework, name), files in tab_downloads("tr").items():
        readme = " ".join(zip_texts(next(p for p in files if p.suffix == ".zip"))[0].split())  # unwrapped
        assert "kitabının bir örneği" in readme and "Betik çıktısını İngilizce yazar" in readme, readme
        assert "not defterinin kodu İngilizcedir" in readme, readme  # the notebook's docstring is English
    english = " ".join(zip_texts(next(p for p in next(iter(tab_downloads("en").values())) if p.suffix == ".zip"))[0].split())
    assert "code of the script" not in english, "the English book's README says that its code is English"


@pytest.fixture(scope="module")
def resolutions(tmp_path_factory) -> dict[tuple[str, str, str], tuple[subprocess.CompletedProcess, Path, str]]:
    """Each distinct requirements.txt of the English book's zips (one per framework), resolved by pip
    for each Python its README names, with the README's line for a machine without a GPU, all at once:
    (framework, Python, line) -> (pip's result, its report, the requirements). PyTorch's CPU line once
    more for Python 3.12 with its CPU index out of reach (line "unreachable")."""
    folder = tmp_path_factory.mktemp("resolve")
    texts = {}  # framework -> {requirements: a README of a zip with them}
    cpu_files = {}  # framework -> its requirements-cpu.txt
    for (framework, _name), files in tab_downloads("en").items():
        archive = next(p for p in files if p.suffix == ".zip")
        readme, requirements = zip_texts(archive)
        texts.setdefault(framework, {})[requirements] = readme
        with zipfile.ZipFile(archive) as opened:
            if CPU_REQUIREMENTS in opened.namelist():
                cpu_files[framework] = opened.read(CPU_REQUIREMENTS).decode()
    assert set(texts) == set(FRAMEWORKS) and all(len(t) == 1 for t in texts.values()), (
        f"the zips of a framework differ in their requirements: {texts}")
    pythons = sorted({python for t in texts.values() for readme in t.values() for python in readme_pythons(readme)})
    standin = cpu_index_standin(folder / "torch-cpu-index", pythons)
    started = {}
    for framework, ((requirements, readme),) in ((f, tuple(t.items())) for f, t in texts.items()):
        line = install_line(readme, CPU_REQUIREMENTS if framework == "pytorch" else "requirements.txt")
        cases = [(python, standin) for python in readme_pythons(readme)]
        cases += [("3.12", None)] if framework == "pytorch" else []
        for python, index in cases:
            where = folder / f"{framework}-{python}{'' if index else '-unreachable'}"
            where.mkdir()
            # pip evaluates environment markers with the Python that runs it, whatever --python-version
            # says, so each line's marker is applied here for the Python resolved for.
            pins = pins_for(requirements, python)
            (where / "requirements.txt").write_text("".join(f"{n}=={v}\n" for n, v in pins.items()))
            if framework in cpu_files:
                (where / CPU_REQUIREMENTS).write_text(with_standin(cpu_files[framework], index))
            run = subprocess.Popen(resolve_command(line, python, where), cwd=where, env=reader_env(),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            started[framework, python, " ".join(line) if index else "unreachable"] = (run, where / "report.json",
                                                                                     requirements)
    results = {}
    for key, (run, report, requirements) in started.items():
        stdout, stderr = run.communicate(timeout=240)
        results[key] = (subprocess.CompletedProcess(run.args, run.returncode, stdout, stderr), report, requirements)
    return results


def test_zip_requirements_resolve_on_each_python_without_the_cuda_build(resolutions):
    """pip resolves each zip's requirements.txt, with its README's line for a machine without a GPU,
    on Python 3.11 and 3.12 (Linux wheels only), to the pinned versions, with torch's CPU build and no
    NVIDIA package. (pip reads PyPI; see pip_resolution.py for torch's CPU index. The markers of
    requirements.txt are applied for each Python first: pip would apply them for the one it runs on.)"""
    assert {python for _, python, _ in resolutions} >= {"3.11", "3.12"}
    for (framework, python, line), (result, report, requirements) in resolutions.items():
        if line == "unreachable":
            continue
        assert result.returncode == 0, f"{framework} on Python {python}: `{line}` fails:\n{result.stderr[-2000:]}"
        chosen = resolved(report)
        for package, version in pins_for(requirements, python).items():
            assert chosen.get(package) == version or (package == "torch" and chosen.get(package) == f"{version}+cpu"), (
                f"{framework} on Python {python}: {package} {chosen.get(package)}, pinned {version}")
        cuda = sorted(p for p in chosen if CUDA_PACKAGE.match(p))
        assert not cuda, f"{framework} on Python {python}: `{line}` installs {cuda}"
        if framework == "pytorch":
            assert chosen["torch"].endswith("+cpu"), f"Python {python}: `{line}` takes torch {chosen['torch']}"


def test_without_the_cpu_index_the_cpu_line_stops_instead_of_taking_the_cuda_build(resolutions):
    """Where PyTorch's CPU index cannot be reached, pip leaves it out and reads PyPI alone, whose torch is
    the CUDA build (4.8 GB on Python 3.12): the CPU line then stops with pip's one error that names the
    CPU build it could not find, and installs nothing."""
    result, report, requirements = resolutions["pytorch", "3.12", "unreachable"]
    torch = pins_for(requirements, "3.12")["torch"]
    assert result.returncode != 0 and not report.exists(), result.stdout[-2000:]
    assert f"No matching distribution found for torch=={torch}+cpu" in result.stderr, result.stderr[-2000:]


def test_the_gpu_line_finds_the_pinned_torch_on_pypi_for_each_python():
    """The README's line for an NVIDIA GPU takes torch from PyPI alone: the pinned version has a Linux
    wheel there for every Python the README names. (The rest resolves as on the line without a GPU.)"""
    files = tab_downloads("en")
    readme, requirements = zip_texts(next(p for (f, _), paths in files.items() if f == "pytorch" for p in paths
                                          if p.suffix == ".zip"))
    assert "index-url" not in requirements and install_line(readme, "requirements.txt")
    for python in readme_pythons(readme):
        torch = pins_for(requirements, python)["torch"]
        platforms = [option for platform in PLATFORMS for option in ("--platform", platform)]
        listing = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "torch", "--python-version", python,
                                  "--implementation", "cp", "--only-binary=:all:", *platforms],
                                 env=reader_env(), capture_output=True, text=True, timeout=60)
        assert listing.returncode == 0, listing.stderr
        available = re.search(r"^Available versions: (.*)$", listing.stdout, re.M)[1].split(", ")
        assert torch in available, f"PyPI has no torch {torch} for Python {python}: {available}"


# The one line with which a section that needs a GPU stops a PyTorch notebook (helpers.gpu()).
GPU_STOP = "what follows needs an NVIDIA GPU, so the program stops here."


def run_notebooks(notebooks: dict[str, Path], tmp_path: Path, options: str = "") -> dict[str, dict]:
    """Each notebook executed in its own folder, all at once, tiny and on the CPU, with any further
    ``options``: name -> the executed notebook."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MPLBACKEND")}
    env["EXAMPLE_ARGS"] = f"--size 32 --repeats 1 --device cpu {options}"
    started = {name: subprocess.Popen([sys.executable, "-c", NOTEBOOK, str(path), str(path.parent),
                                       str(tmp_path / f"{name}.executed.ipynb")], env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
               for name, path in notebooks.items()}
    executed = {}
    for name, run in started.items():
        _stdout, stderr = run.communicate(timeout=300)
        assert run.returncode == 0, f"{name}: the notebook does not run:\n{stderr[-3000:]}"
        executed[name] = json.loads((tmp_path / f"{name}.executed.ipynb").read_text(encoding="utf-8"))
    return executed


def cell_texts(cell: dict) -> str:
    return "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_zip_runs_its_notebook_from_an_empty_folder(framework, tmp_path):
    """Each zip of the Turkish book (its comments and docstrings Turkish, its code the script's: the English
    book's zips hold the scripts themselves, byte for byte, as a test above checks), unpacked alone into an
    empty folder, runs its notebook there with nbclient, on the CPU: an MXNet one to its end, a PyTorch one
    to its end or to a section that needs a GPU, which stops it with its one line (no traceback) and leaves
    every later cell empty. It runs with --compare, which reads the zip's book-figures.json: one table sets
    the book's figures, and its machine, beside the run's. (The zip's script runs from its folder in
    test_readme.py.)"""
    notebooks = {}
    for (f, name), files in tab_downloads("tr").items():
        if f == framework:
            folder = tmp_path / name
            with zipfile.ZipFile(next(p for p in files if p.suffix == ".zip")) as opened:
                opened.extractall(folder)
            notebooks[name] = folder / f"{name}.ipynb"
    assert notebooks, f"no {framework} zip"
    stopped = []
    for name, notebook in run_notebooks(notebooks, tmp_path, "--compare").items():
        cells = [c for c in notebook["cells"] if c["cell_type"] == "code"]
        failed = [(i, o) for i, c in enumerate(cells) for o in c["outputs"] if o["output_type"] == "error"]
        assert not failed, f"{name}: cell {failed[0][0]} failed: {failed[0][1]}"
        assert not cell_texts(cells[0]), f"{name}: the guard spoke beside the helpers: {cell_texts(cells[0])}"
        printed = "".join(cell_texts(c) for c in cells)
        figures = notebooks[name].parent.resolve() / BOOK_FIGURES
        book = json.loads(figures.read_text(encoding="utf-8"))["machine"]
        assert printed.count("--compare: ") == 1, f"{name}: {printed}"
        assert f"--compare: the book's figures ({figures}) beside this run's\nbook:     GPU {book['gpus'][0]}" \
            f"; CPU {book['cpu']}, {book['cpu_threads']} threads; " in printed, f"{name}: {printed}"
        stops = [i for i, c in enumerate(cells) if GPU_STOP in cell_texts(c)]
        if stops:
            stopped.append(name)
            assert not [c for c in cells[stops[0] + 1:] if c["outputs"]], f"{name}: cells after the GPU stop ran"
    # MXNet's run on CPU contexts to their end; PyTorch's hardware rows stop where the GPU rows begin.
    assert ("hardware" in stopped) == (framework == "pytorch") and (framework == "pytorch" or not stopped), stopped


def test_a_notebook_downloaded_alone_stops_at_its_first_cell_naming_its_zip(tmp_path):
    """The notebook that a page offers beside its zip, run alone in an empty folder (in both books, both
    frameworks): its first cell prints one line that names the zip and stops, without a traceback; no
    later cell runs (none fails with ModuleNotFoundError)."""
    notebooks, zips = {}, {}
    for lang in LANGUAGES:
        for (framework, name), files in tab_downloads(lang).items():
            if name == "auto_parallelism":
                alone = tmp_path / f"{lang}-{framework}"
                alone.mkdir()
                notebook = next(p for p in files if p.suffix == ".ipynb")
                notebooks[alone.name] = Path(shutil.copy(notebook, alone))
                zips[alone.name] = next(p for p in files if p.suffix == ".zip").name
    assert len(notebooks) == 4, notebooks
    for key, notebook in run_notebooks(notebooks, tmp_path).items():
        first, *later = [c for c in notebook["cells"] if c["cell_type"] == "code"]
        lines = cell_texts(first).splitlines()
        assert len(lines) == 1 and zips[key] in lines[0], f"{key}: {lines}"
        assert not [o for o in first["outputs"] if o.get("traceback")], first["outputs"]
        assert not [c for c in later if c["outputs"]], f"{key}: cells after the first ran"
