"""The execute-mode build and the recorded build, on a tiny project made in a temporary folder.

The tiny examples need no GPU and no framework: they print, glue values and draw nothing, so these
tests prove the pipeline (recording, stamps, staleness, atomicity, errors) in seconds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]
HEADER = "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     language: python\n#     name: python3\n# ---\n"


def example_source(framework: str, body: str = "") -> str:
    return HEADER + textwrap.dedent(f'''\
        """A tiny example for the pipeline tests."""

        # %% tags=["setup"]
        import helpers
        from myst_nb import glue
        print("hello from {framework}", helpers.WHERE)
        glue("devices", ["cpu"], display=False)
        glue("answer", 0.123456, display=False)
        {body}
        ''')


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Two tiny twin examples, a docs tree that shows them, and no recordings yet."""
    for framework in ("pytorch", "mxnet"):
        folder = tmp_path / "examples" / framework
        folder.mkdir(parents=True)
        (folder / "helpers.py").write_text('WHERE = "on the CPU"\n')
        (folder / "tiny.py").write_text(example_source(framework))
    (tmp_path / "examples" / "common").mkdir()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.rst").write_text(textwrap.dedent("""\
        Tiny
        ====

        The answer is :measured:`pytorch/tiny::answer:.2f`.

        .. example:: tiny
           :cells: setup
        """))
    return tmp_path


def record(project: Path, *patterns: str) -> subprocess.CompletedProcess:
    args = [sys.executable, str(ROOT / "conf" / "record.py"), "--examples-dir", str(project / "examples")]
    if patterns:
        args += ["--examples", *patterns]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def build(project: Path, language: str = "en") -> subprocess.CompletedProcess:
    env = dict(os.environ, BOOK_LANGUAGE=language)
    args = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-c", str(ROOT / "conf"),
            "-D", f"examples_dir={project / 'examples'}", "-d", str(project / "doctrees"),
            str(project / "docs"), str(project / "html" / language)]
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)


def recordings(project: Path) -> dict[str, bytes]:
    folder = project / "examples" / "recordings"
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_record_stamps_and_the_book_shows_the_recording(project: Path):
    """A recorded run carries its stamp, and the built page shows code, output, stamp and glued value."""
    result = record(project)
    assert result.returncode == 0, result.stderr
    stamp = json.loads((project / "examples/recordings/pytorch/tiny.ipynb").read_text())["metadata"]["recording"]
    assert set(stamp) >= {"source_sha256", "recorded_at", "runtime_s", "machine", "versions", "glue"}
    assert stamp["versions"]["torch"] and stamp["machine"]["cpu"]
    assert stamp["glue"]["answer"] == "0.123456"

    built = build(project)
    assert built.returncode == 0, built.stderr
    page = BeautifulSoup((project / "html/en/index.html").read_text(), "html.parser")
    tabs = [label.get_text(strip=True) for label in page.select(".sd-tab-set label")]
    assert tabs == ["PyTorch", "MXNet"]
    code = page.select(".example-code pre")
    assert len(code) == 2 and 'print("hello from pytorch"' in code[0].get_text()
    outputs = [o.get_text() for o in page.select(".example-output pre")]
    assert outputs == ["hello from pytorch on the CPU\n", "hello from mxnet on the CPU\n"]
    stamps = page.select(".recording-stamp")
    assert len(stamps) == 2 and stamp["recorded_at"][:10] in stamps[0].get_text()
    assert "ran on: cpu" in stamps[0].get_text()
    assert page.select_one("span.measured").get_text() == "0.12"


def test_turkish_build_translates_the_stamp(project: Path):
    """The Turkish book says where a recording came from in Turkish, and links to the English page."""
    assert record(project).returncode == 0
    built = build(project, "tr")
    assert built.returncode == 0, built.stderr
    page = BeautifulSoup((project / "html/tr/index.html").read_text(), "html.parser")
    assert page.html["lang"] == "tr"
    assert "Kaydedildi" in page.select_one(".recording-stamp").get_text()
    switch = page.select_one("a.language-switch")
    assert switch["href"] == "../en/index.html" and switch.get_text(strip=True) == "English"


def test_stale_recording_fails_the_build_and_names_the_fix(project: Path):
    """Changing an example (or a helper it uses) after its recording fails the recorded build."""
    assert record(project).returncode == 0
    helpers = project / "examples/mxnet/helpers.py"
    helpers.write_text(helpers.read_text() + "# changed\n")
    built = build(project)
    assert built.returncode != 0
    assert "mxnet/tiny is stale" in built.stderr
    assert "make record EXAMPLES=mxnet/tiny" in built.stderr
    assert "pytorch/tiny" not in built.stderr


def test_missing_recording_fails_the_build(project: Path):
    """A book whose examples were never recorded does not build from nothing."""
    built = build(project)
    assert built.returncode != 0
    assert "pytorch/tiny has no recording" in built.stderr


def test_failing_example_fails_the_execute_build_and_keeps_recordings(project: Path):
    """An error in one cell fails the execute build, names the script and cell, and changes no recording."""
    assert record(project).returncode == 0
    before = recordings(project)
    script = project / "examples/pytorch/tiny.py"
    script.write_text(example_source("pytorch", 'raise RuntimeError("planted failure")'))
    result = record(project)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "planted failure" in output and "pytorch/tiny" in output
    assert "(pytorch/tiny failed)" in result.stderr and "recordings are unchanged" in result.stderr
    assert recordings(project) == before


def test_interrupted_execute_build_keeps_recordings(project: Path):
    """Stopping the execute build midway (Ctrl-C) leaves every recording as it was."""
    assert record(project).returncode == 0
    before = recordings(project)
    (project / "examples/mxnet/tiny.py").write_text(example_source("mxnet", "import time; time.sleep(60)"))
    args = [sys.executable, str(ROOT / "conf" / "record.py"), "--examples-dir", str(project / "examples")]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    time.sleep(8)  # the kernels are running by now
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=60)
    assert process.returncode != 0
    assert recordings(project) == before


def test_record_selects_examples_and_rejects_unknown_names(project: Path):
    """EXAMPLES narrows a recording to matching examples; a name that matches nothing is an error."""
    result = record(project, "mxnet/*")
    assert result.returncode == 0, result.stderr
    assert list(recordings(project)) == ["mxnet/tiny.ipynb"]
    result = record(project, "pytorch/nope")
    assert result.returncode == 1
    assert "no example matches pytorch/nope" in result.stderr and "pytorch/tiny" in result.stderr
