"""Resolve a download's install line with pip, as a reader's machine would, without installing anything.

``pip install --dry-run --report`` resolves the line against PyPI for a chosen Python and writes what
it would install. The reader's CPU file (requirements-cpu.txt) names PyTorch's CPU index; instead of
downloading its 190 MB wheel, a wheel that holds only the metadata of the CPU build (read from the
book's own torch, which is that build) stands for the index, in a folder that pip reads with
--find-links. PyPI's torch stays in view, so a line that let pip take the CUDA build would pull its
NVIDIA packages into the report.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

from downloads import TORCH_CPU_INDEX

# manylinux tags of an x86-64 Linux of the last years: the wheels a reader's Linux machine takes.
PLATFORMS = ["manylinux2014_x86_64"] + [f"manylinux_2_{n}_x86_64" for n in (17, 24, 27, 28)]
# What only the CUDA build of torch needs (nvidia-ml-py, which reads the GPU's peaks, is no part of it).
CUDA_PACKAGE = re.compile(r"^(nvidia-(?!ml-py$)|cuda-|triton$)")
# pip settings of the machine that runs the tests, which a reader does not have.
MACHINE_PIP_SETTINGS = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CONSTRAINT")


def reader_env() -> dict[str, str]:
    """The environment for pip: no configuration file, no index or constraint of this machine."""
    env = {k: v for k, v in os.environ.items() if k not in MACHINE_PIP_SETTINGS}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def python_tag(python: str) -> str:
    return "cp" + python.replace(".", "")


def cpu_index_standin(folder: Path, pythons: list[str]) -> Path:
    """A folder holding, for each Python, a metadata-only wheel of the book's torch (the CPU build)."""
    torch = metadata.distribution("torch")
    assert torch.version.endswith("+cpu"), f"the book's torch is {torch.version}, not the CPU build"
    folder.mkdir(parents=True, exist_ok=True)
    info = f"torch-{torch.version}.dist-info"
    for python in pythons:
        tag = f"{python_tag(python)}-{python_tag(python)}-manylinux_2_28_x86_64"
        wheel = {
            f"{info}/METADATA": torch.read_text("METADATA"),
            f"{info}/WHEEL": f"Wheel-Version: 1.0\nRoot-Is-Purelib: false\nTag: {tag}\n",
            f"{info}/RECORD": "",
        }
        with zipfile.ZipFile(folder / f"torch-{torch.version}-{tag}.whl", "w") as archive:
            for name, text in wheel.items():
                archive.writestr(name, text)
    return folder


def install_line(readme: str, requirements: str) -> list[str]:
    """The pip line of a zip's README that installs the file ``requirements``."""
    lines = [shlex.split(line) for line in readme.splitlines() if "-m pip install" in line]
    chosen = [line for line in lines if line[-2:] == ["-r", requirements]]
    assert len(chosen) == 1, f"the README has {len(chosen)} install lines of {requirements}: {lines}"
    return chosen[0]


def with_standin(requirements: str, standin: Path | None) -> str:
    """A requirements file with torch's CPU index replaced by its stand-in (None: by nothing, as when
    pip cannot reach the index, which it then leaves out with a warning)."""
    line = f"--extra-index-url {TORCH_CPU_INDEX}"
    assert line in requirements.splitlines(), f"the file names no CPU index:\n{requirements}"
    return requirements.replace(line, f"--find-links {standin}" if standin else "")


def resolve_command(line: list[str], python: str, folder: Path) -> list[str]:
    """A README's install line as pip runs it for ``python`` on Linux, dry, with a report."""
    assert line[:4] == ["python", "-m", "pip", "install"], line
    args = list(line[4:])
    platforms = [option for platform in PLATFORMS for option in ("--platform", platform)]
    return [sys.executable, "-m", "pip", "install", *args, "--dry-run", "--ignore-installed", "--quiet",
            "--only-binary=:all:", "--python-version", python, "--implementation", "cp", *platforms,
            "--target", str(folder / "target"), "--report", str(folder / "report.json")]


def resolved(report: Path) -> dict[str, str]:
    """What pip would install: name -> version."""
    return {item["metadata"]["name"].lower(): item["metadata"]["version"]
            for item in json.loads(report.read_text())["install"]}


def pins_for(requirements: str, python: str) -> dict[str, str]:
    """The version each line of a requirements.txt pins on ``python`` (lines whose marker holds)."""
    pins = {}
    for line in requirements.splitlines():
        requirement = Requirement(line)
        if requirement.marker is None or requirement.marker.evaluate({"python_version": python}):
            pins[requirement.name.lower()] = str(Version(next(iter(requirement.specifier)).version))
    return pins
