"""The downloads a reader gets from each example tab: a zip that runs from an empty folder, and the
executed notebook (``make test`` builds ``_build/html`` first)."""

from __future__ import annotations

import io
import json
import os
import re
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
from downloads import TORCH_CPU_INDEX
from pip_resolution import (
    CUDA_PACKAGE,
    PLATFORMS,
    cpu_index_standin,
    install_line,
    pins_for,
    reader_env,
    resolve_command,
    resolved,
)
from recordings import FRAMEWORK_TITLES, FRAMEWORKS, Example, load_recording

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
LANGUAGES = ("en", "tr")
# A tiny run: seconds on the CPU, in a folder that holds nothing but the unpacked zip.
TINY = ["--size", "64", "--repeats", "1", "--device", "cpu"]


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
        notebook = json.loads(next(p for p in files if p.suffix == ".ipynb").read_text(encoding="utf-8"))
        recording = translate_notebook(load_recording(example).notebook, lang)
        assert notebook == recording, f"{framework}/{name}: not its recording with its {lang} comments"


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
        lines = [install_line(readme, None)] + ([install_line(readme, TORCH_CPU_INDEX)] if framework == "pytorch" else [])
        assert all(line[4:6] == ["-r", "requirements.txt"] for line in lines), lines
        assert f"python {name}.py --help" in readme and f"python {name}.py\n" in readme, readme


def test_turkish_zip_readme_says_the_script_prints_english():
    """The Turkish book's zips are explained in Turkish, and say that the script prints English."""
    for (framework, name), files in tab_downloads("tr").items():
        readme = " ".join(zip_texts(next(p for p in files if p.suffix == ".zip"))[0].split())  # unwrapped
        assert "kitabının bir örneği" in readme and "Betik çıktısını İngilizce yazar" in readme, readme


@pytest.fixture(scope="module")
def resolutions(tmp_path_factory) -> dict[tuple[str, str, str], tuple[subprocess.CompletedProcess, Path, str]]:
    """Each distinct requirements.txt of the English book's zips (one per framework), resolved by pip
    for each Python its README names, with the README's line for a machine without a GPU, all at once:
    (framework, Python, line) -> (pip's result, its report, the requirements)."""
    folder = tmp_path_factory.mktemp("resolve")
    texts = {}  # framework -> {requirements: a README of a zip with them}
    for (framework, _name), files in tab_downloads("en").items():
        readme, requirements = zip_texts(next(p for p in files if p.suffix == ".zip"))
        texts.setdefault(framework, {})[requirements] = readme
    assert set(texts) == set(FRAMEWORKS) and all(len(t) == 1 for t in texts.values()), (
        f"the zips of a framework differ in their requirements: {texts}")
    pythons = sorted({python for t in texts.values() for readme in t.values() for python in readme_pythons(readme)})
    standin = cpu_index_standin(folder / "torch-cpu-index", pythons)
    started = {}
    for framework, ((requirements, readme),) in ((f, tuple(t.items())) for f, t in texts.items()):
        line = install_line(readme, TORCH_CPU_INDEX if framework == "pytorch" else None)
        for python in readme_pythons(readme):
            where = folder / f"{framework}-{python}"
            where.mkdir()
            # pip evaluates environment markers with the Python that runs it, whatever --python-version
            # says, so each line's marker is applied here for the Python resolved for.
            pins = pins_for(requirements, python)
            (where / "requirements.txt").write_text("".join(f"{n}=={v}\n" for n, v in pins.items()))
            run = subprocess.Popen(resolve_command(line, python, where, standin), cwd=where, env=reader_env(),
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            started[framework, python, " ".join(line)] = (run, where / "report.json", requirements)
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
        assert result.returncode == 0, f"{framework} on Python {python}: `{line}` fails:\n{result.stderr[-2000:]}"
        chosen = resolved(report)
        for package, version in pins_for(requirements, python).items():
            assert chosen.get(package) == version or (package == "torch" and chosen.get(package) == f"{version}+cpu"), (
                f"{framework} on Python {python}: {package} {chosen.get(package)}, pinned {version}")
        cuda = sorted(p for p in chosen if CUDA_PACKAGE.match(p))
        assert not cuda, f"{framework} on Python {python}: `{line}` installs {cuda}"
        if framework == "pytorch":
            assert chosen["torch"].endswith("+cpu"), f"Python {python}: `{line}` takes torch {chosen['torch']}"


def test_the_gpu_line_finds_the_pinned_torch_on_pypi_for_each_python():
    """The README's line for an NVIDIA GPU takes torch from PyPI alone: the pinned version has a Linux
    wheel there for every Python the README names. (The rest resolves as on the line without a GPU.)"""
    files = tab_downloads("en")
    readme, requirements = zip_texts(next(p for (f, _), paths in files.items() if f == "pytorch" for p in paths
                                          if p.suffix == ".zip"))
    assert TORCH_CPU_INDEX not in install_line(readme, None)
    for python in readme_pythons(readme):
        torch = pins_for(requirements, python)["torch"]
        platforms = [option for platform in PLATFORMS for option in ("--platform", platform)]
        listing = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "torch", "--python-version", python,
                                  "--implementation", "cp", "--only-binary=:all:", *platforms],
                                 env=reader_env(), capture_output=True, text=True, timeout=60)
        assert listing.returncode == 0, listing.stderr
        available = re.search(r"^Available versions: (.*)$", listing.stdout, re.M)[1].split(", ")
        assert torch in available, f"PyPI has no torch {torch} for Python {python}: {available}"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_zip_runs_from_an_empty_folder(framework, tmp_path):
    """Every zip of the Turkish book, unpacked alone into an empty folder, runs there on the CPU with a
    tiny size: its comments and docstrings are Turkish, its code is the script's (the English book's zips
    hold the scripts themselves, byte for byte: the test above compares them)."""
    zips = {name: next(p for p in files if p.suffix == ".zip")
            for (f, name), files in tab_downloads("tr").items() if f == framework}
    assert zips, f"no {framework} zip to run"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EXAMPLE_ARGS")}
    env["MPLBACKEND"] = "Agg"
    started = {}
    for name, archive in sorted(zips.items()):  # all at once: their timings are not checked
        folder = tmp_path / name
        folder.mkdir()
        with zipfile.ZipFile(io.BytesIO(archive.read_bytes())) as opened:
            opened.extractall(folder)
        started[archive.name] = subprocess.Popen([sys.executable, f"{name}.py", *TINY, "--json"], cwd=folder,
                                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for archive_name, run in started.items():
        stdout, stderr = run.communicate(timeout=240)
        assert run.returncode == 0, f"{archive_name} does not run from an empty folder:\n{stderr[-3000:]}"
        published = json.loads(stdout.strip().splitlines()[-1])
        if archive_name.startswith("hardware"):  # --size sets its GPU product; without a GPU, the host rows
            assert published["host_copy_gbps"], f"{archive_name}: no host copy rate"
        else:
            assert published["size"] == 64, f"{archive_name}: ran with size {published['size']}, not 64"
