"""The execute-mode build and the recorded build, on a tiny project made in a temporary folder.

The tiny examples need no GPU and no framework: they print, glue values and draw nothing, so these
tests prove the pipeline (recording, stamps, staleness, atomicity, errors) in seconds.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

from tiny_books import build_tiny_book

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


def tiny_project(root: Path) -> Path:
    """Two tiny twin examples in ``root``, a docs tree that shows them, and no recordings yet."""
    for framework in ("pytorch", "mxnet"):
        folder = root / "examples" / framework
        folder.mkdir(parents=True)
        (folder / "helpers.py").write_text('WHERE = "on the CPU"\n')
        (folder / "tiny.py").write_text(example_source(framework))
    (root / "examples" / "common").mkdir()
    # the zips take their figures' units from the examples' own module of names (downloads.py)
    shutil.copy(ROOT / "examples" / "common" / "keys.py", root / "examples" / "common" / "keys.py")
    docs = root / "docs"
    docs.mkdir()
    (docs / "index.rst").write_text(textwrap.dedent("""\
        Tiny
        ====

        The answer is :measured:`pytorch/tiny::answer:.2f`.

        .. example:: tiny
           :cells: setup
        """))
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The tiny project, not recorded yet."""
    return tiny_project(tmp_path)


# Where the recorded project keeps what its record step printed.
RECORD_OUTPUT = "record-step-output.txt"


@pytest.fixture(scope="module")
def recorded_once(tmp_path_factory) -> Path:
    """The tiny project after one record step of both examples, made once for this module; what the step
    printed is in RECORD_OUTPUT."""
    root = tiny_project(tmp_path_factory.mktemp("recorded"))
    result = record(root)
    assert result.returncode == 0, result.stderr
    (root / RECORD_OUTPUT).write_text(result.stdout)
    return root


@pytest.fixture
def recorded(recorded_once: Path, tmp_path: Path) -> Path:
    """This test's own copy of the recorded tiny project (a record step takes seconds; a copy does not)."""
    return Path(shutil.copytree(recorded_once, tmp_path / "recorded"))


def record(project: Path, *patterns: str, as_run: bool = False) -> subprocess.CompletedProcess:
    args = [sys.executable, str(ROOT / "conf" / "record.py"), "--examples-dir", str(project / "examples")]
    args += ["--as-run"] if as_run else []
    if patterns:
        args += ["--examples", *patterns]
    return subprocess.run(args, capture_output=True, text=True, timeout=300)


def build(project: Path, language: str = "en") -> subprocess.CompletedProcess:
    env = dict(os.environ, BOOK_LANGUAGE=language)
    args = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "--no-color", "-c", str(ROOT / "conf"),
            "-D", f"examples_dir={project / 'examples'}", "-d", str(project / "doctrees"),
            str(project / "docs"), str(project / "html" / language)]
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)


def recordings(project: Path) -> dict[str, bytes]:
    folder = project / "examples" / "recordings"
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_record_stamps_and_the_book_shows_the_recording(recorded: Path):
    """A recorded run carries its stamp, and the built page shows code, output, stamp and glued value."""
    stamp = json.loads((recorded / "examples/recordings/pytorch/tiny.ipynb").read_text())["metadata"]["recording"]
    assert set(stamp) >= {"source_sha256", "recorded_at", "runtime_s", "machine", "versions", "glue"}
    assert stamp["versions"]["torch"] and stamp["machine"]["cpu"]
    assert stamp["glue"]["answer"] == "0.123456"

    built = build(recorded)
    assert built.returncode == 0, built.stderr
    page = BeautifulSoup((recorded / "html/en/index.html").read_text(), "html.parser")
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


def test_turkish_build_translates_the_stamp(recorded: Path):
    """The Turkish book says where a recording came from in Turkish, its date as Turkish writes one
    (7 Aralık 2026, not 2026-12-07), and links to the English page."""
    built = build(recorded, "tr")
    assert built.returncode == 0, built.stderr
    page = BeautifulSoup((recorded / "html/tr/index.html").read_text(), "html.parser")
    assert page.html["lang"] == "tr"
    stamp = json.loads((recorded / "examples/recordings/pytorch/tiny.ipynb").read_text())["metadata"]["recording"]
    day = datetime.fromisoformat(stamp["recorded_at"])
    months = ["Ocak", "Şubat", "Mart", "Nisan", "Mayıs", "Haziran", "Temmuz", "Ağustos", "Eylül", "Ekim",
              "Kasım", "Aralık"]
    assert f"Kayıt tarihi: {day.day} {months[day.month - 1]} {day.year} ·" in page.select_one(".recording-stamp").get_text()
    switch = page.select_one("a.language-switch")
    assert switch["href"] == "../en/index.html" and switch.get_text(strip=True) == "English"


