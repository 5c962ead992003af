"""Every example, given an option that it cannot honour on a machine without a GPU, says so: exit 2
with one line that names the option, prefixed with the script's name as argparse's errors are, or, for
an option that does nothing on this run, one line that names it while the run goes on."""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SCRIPTS = sorted(p.name for p in (EXAMPLES / "pytorch").glob("*.py") if p.name != "helpers.py")
FRAMEWORKS = ("pytorch", "mxnet")
# No GPU for torch, even on a machine with one; MXNet's CPU build has none anyway.
ENV = {"CUDA_VISIBLE_DEVICES": "", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}


def run(framework: str, script: str, *options: str) -> tuple[int, str, str]:
    env = dict(os.environ, **ENV)
    env.pop("EXAMPLE_ARGS", None)
    done = subprocess.run([sys.executable, script, *options], cwd=EXAMPLES / framework, env=env,
                          capture_output=True, text=True, timeout=240)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def device_gpu_runs():
    """(framework, script) -> what ``--device gpu`` gave, every script at once (tiny options, in
    case one ran)."""
    cases = [(f, s) for f in FRAMEWORKS for s in SCRIPTS]
    with ThreadPoolExecutor(len(cases)) as pool:
        return dict(zip(cases, pool.map(lambda c: run(*c, "--device", "gpu", "--size", "16", "--repeats", "1"),
                                        cases)))


def test_the_twins_are_the_same_scripts():
    assert SCRIPTS and SCRIPTS == sorted(p.name for p in (EXAMPLES / "mxnet").glob("*.py")
                                         if p.name not in ("helpers.py", "numpy_compat.py"))


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("script", SCRIPTS)
def test_device_gpu_without_a_gpu_stops_with_one_prefixed_line(device_gpu_runs, framework, script):
    """``--device gpu`` never silently runs on the CPU: exit 2, one line ``script.py: error: --device gpu: ...``,
    which names the choices that work, and no output."""
    status, out, err = device_gpu_runs[framework, script]
    assert status == 2, (out, err)
    assert err.count("\n") == 1 and err.startswith(f"{script}: error: --device gpu: "), err
    assert "use --device cpu or --device auto" in err
