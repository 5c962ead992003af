"""The README's quick start works as written: every command in its ``sh`` blocks is held here.

A test runs each command, in its block's order and folder, as a reader on a fresh clone would, with
three differences that it states: ``make html`` and ``make test``, which ``make test`` itself has just
run, are checked with ``make -n``, and ``make serve`` is run by test_browser.py's serve test; the pip
line resolves with ``--dry-run`` (pip_resolution.py: no download of torch, its CPU index in
requirements-cpu.txt stood in for);
the downloaded example runs with the book's environment, which holds the versions that the zip pins
for Python 3.11 (test_downloads.py checks that), since the dry run installed nothing.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from downloads import CPU_REQUIREMENTS
from pip_resolution import CUDA_PACKAGE, cpu_index_standin, reader_env, resolved, with_standin
from recordings import all_examples, load_recording

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
DOWNLOADS = ROOT / "_build" / "doctrees" / "en" / "example-downloads"
SH_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.M | re.S)
MAKE_TARGET = re.compile(r"^([a-z0-9-]+):.*## ", re.M)


def commands(markdown: Path) -> list[list[str]]:
    """The commands of every ``sh`` block, in order, without trailing comments, as one list per block."""
    blocks = []
    for block in SH_BLOCK.findall(markdown.read_text(encoding="utf-8")):
        lines = [shlex.split(line, comments=True) for line in block.splitlines()]
        blocks.append([shlex.join(line) for line in lines if line])
    return blocks


def make_targets() -> set[str]:
    return set(MAKE_TARGET.findall((ROOT / "Makefile").read_text(encoding="utf-8")))


class Reader:
    """Runs README commands in a scratch folder that stands for the reader's, and the clone's root."""

    def __init__(self, scratch: Path):
        self.scratch = scratch
        self.cwd = ROOT
        self.started: list[tuple[str, subprocess.Popen]] = []
        self.standin = cpu_index_standin(scratch / "torch-cpu-index", ["3.11"])

    def run(self, command: str) -> None:
        args = shlex.split(command)
        if args[0] == "make":
            self.make(args)
        elif args[0] == "cd":
            self.cwd = self.cwd / args[1]
        elif args[:3] == ["python3", "-m", "zipfile"]:
            self.unzip(command, args)
        elif args[:3] == ["python3.11", "-m", "venv"]:
            self.check(command, subprocess.run(args, cwd=self.cwd, capture_output=True, text=True, timeout=120))
        elif args[:4] == [".venv/bin/python", "-m", "pip", "install"]:
            self.pip_install(command, args)
        elif args[0] == ".venv/bin/python" and args[1].endswith(".py"):
            # the book's environment (a clone's .venv, or the one the pip line would have filled)
            run = subprocess.Popen([sys.executable, *args[1:]], cwd=self.cwd, env={**reader_env(), "MPLBACKEND": "Agg"},
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            self.started.append((command, run))
        elif args[0] in ("python", "python3") and args[1].endswith(".py"):
            # as written: whichever Python the reader's PATH finds, without the book's environment
            self.check(command, subprocess.run(args, cwd=self.cwd, env=reader_env(), capture_output=True, text=True,
                                               timeout=300))
        else:
            pytest.fail(f"the README's command `{command}` is not held by tests/test_readme.py: teach Reader.run it")

    @staticmethod
    def check(command: str, result: subprocess.CompletedProcess) -> None:
        assert result.returncode == 0, f"`{command}` fails:\n{result.stdout[-1500:]}{result.stderr[-1500:]}"

    def make(self, args: list[str]) -> None:
        target = args[1]
        assert target in make_targets(), f"`make {target}`: the Makefile has no such target"
        self.check(shlex.join(args), subprocess.run(["make", "-n", *args[1:]], cwd=ROOT, capture_output=True, text=True))
        if target == "html":
            assert (ROOT / "_build" / "html" / "index.html").is_file(), "make html left no _build/html/index.html"

    def unzip(self, command: str, args: list[str]) -> None:
        """The reader's downloaded zip is the one that the English book offers."""
        assert args[3] == "-e", args
        name = args[4]
        framework = name.removesuffix(".zip").rsplit("-", 1)[1]
        shutil.copy(DOWNLOADS / framework / name, self.scratch / name)
        self.cwd = self.scratch
        self.check(command, subprocess.run(args, cwd=self.cwd, capture_output=True, text=True))

    def pip_install(self, command: str, args: list[str]) -> None:
        """The install line, dry, in the fresh virtual environment: it must resolve to torch's CPU build."""
        if "torch==" in (self.cwd / "requirements.txt").read_text():
            assert args[-2:] == ["-r", CPU_REQUIREMENTS], f"`{command}`: without {CPU_REQUIREMENTS} pip would take torch's CUDA build"
            cpu = self.cwd / CPU_REQUIREMENTS
            cpu.write_text(with_standin(cpu.read_text(), self.standin))
        report = self.scratch / "report.json"
        result = subprocess.run([*args, "--dry-run", "--quiet", "--report", str(report)], cwd=self.cwd,
                                env=reader_env(), capture_output=True, text=True, timeout=300)
        self.check(command, result)
        chosen = resolved(report)
        assert chosen.get("torch", "+cpu").endswith("+cpu"), f"`{command}` takes torch {chosen['torch']}"
        assert not [p for p in chosen if CUDA_PACKAGE.match(p)], f"`{command}` installs CUDA packages: {sorted(chosen)}"

    def finish(self) -> None:
        for command, run in self.started:
            stdout, stderr = run.communicate(timeout=300)
            assert run.returncode == 0, f"`{command}` fails:\n{stderr[-3000:]}"
            assert stdout.strip(), f"`{command}` prints nothing"