def test_stale_recording_fails_the_build_and_names_the_fix(recorded: Path):
    """Changing an example (or a helper it uses) after its recording fails the recorded build."""
    helpers = recorded / "examples/mxnet/helpers.py"
    helpers.write_text(helpers.read_text() + "# changed\n")
    built = build(recorded)
    assert built.returncode != 0
    assert "mxnet/tiny is stale" in built.stderr
    assert "make record EXAMPLES=mxnet/tiny" in built.stderr
    # A run kept beside the recording must have run its sources; a recording of the changed code drops
    # the kept runs: they ran other code, so they are not comparable.
    refused = record(recorded, "mxnet/*", as_run=True)
    assert refused.returncode != 0 and "mxnet/tiny is stale" in refused.stderr
    runs = recorded / "examples/recordings/mxnet/tiny.runs.json"
    runs.write_text(json.dumps([json.loads((recorded / "examples/recordings/mxnet/tiny.ipynb").read_text())
                                ["metadata"]["recording"]]))
    assert record(recorded, "mxnet/*").returncode == 0
    assert not runs.exists()
    assert "pytorch/tiny" not in built.stderr


def test_missing_recording_fails_the_build(project: Path):
    """A book whose examples were never recorded does not build from nothing."""
    built = build(project)
    assert built.returncode != 0
    assert "pytorch/tiny has no recording" in built.stderr


def test_failing_example_fails_the_execute_build_and_keeps_recordings(recorded: Path):
    """An error in one cell fails the execute build, names the script and cell, and changes no recording."""
    before = recordings(recorded)
    script = recorded / "examples/pytorch/tiny.py"
    script.write_text(example_source("pytorch", 'raise RuntimeError("planted failure")'))
    result = record(recorded)
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "planted failure" in output and "pytorch/tiny" in output
    assert "(pytorch/tiny failed)" in result.stderr and "recordings are unchanged" in result.stderr
    assert recordings(recorded) == before


