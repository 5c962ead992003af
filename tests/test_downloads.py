"""The downloads a reader gets from each example tab: a zip that runs from an empty folder, and the
executed notebook (``make test`` builds ``_build/html`` first)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import unquote

import pytest
from bs4 import BeautifulSoup

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
def downloads(request) -> dict[tuple[str, str], list[Path]]:
    return tab_downloads(request.param)


def test_every_example_tab_offers_a_zip_and_the_notebook(downloads):
    """Each example that a book shows offers, in each framework's tab, one zip and one notebook."""
    examples = {name for _, name in downloads}
    assert examples, "no example tab offers a download"
    for framework in FRAMEWORKS:
        for name in examples:
            files = downloads.get((framework, name), [])
            kinds = sorted(p.suffix for p in files)
            assert kinds == [".ipynb", ".zip"], f"{framework}/{name}: downloads {files}"
            assert all(p.is_file() for p in files), f"{framework}/{name}: a link leads nowhere: {files}"


def test_each_tab_serves_its_own_framework(downloads):
    """The PyTorch tab's zip holds the PyTorch script and the MXNet tab's the MXNet one, byte for byte,
    and the notebook is that framework's recording."""
    for (framework, name), files in downloads.items():
        example = Example.parse(ROOT / "examples", f"{framework}/{name}")
        archive = next(p for p in files if p.suffix == ".zip")
        with zipfile.ZipFile(archive) as opened:
            assert opened.read(example.script.name) == example.script.read_bytes(), (
                f"{archive.name} does not hold examples/{framework}/{name}.py")
        notebook = json.loads(next(p for p in files if p.suffix == ".ipynb").read_text(encoding="utf-8"))
        assert notebook == load_recording(example).notebook, f"{framework}/{name}: not its recording"


def test_zip_names_what_to_install(downloads):
    """The zip's requirements.txt pins the framework of the recorded run and names matplotlib, which the
    figures need; its README says how to install and run."""
    for (framework, name), files in downloads.items():
        archive = next(p for p in files if p.suffix == ".zip")
        with zipfile.ZipFile(archive) as opened:
            requirements = opened.read("requirements.txt").decode().split()
            readme = opened.read("README.txt").decode()
        versions = load_recording(Example.parse(ROOT / "examples", f"{framework}/{name}")).stamp["versions"]
        package = {"pytorch": "torch", "mxnet": "mxnet"}[framework]
        assert f"{package}=={versions[package].split('+')[0]}" in requirements, requirements
        assert "matplotlib" in [line.split("==")[0] for line in requirements], requirements
        assert "pip install -r requirements.txt" in readme and f"python {name}.py" in readme, readme


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_zip_runs_from_an_empty_folder(framework, tmp_path):
    """Every zip of the English book, unpacked alone into an empty folder, runs there on the CPU with a
    tiny size (the Turkish book's zips hold the same files: the test above compares the scripts)."""
    zips = {name: next(p for p in files if p.suffix == ".zip")
            for (f, name), files in tab_downloads("en").items() if f == framework}
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
        assert published["size"] == 64, f"{archive_name}: ran with size {published['size']}, not 64"