def test_every_command_of_the_readme_works_as_written(tmp_path):
    """Each command of the README's blocks, from reading the book to running a downloaded example."""
    blocks = commands(README)
    assert len(blocks) >= 4, f"the README's quick start has {len(blocks)} command blocks"
    reader = Reader(tmp_path)
    for block in blocks:
        reader.cwd = ROOT  # each block starts where the reader left the clone
        for command in block:
            reader.run(command)
    reader.finish()
    ran = [command for block in blocks for command in block]
    assert any(c.startswith(".venv/bin/python examples/") for c in ran), "the README runs no example of the clone"
    assert any(c.startswith("python3 -m zipfile") for c in ran), "the README runs no downloaded example"


def test_the_readme_says_which_versions_made_the_outputs():
    """The versions that the README names are those of the recordings' Python and of requirements.txt."""
    text = README.read_text(encoding="utf-8")
    pinned = dict(re.findall(r"^([\w-]+)==([\w.+]+)", (ROOT / "requirements.txt").read_text(), re.M))
    assert set(re.findall(r"numpy (\d+\.\d+\.\d+)", text)) == {pinned["numpy"]}
    recorded = {".".join(load_recording(e).stamp["versions"]["python"].split(".")[:2]) for e in all_examples(ROOT / "examples")}
    assert set(re.findall(r"its own Python \((\d+\.\d+)\)", text)) == recorded
    made_with = re.search(r"^PYTHON\s*\?= python(\d+\.\d+)$", (ROOT / "Makefile").read_text(), re.M)[1]
    assert f"Python {made_with} (the command `python{made_with}`)" in text
    assert f"`requirements.txt` pins instead: Python {made_with}," in text


def test_the_contributing_guide_names_only_make_targets_that_exist():
    """The maintainers' guide runs GPU commands that cannot run here; each names a real make target."""
    blocks = commands(CONTRIBUTING)
    named = [shlex.split(command)[1] for block in blocks for command in block if command.startswith("make ")]
    assert named, "CONTRIBUTING.md names no make command"
    assert not set(named) - make_targets(), f"CONTRIBUTING.md names unknown targets: {set(named) - make_targets()}"