def test_interrupted_execute_build_keeps_recordings(recorded: Path):
    """Stopping the execute build midway (Ctrl-C) leaves every recording as it was."""
    before = recordings(recorded)
    started = recorded / "mxnet-started"
    (recorded / "examples/mxnet/tiny.py").write_text(example_source(
        "mxnet", f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(60)"))
    args = [sys.executable, str(ROOT / "conf" / "record.py"), "--examples-dir", str(recorded / "examples")]
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while not started.exists():  # the example's kernel is running its cells
        assert process.poll() is None and time.monotonic() < deadline, "the example never started"
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGINT)
    process.wait(timeout=60)
    assert process.returncode != 0
    assert recordings(recorded) == before


def test_record_selects_examples_and_rejects_unknown_names(project: Path):
    """EXAMPLES narrows a recording to matching examples; a name that matches nothing is an error."""
    result = record(project, "mxnet/*")
    assert result.returncode == 0, result.stderr
    assert list(recordings(project)) == ["mxnet/tiny.ipynb"]
    result = record(project, "pytorch/nope")
    assert result.returncode == 1
    assert "no example matches pytorch/nope" in result.stderr and "pytorch/tiny" in result.stderr


def test_record_prints_progress_a_summary_and_stamps_the_step(recorded: Path):
    """Each example prints its name, the elapsed time and an estimate from the previous run; then a table
    and the record step's wall time, which every stamp of the step carries."""
    def stamps() -> dict:
        return {f: json.loads((recorded / f"examples/recordings/{f}/tiny.ipynb").read_text())["metadata"]["recording"]
                for f in ("pytorch", "mxnet")}

    first = (recorded / RECORD_OUTPUT).read_text()  # the first record step of these examples
    assert re.search(r"^\[1/2\] mxnet/tiny: running \(not recorded before; no estimate of the time left\); "
                     r"\d+ s elapsed$", first, re.M), first
    done = re.findall(r"^\[\d/2\] \w+/tiny: done in (\d+\.\d) s; (\d+) s elapsed$", first, re.M)
    assert len(done) == 2 and int(done[1][1]) >= int(float(done[0][0]) + float(done[1][0])), first
    before = stamps()
    again = record(recorded)
    assert again.returncode == 0, again.stderr
    after = stamps()
    estimate = f"took {before['mxnet']['runtime_s']:.1f} s last time"
    left = f"about {before['mxnet']['runtime_s'] + before['pytorch']['runtime_s']:.0f} s left"
    assert f"[1/2] mxnet/tiny: running ({estimate}; {left}); " in again.stdout, again.stdout
    wall = after["mxnet"]["record_step"]["wall_s"]
    assert after["pytorch"]["record_step"] == {"wall_s": wall, "shard": "", "examples": ["pytorch/tiny", "mxnet/tiny"]}
    assert after["pytorch"]["recorded_at"] == after["mxnet"]["recorded_at"], "one time for the whole step"
    assert max(s["runtime_s"] for s in after.values()) < wall < 300
    assert re.search(rf"^Record step: 2 examples in {wall} s wall", again.stdout, re.M)
    row = f"mxnet/tiny    {after['mxnet']['runtime_s']:7.1f}  {before['mxnet']['runtime_s']:12.1f}"
    assert row in again.stdout.splitlines()
    # Each cell's run time moves from the cells into the stamp, and the summary names the slowest.
    for framework in ("pytorch", "mxnet"):
        notebook = json.loads((recorded / f"examples/recordings/{framework}/tiny.ipynb").read_text())
        assert not any("execution" in cell["metadata"] for cell in notebook["cells"])
        cells = after[framework]["cell_runtime_s"]
        assert set(cells) == {"cell 0", "setup"} and 0 < cells["setup"] < after[framework]["runtime_s"]
    slowest = re.search(r"^slowest cells: (.*)$", again.stdout, re.M)
    assert slowest and f"pytorch/tiny [setup] {after['pytorch']['cell_runtime_s']['setup']:.1f} s" in slowest[1]
    # The second run of the same code keeps the first one's stamp, for the reproducibility table; a run
    # kept as a run only (a second GPU model) joins them and leaves the recording the book shows.
    for framework in ("pytorch", "mxnet"):
        kept = recorded / f"examples/recordings/{framework}/tiny.runs.json"
        assert json.loads(kept.read_text()) == [before[framework]]
    shown = recordings(recorded)
    extra = record(recorded, "mxnet/*", as_run=True)
    assert extra.returncode == 0, extra.stderr
    runs = json.loads((recorded / "examples/recordings/mxnet/tiny.runs.json").read_text())
    assert runs[0] == before["mxnet"] and runs[1]["recorded_at"] >= after["mxnet"]["recorded_at"]
    assert {k: v for k, v in recordings(recorded).items() if "runs" not in k} == \
        {k: v for k, v in shown.items() if "runs" not in k}, "the recordings the book shows changed"


def test_execution_times_page_shows_the_record_step_in_both_languages(project: Path):
    """Next to each example's own run time, the wall time of the whole record step; Turkish numbers
    with a decimal comma. A recording without its record step fails the page."""
    with (project / "docs/index.rst").open("a") as index:
        index.write("\n.. execution-times::\n")
    assert record(project, "mxnet/*").returncode == 0
    assert record(project, "pytorch/*").returncode == 0
    stamps = {f: json.loads((project / f"examples/recordings/{f}/tiny.ipynb").read_text())["metadata"]["recording"]
              for f in ("pytorch", "mxnet")}
    expected = {
        "en": ("Record step, wall (s)", "{:.1f} (examples: 1)", "."),
        "tr": ("Kayıt adımında geçen süre (s)", "{:.1f} (örnek sayısı: 1)", ","),
    }
    for language, (header, cell, point) in expected.items():
        built = build(project, language)
        assert built.returncode == 0, built.stderr
        page = BeautifulSoup((project / f"html/{language}/index.html").read_text(), "html.parser")
        table = page.select_one("table.execution-times")
        headers = [th.get_text(strip=True) for th in table.select("thead th")]
        assert headers[3] == header
        rows = {tr.select("td")[1].get_text(strip=True): [td.get_text(strip=True) for td in tr.select("td")]
                for tr in table.select("tbody tr")}
        for framework, title in (("pytorch", "PyTorch"), ("mxnet", "MXNet")):
            stamp = stamps[framework]
            assert rows[title][2] == f"{stamp['runtime_s']:.1f}".replace(".", point)
            assert rows[title][3] == cell.format(stamp["record_step"]["wall_s"]).replace(".", point)
    # A recording that does not say how long its record step took fails the page and names the fix.
    path = project / "examples/recordings/mxnet/tiny.ipynb"
    notebook = json.loads(path.read_text())
    del notebook["metadata"]["recording"]["record_step"]
    path.write_text(json.dumps(notebook))
    built = build(project)
    assert built.returncode != 0
    assert "mxnet/tiny's recording does not say how long its record step took" in built.stderr
    assert "make record EXAMPLES=mxnet/tiny" in built.stderr


# Shards ------------------------------------------------------------------------------------------

def load_record_module():
    spec = importlib.util.spec_from_file_location("record_script", ROOT / "conf" / "record.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_examples(tmp_path: Path, runtimes: dict[str, float | None]):
    """Example scripts with recordings that took the given times (None: never recorded)."""
    from recordings import all_examples

    for ident, runtime in runtimes.items():
        framework, name = ident.split("/")
        (tmp_path / framework).mkdir(parents=True, exist_ok=True)
        (tmp_path / framework / f"{name}.py").write_text(HEADER)
        if runtime is not None:
            recording = tmp_path / "recordings" / framework / f"{name}.ipynb"
            recording.parent.mkdir(parents=True, exist_ok=True)
            recording.write_text(json.dumps({"metadata": {"recording": {"runtime_s": runtime}}}))
    return all_examples(tmp_path)


def test_shards_split_by_previous_run_times(tmp_path: Path):
    """The slowest example goes first, each to the least loaded shard; unrecorded ones count 60 s."""
    record_module = load_record_module()
    examples = fake_examples(tmp_path, {"pytorch/a": 100.0, "pytorch/b": 60.0, "mxnet/c": 50.0,
                                        "mxnet/d": 10.0, "mxnet/e": None})
    parts = [[e.ident for e in part] for part in record_module.split(examples, 2)]
    # a (100) → 1; e (60, unrecorded) and b (60) → 2; c (50) → 1; d (10) → 2
    assert parts == [["mxnet/c", "pytorch/a"], ["mxnet/d", "mxnet/e", "pytorch/b"]]
    # Ties go by name, whatever order the examples come in: a → 1, b → 2, c → 1, d → 2.
    ties = fake_examples(tmp_path / "ties", {"pytorch/a": 10.0, "pytorch/b": 10.0, "pytorch/c": 5.0, "pytorch/d": 5.0})
    for order in (ties, list(reversed(ties))):
        parts = [[e.ident for e in part] for part in record_module.split(order, 2)]
        assert parts == [["pytorch/a", "pytorch/c"], ["pytorch/b", "pytorch/d"]]


@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_shards_cover_every_example_exactly_once(count: int):
    """For the book's own examples, the N shards together are every example, each exactly once, and
    every machine computes the same split."""
    record_module = load_record_module()
    from recordings import all_examples

    examples = all_examples(ROOT / "examples")
    assert len(examples) >= 6
    if count > len(examples):
        count = len(examples)
    parts = record_module.split(examples, count)
    flat = [e.ident for part in parts for e in part]
    assert sorted(flat) == sorted(e.ident for e in examples) and len(flat) == len(set(flat))
    assert all(parts) and parts == record_module.split(list(reversed(examples)), count)


def test_shard_option_rejects_bad_input_and_empty_shards(project: Path):
    """SHARD must be K/N with 1 <= K <= N, and a shard with nothing to run is an error."""
    for bad in ("0/2", "3/2", "2", "a/b"):
        result = record(project, "--shard", bad)
        assert result.returncode == 1 and f"SHARD={bad!r} is not K/N" in result.stderr
    result = record(project, "--shard", "3/3")
    assert result.returncode == 1 and "shard 3/3 has no examples: there are only 2" in result.stderr


def test_shards_merge_by_copying_their_recordings(project: Path, tmp_path: Path):
    """Two machines each record one shard; copying both shards' files together gives every recording, current."""
    other = tmp_path / "other-machine"
    shutil.copytree(project, other)
    assert record(project, "--shard", "1/2").returncode == 0
    assert record(other, "--shard", "2/2").returncode == 0
    first, second = recordings(project), recordings(other)
    assert len(first) == len(second) == 1 and set(first).isdisjoint(second)
    shutil.copytree(other / "examples/recordings", project / "examples/recordings", dirs_exist_ok=True)
    stamp = json.loads(second[next(iter(second))])["metadata"]["recording"]
    assert stamp["record_step"]["shard"] == "2/2"
    check = subprocess.run([sys.executable, str(ROOT / "conf" / "record.py"), "--check", "--examples-dir",
                            str(project / "examples")], capture_output=True, text=True)
    assert check.returncode == 0 and "2 recordings match their examples" in check.stdout, check.stderr


def test_check_recordings_fails_on_a_changed_example(recorded: Path):
    """`make check-recordings`: fine after a record; a changed helper or a missing recording fails it."""
    args = [sys.executable, str(ROOT / "conf" / "record.py"), "--check", "--examples-dir", str(recorded / "examples")]
    fine = subprocess.run(args, capture_output=True, text=True)
    assert fine.returncode == 0 and "2 recordings match their examples" in fine.stdout
    helpers = recorded / "examples/pytorch/helpers.py"
    helpers.write_text(helpers.read_text() + "# changed\n")
    stale = subprocess.run(args, capture_output=True, text=True)
    assert stale.returncode == 1 and "pytorch/tiny is stale" in stale.stderr and "mxnet/tiny" not in stale.stderr
    (recorded / "examples/recordings/mxnet/tiny.ipynb").unlink()
    missing = subprocess.run(args, capture_output=True, text=True)
    assert missing.returncode == 1 and "mxnet/tiny has no recording" in missing.stderr


# The Makefile: which environment records, and when a GPU is needed ------------------------------

def fake_nvidia_smi(folder: Path, gpu: bool) -> dict:
    """An environment whose PATH starts with a fake `nvidia-smi` that lists one GPU, or none (as the
    real one does without a driver); it leaves a mark when something calls it."""
    folder.mkdir(exist_ok=True)
    listing = 'echo "GPU 0: NVIDIA H200 (UUID: GPU-0)"' if gpu else 'echo "No devices were found"; exit 6'
    script = folder / "nvidia-smi"
    script.write_text(f"#!/bin/sh\ntouch {folder / 'called'}\n{listing}\n")
    script.chmod(0o755)
    # Nothing from the calling make (MAKEFLAGS, PYTESTOPTS=... given to `make test`) leaks in.
    return {"PATH": f"{folder}:{os.environ['PATH']}", "HOME": os.environ.get("HOME", "/")}


def make_n(env: dict, *args: str) -> subprocess.CompletedProcess:
    """What make would run (-n), in this project."""
    return subprocess.run(["make", "-n", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("goal", [["record"], ["html", "EXECUTE=1"]])
def test_gpu_machine_records_with_pypi_cuda_torch_in_its_own_environment(tmp_path: Path, goal: list[str]):
    """With an NVIDIA GPU, recording installs torch==<version> from PyPI (never +cpu) into .venv-gpu and
    records with it; the book itself still builds with .venv."""
    version = re.search(r"^torch==([\d.]+)\+cpu$", (ROOT / "requirements.txt").read_text(), re.M)[1]
    result = make_n(fake_nvidia_smi(tmp_path, gpu=True), *goal, "--always-make")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    install = next(i for i, line in enumerate(lines) if "install --quiet --index-url https://pypi.org/simple" in line)
    assert lines[install].split()[-1] == f"torch=={version}" and "PIP_CONFIG_FILE=/dev/null" in lines[install - 1]
    assert "-u PIP_EXTRA_INDEX_URL" in lines[install - 1]
    assert "+cpu" not in result.stdout.replace("'^torch=='", "")
    assert "python3.11 -m venv .venv-gpu" in lines
    assert ".venv-gpu/bin/python -m pip install --quiet -r .venv-gpu/requirements.txt" in lines
    assert any(line.startswith(".venv-gpu/bin/python conf/record.py") for line in lines)
    if "html" in goal:
        assert any(re.search(r"BOOK_LANGUAGE=\$lang (BOOK_PDF_DIR=\S+ )?\.venv/bin/python -m sphinx", line) for line in lines)


def test_gpu_environment_requirements_drop_only_the_cpu_torch_and_its_index(tmp_path: Path):
    """The GPU environment's list is requirements.txt without its torch line and without torch's CPU
    index (torch comes from PyPI)."""
    result = subprocess.run(["make", f"GPU_VENV={tmp_path}", f"{tmp_path}/requirements.txt"], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    ours = (tmp_path / "requirements.txt").read_text().splitlines()
    theirs = (ROOT / "requirements.txt").read_text().splitlines()
    assert [line for line in theirs if line.startswith("torch==")] == [next(l for l in theirs if "+cpu" in l)]
    cpu_index = "--extra-index-url https://download.pytorch.org/whl/cpu"
    assert cpu_index in theirs, "requirements.txt does not name torch's CPU index, so make html fails outside CI"
    assert ours == [line for line in theirs if not line.startswith("torch==") and line != cpu_index]


def test_the_first_set_up_says_what_it_installs_and_shows_pips_progress(tmp_path: Path):
    """The first `make html` says what it installs and about how long it takes, and pip prints its
    progress (no --quiet on requirements.txt); the next one installs nothing and says nothing of it.
    PYTHON is a stand-in whose venv's python only notes how pip was called."""
    calls = tmp_path / "calls.txt"
    fake_python = tmp_path / "python3.11"
    fake_python.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        # "python3.11 -m venv DIR": make DIR/bin/python, which notes its arguments
        mkdir -p "$3/bin"
        printf '#!/bin/sh\\necho "$*" >> {calls}\\n' > "$3/bin/python"
        chmod +x "$3/bin/python"
        """))
    fake_python.chmod(0o755)
    venv = tmp_path / "venv"
    make = ["make", f"VENV={venv}", f"PYTHON={fake_python}", f"{venv}/.installed"]
    env = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}  # nothing from the calling make
    first = subprocess.run(make, cwd=ROOT, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert re.search(r"Setting up .*venv/.*pip installs requirements\.txt .*about 1\.7 GB.*a few minutes", first.stdout)
    installs = [line for line in calls.read_text().splitlines() if "-r requirements.txt" in line]
    # One retry: an index that cannot be reached fails fast instead of backing off for every package.
    assert installs == ["-m pip install --retries 1 -r requirements.txt"], \
        f"pip was called as {installs} (quiet hides its progress)"
    second = subprocess.run(make, cwd=ROOT, env=env, capture_output=True, text=True)
    assert second.returncode == 0 and "Setting up" not in second.stdout and "pip" not in second.stdout, second.stdout
    assert len(calls.read_text().splitlines()) == 2, "the second run called pip again"


@pytest.mark.parametrize("goal", [["record"], ["html", "EXECUTE=1"], ["test", "EXECUTE=1"], ["gpu-record"]])
def test_recording_without_a_gpu_stops_with_a_clear_message(tmp_path: Path, goal: list[str]):
    """No GPU: recording stops before doing anything and says how to build or to record on the CPU."""
    result = make_n(fake_nvidia_smi(tmp_path, gpu=False), *goal)
    assert result.returncode != 0 and result.stdout == ""
    assert "Recording needs an NVIDIA GPU, and `nvidia-smi -L` lists none here" in result.stderr
    assert "add RECORD_ON_CPU=1" in result.stderr


def test_recording_on_the_cpu_when_asked_uses_the_book_environment(tmp_path: Path):
    result = make_n(fake_nvidia_smi(tmp_path, gpu=False), "record", "RECORD_ON_CPU=1", "SHARD=2/3",
                    "EXAMPLES=mxnet/*")
    assert result.returncode == 0, result.stderr
    assert ".venv/bin/python conf/record.py --examples 'mxnet/*' --shard 2/3" in result.stdout.splitlines()
    assert ".venv-gpu" not in result.stdout
    kept = make_n(fake_nvidia_smi(tmp_path, gpu=False), "record", "RECORD_ON_CPU=1", "AS_RUN=1")
    assert ".venv/bin/python conf/record.py --as-run" in kept.stdout.splitlines(), kept.stdout


@pytest.mark.parametrize("goal", ["html", "test", "check-recordings"])
def test_cpu_goals_never_look_for_a_gpu(tmp_path: Path, goal: str):
    """`make html` and `make test` are the same with or without a GPU: no nvidia-smi, no .venv-gpu;
    `make test` deselects the GPU tests, gives the numpy 2 and the Python 3.12 tests their environments and
    spreads the test files over two processes."""
    for gpu in (True, False):
        env = fake_nvidia_smi(tmp_path, gpu)
        result = make_n(env, goal)
        assert result.returncode == 0, result.stderr
        assert not (tmp_path / "called").exists() and ".venv-gpu" not in result.stdout
    if goal == "test":
        command = result.stdout.splitlines()[-1]
        assert command == (f"MXNET_NUMPY2_PYTHON={ROOT}/.venv-numpy2/bin/python MXNET_PY312_VENV={ROOT}/.venv-mxnet312 "
                           ".venv/bin/python -m pytest tests -m 'not gpu' -n 2 --dist loadfile ")


def test_gpu_tests_need_a_gpu_and_run_only_the_gpu_marker(tmp_path: Path):
    stopped = make_n(fake_nvidia_smi(tmp_path, gpu=False), "test-gpu")
    assert stopped.returncode != 0 and "the GPU tests need one. `make test` runs the others" in stopped.stderr
    decorator = re.compile(r"^ *(@pytest\.mark\.gpu|pytestmark = .*pytest\.mark\.gpu)", re.M)
    marked = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob("test_*.py") if decorator.search(p.read_text()))
    assert "tests/test_pipeline.py" not in marked  # it mentions the marker, in a string
    result = make_n(fake_nvidia_smi(tmp_path, gpu=True), "test-gpu")
    if marked:
        assert result.returncode == 0, result.stderr
        assert result.stdout.splitlines()[-1].split() == [".venv-gpu/bin/python", "-m", "pytest", "-m", "gpu", *marked]
    else:
        assert result.returncode != 0 and "no test file has tests marked gpu" in result.stderr


def test_pytest_knows_the_gpu_marker_and_rejects_unknown_ones(tmp_path: Path):
    """pytest.ini registers `gpu` strictly: a typo in a marker is an error, not a test that always runs."""
    test = tmp_path / "test_markers.py"
    test.write_text("import pytest\n\n@pytest.mark.gpu\ndef test_a():\n    pass\n\n"
                    "@pytest.mark.gpuu\ndef test_b():\n    pass\n")
    result = subprocess.run([sys.executable, "-m", "pytest", "-c", str(ROOT / "pytest.ini"), "--rootdir",
                             str(tmp_path), "-m", "not gpu", str(test)], capture_output=True, text=True)
    assert result.returncode != 0 and "'gpuu' not found in `markers` configuration option" in result.stdout


# Offline GPU machines ----------------------------------------------------------------------------

def write_wheel(folder: Path, name: str) -> None:
    """A minimal pure-Python wheel whose package sets VALUE = name."""
    import zipfile

    folder.mkdir(parents=True, exist_ok=True)
    info = f"{name}-1.0.dist-info"
    files = {f"{name}/__init__.py": f"VALUE = {name!r}\n",
             f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(folder / f"{name}-1.0-py3-none-any.whl", "w") as wheel:
        for path, text in files.items():
            wheel.writestr(path, text)


def test_gpu_install_takes_each_wheel_folder_once(tmp_path: Path):
    """The offline machine gets one wheel folder per call: each call installs what is new, keeps what
    was installed, and says which folders it had already. MXNet's system libraries are copied beside
    it only where the machine lacks them."""
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "python3").symlink_to(sys.executable)  # the machine's python3 (here: one with pip)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}")
    # the real imports need the real packages (test_bytecode_imports_name_modules_that_exist)
    make = ["make", "gpu-install", f"WHEELHOUSE={wheels}", f"GPU_SITE={site}",
            "BYTECODE_FOR_record=pytorch:import recordpkg", "BYTECODE_FOR_mxnet=mxnet:import mxnet"]
    empty = subprocess.run(make, cwd=ROOT, env=env, capture_output=True, text=True)
    assert empty.returncode != 0 and "No wheels in" in empty.stdout
    write_wheel(wheels / "record", "recordpkg")
    first = subprocess.run(make, cwd=ROOT, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    write_wheel(wheels / "mxnet", "mxnet")
    (wheels / "mxnet/lib").mkdir()
    (wheels / "mxnet/lib/libgomp.so.1").write_text("a copy")
    second = subprocess.run(make, cwd=ROOT, env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert f"{wheels}/record/: installed already" in second.stdout and f"Installing {wheels}/mxnet/" in second.stdout
    # the bytecode of what was imported, written once per wheel folder for a python3 that writes none
    assert second.stdout.count("Writing the bytecode") == 1 and f"with {wheels}/mxnet/" in second.stdout
    assert list((site / "pycache").rglob("recordpkg/__pycache__/__init__.*.pyc")) == [] and \
        len(list((site / "pycache").rglob("recordpkg/__init__.*.pyc"))) == 1
    check = subprocess.run([sys.executable, "-c", "import recordpkg, mxnet; print(recordpkg.VALUE, mxnet.VALUE)"],
                           env=dict(os.environ, PYTHONPATH=str(site)), capture_output=True, text=True)
    assert check.stdout == "recordpkg mxnet\n", check.stderr
    assert not (site / "mxnet/libgomp.so.1").exists()  # this machine has the libraries
    lacking = subprocess.run([*make, "LOADS_MXNET_SYSTEM_LIBS=import ctypes; ctypes.CDLL('libgomp.so.99')"],
                             cwd=ROOT, env=env, capture_output=True, text=True)
    assert lacking.returncode == 0 and "This machine lacks libgomp or libquadmath" in lacking.stdout
    assert (site / "mxnet/libgomp.so.1").read_text() == "a copy"


def test_bytecode_imports_name_modules_that_exist():
    """gpu-install imports these to write their bytecode; a misspelt module would fail only there."""
    database = subprocess.run(["make", "-pn", "help"], cwd=ROOT, capture_output=True, text=True).stdout
    lists = dict(re.findall(r"^BYTECODE_FOR_(\w+) := (\w+:.*)$", database, re.M))
    assert set(lists) == {"record", "mxnet"}, lists
    for name, what in lists.items():
        folder, _, imports = what.partition(":import ")
        modules = [m.strip() for m in imports.split(",")]
        # as the helpers do, the examples folder is on the path too (for ``common``)
        check = ("import importlib.util, sys; sys.path.append('..'); missing = [m for m in sys.argv[1:] "
                 "if importlib.util.find_spec(m) is None]; print(missing)")
        found = subprocess.run([sys.executable, "-c", check, *modules], cwd=ROOT / "examples" / folder,
                               capture_output=True, text=True)
        assert found.stdout.strip() == "[]", (name, found.stdout, found.stderr)
        assert len(modules) >= 4 and "helpers" in modules


def test_gpu_record_needs_both_wheel_folders_installed(tmp_path: Path):
    env = fake_nvidia_smi(tmp_path, gpu=True)
    site = tmp_path / "site"
    site.mkdir()
    (site / ".installed-record").touch()
    result = subprocess.run(["make", "gpu-record", f"GPU_SITE={site}"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode != 0 and f"{site}/ lacks .wheelhouse/mxnet" in result.stdout
    (site / ".installed-mxnet").touch()
    planned = make_n(env, "gpu-record", f"GPU_SITE={site}")
    assert f"PYTHONPATH={site} make record RECORD_PYTHON=python3" in planned.stdout


# The CI definition -------------------------------------------------------------------------------

WORKFLOW = ROOT / ".github" / "workflows" / "book.yml"


def actionlint(*args: str) -> subprocess.CompletedProcess:
    binary = Path(sys.executable).parent / "actionlint"
    return subprocess.run([str(binary), "-no-color", *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_workflow_passes_actionlint(tmp_path: Path):
    """actionlint accepts the workflow, and rejects a broken copy of it (so it does check)."""
    result = actionlint(str(WORKFLOW.relative_to(ROOT)))
    assert result.returncode == 0, result.stdout + result.stderr
    broken = ROOT / ".github" / "workflows" / f"broken-{os.getpid()}.yml"
    broken.write_text(WORKFLOW.read_text().replace("steps.current.outcome", "steps.currnet.outcome"))
    try:
        result = actionlint(str(broken.relative_to(ROOT)))
    finally:
        broken.unlink()
    assert result.returncode == 1 and 'property "currnet" is not defined' in result.stdout


def test_workflow_tests_on_cpu_and_records_every_shard_on_gpu():
    """CPU: `make test` on every push and PR, the PDFs uploaded. GPU: one record job per shard K/N for
    K = 1..N, the recordings and the HTML with its PDFs uploaded, a stale recording fails the job, and
    the GPU tests run."""
    workflow = yaml.safe_load(WORKFLOW.read_text())
    assert set(workflow[True]) == {"push", "pull_request"}  # YAML 1.1 reads the key `on` as True
    jobs = workflow["jobs"]
    runs = {name: [step.get("run", "") for step in job["steps"]] for name, job in jobs.items()}
    assert "make test" in runs["test"] and "self-hosted" not in str(jobs["test"]["runs-on"])
    record_job = jobs["record"]
    assert record_job["runs-on"] == ["self-hosted", "gpu"]
    shards = record_job["strategy"]["matrix"]["shard"]
    count = int(re.search(r"SHARD=\$\{\{ matrix.shard \}\}/(\d+)", runs["record"][2])[1])
    assert shards == list(range(1, count + 1))
    assert runs["record"][1] == f"make check-recordings SHARD=${{{{ matrix.shard }}}}/{count}"
    check = record_job["steps"][1]
    assert check["continue-on-error"] and record_job["steps"][-1]["if"] == f"steps.{check['id']}.outcome == 'failure'"
    assert "exit 1" in runs["record"][-1]
    uploads = [step["with"]["path"] for job in jobs.values() for step in job["steps"]
               if step.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads == ["_build/pdf/", "examples/recordings/", "_build/html/"]
    assert jobs["test-gpu"]["runs-on"] == ["self-hosted", "gpu"] and "make test-gpu" in runs["test-gpu"]
    assert jobs["html"]["needs"] == "record" and "make pdf" in runs["html"]


def test_the_stamps_of_a_record_step_carry_the_steps_one_time(tmp_path: Path):
    """The stamp takes the step's time, not a clock of its own: examples stamped seconds apart would
    otherwise read as different record steps under the reproducibility table."""
    module = load_record_module()
    (example,) = fake_examples(tmp_path, {"pytorch/tiny": None})
    glue = tmp_path / "executed" / f"{example.ident}.glue.json"
    glue.parent.mkdir(parents=True)
    glue.write_text(json.dumps({"devices": {"data": {"text/plain": "['cpu (Some CPU)']"}}}))
    stamp = module.stamp(example, tmp_path / "executed", {example.ident: {"succeeded": True, "runtime": 1.0}},
                         "hash", {"wall_s": 1.0}, {}, "2026-12-03T17:07:34+00:00")
    assert stamp["recorded_at"] == "2026-12-03T17:07:34+00:00"


def test_an_edited_extension_or_catalog_makes_sphinx_read_every_page_again(tmp_path):
    """conf.py hashes our extensions and catalogs into a setting that Sphinx compares between builds: a
    build with the same hash reads no page again, one with another hash reads them all (a page written
    by an old extension or catalog would otherwise stay in the book)."""
    for framework in ("pytorch", "mxnet"):
        (tmp_path / "examples" / framework).mkdir(parents=True)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.rst").write_text("Tiny\n====\n\nText.\n")
    doctree = tmp_path / "doctrees" / "en" / "index.doctree"

    def build_and_read(*settings: str) -> int:
        built = build_tiny_book(tmp_path, "en", *settings)
        assert built.returncode == 0, built.stderr
        return doctree.stat().st_mtime_ns

    first = build_and_read()
    assert build_and_read() == first, "an unchanged book read its page again"
    assert build_and_read("conf_sources_sha256=edited") != first, "a changed hash did not read the page again"
