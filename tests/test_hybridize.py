"""The hybridize twins, run as a reader runs them: tiny sizes, on the CPU.

Every case starts at once (the imports dominate); torch.compile really
compiles, on one tiny function. The tests check what a reader sees: the
timings with their spread, the honest CPU messages, the --json object (the
same keys in both twins), exit status 2 for bad options, and that the shown
cells stay short. The ``gpu`` test runs the captures on a real GPU.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))
from common.hybridize import STEPS  # noqa: E402
from example_runs import TIME, TINY_COMPILED, check_comparison, check_cpu_notes, compiling_alone, figures  # noqa: E402
TIMING = rf"({TIME})"
SHOWN_LINES, SHOWN_COLUMNS = 12, 79
HIDDEN = ("harness", "finish")
TINY = ["--size", TINY_COMPILED, "--repeats", "2", "--device", "cpu"]
CASES = {
    "pytorch": ["pytorch", *TINY],
    "pytorch_json": ["pytorch", *TINY, "--json", "--compare"],
    "mxnet": ["mxnet", *TINY, "--sweep", "16,32"],
    "mxnet_json": ["mxnet", *TINY, "--sweep", "16,32", "--json", "--compare"],
    "pytorch_bad": ["pytorch", "--sweep", "64,x"],
    "mxnet_bad": ["mxnet", "--size", "0"],
}
# Published only where a GPU runs the PyTorch twin (None on the CPU).
GPU_ONLY = ["t_loop_eager", "t_loop_graph", "t_step_backend",
            "t_step_backend_graph", "speedup_graph", "graph_matches", "sweep_sizes", "eager_overlap", "graph_overlap",
            "small_size", "small_eager_overlap", "small_graph_overlap", "large_size", "large_eager_overlap",
            "large_graph_overlap", "figure_graph_overlap", "streams_graph_matches"]


def start(framework, *options):
    env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1")
    env.pop("EXAMPLE_ARGS", None)
    return subprocess.Popen([sys.executable, "hybridize.py", *options], cwd=EXAMPLES / framework,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def runs():
    """name -> (exit status, stdout, stderr) of every case.

    All cases start at once, except the second PyTorch run: it starts when the
    first is done, so that it finds the compiled code in Inductor's cache
    instead of compiling the same function at the same time on a small machine
    (the first compiles alone, ``compiling_alone``).
    """
    first = {name: args for name, args in CASES.items() if name not in ("pytorch", "pytorch_json")}
    out = {}

    def finish(name, proc):
        stdout, stderr = proc.communicate(timeout=240)
        out[name] = (proc.returncode, stdout, stderr)

    procs = {name: start(*args) for name, args in first.items()}
    with compiling_alone():
        finish("pytorch_json", start(*CASES["pytorch_json"]))
    second = start(*CASES["pytorch"])
    for name, proc in procs.items():
        finish(name, proc)
    finish("pytorch", second)
    return out


def keys():
    sys.path.insert(0, str(EXAMPLES))
    from common.keys import HYBRIDIZE, published
    return set(published(HYBRIDIZE))


def cells(framework):
    """(tags, code lines) of every cell of a twin."""
    text = (EXAMPLES / framework / "hybridize.py").read_text(encoding="utf-8")
    found = []
    for block in re.split(r"^# %%", text, flags=re.M)[1:]:
        head, _, body = block.partition("\n")
        tags = json.loads(re.search(r"tags=(\[.*?\])", head).group(1))
        found.append((tags, body.strip("\n").splitlines()))
    return found


@pytest.mark.parametrize("framework", ["pytorch", "mxnet"])
def test_runs_on_the_cpu_and_prints_timings_with_spread(runs, framework):
    """A reader without a GPU gets every timing as median [min-max] and an honest note."""
    status, stdout, stderr = runs[framework]
    assert status == 0, stderr
    assert re.search(rf"^imperative, one operation at a time: {TIMING}$|^eager, one operation "
                     rf"at a time: {TIMING}$", stdout, re.M), stdout
    assert re.search(rf"^first call \((compiles|builds the graph)\): {TIMING}$", stdout, re.M), stdout
    assert stdout.count("same result: True") == 2, stdout
    if framework == "pytorch":  # CUDA graphs need a GPU: the script stops where they begin
        assert stdout.rstrip().endswith("what follows needs an NVIDIA GPU, so the program stops here."), stdout
        assert "eager loop" not in stdout
    else:
        assert "running on CPU contexts" in stdout
        assert re.search(rf"^hybridized loop: {TIMING}$", stdout, re.M), stdout
        assert "per step, engine" not in stdout, "the profiled loop is slower: its times are not shown"


@pytest.mark.parametrize("framework", ["pytorch", "mxnet"])
def test_every_cpu_note_says_what_is_left_out_and_why(runs, framework):
    """Without a GPU each twin says, in one line each, what it skips and why: the notes of
    example_runs.CPU_NOTES, no more and no fewer."""
    status, stdout, stderr = runs[framework]
    assert status == 0, stderr
    check_cpu_notes(stdout, framework, "hybridize", "--device cpu")


def test_twins_publish_the_same_keys(runs):
    """Both tabs of the page can paste the same figures: the --json keys are the documented ones."""
    objects = {fw: figures(runs[f"{fw}_json"][1]) for fw in ("pytorch", "mxnet")}
    assert set(objects["pytorch"]) == set(objects["mxnet"]) == keys()


@pytest.mark.parametrize("framework", ["pytorch", "mxnet"])
def test_compare_sets_like_beside_like(runs, framework):
    """--compare --json: PyTorch's book figures came from a GPU and are set aside as "needs a GPU"; MXNet's
    came from CPU contexts and face this run's (example_runs.check_comparison)."""
    status, stdout, stderr = runs[f"{framework}_json"]
    assert status == 0, stderr
    compared = check_comparison(stdout, framework, "hybridize")
    assert bool(compared["rows"]) == (framework == "mxnet"), compared["rows"]


def test_cpu_values(runs):
    """On the CPU, GPU-only figures are None, never a CPU number; the CPU figures make sense."""
    pt = figures(runs["pytorch_json"][1])
    mx = figures(runs["mxnet_json"][1])
    assert all(pt[key] is None for key in GPU_ONLY), {k: pt[k] for k in GPU_ONLY}
    assert pt["export_files"] == ["net.pt2"] and pt["export_matches"] is True
    assert mx["export_files"] == ["net-0000.params", "net-symbol.json"] and mx["export_matches"]
    assert mx["graph_matches"] is True and mx["sweep_sizes"] == [16, 32]
    assert (mx["small_size"], mx["large_size"]) == (16, 32)
    assert mx["small_graph_overlap"] == mx["graph_overlap"][0]
    assert mx["large_eager_overlap"] == mx["eager_overlap"][-1]
    for obj in (pt, mx):
        assert obj["t_compile"] > 0 and obj["size"] == 32
        low, high = obj["t_eager_spread"]
        assert low <= obj["t_eager"] <= high
        assert obj["speedup_compiled"] == pytest.approx(obj["t_eager"] / obj["t_compiled"])


@pytest.mark.parametrize("case", ["pytorch_bad", "mxnet_bad"])
def test_bad_input_exits_2(runs, case):
    """A bad option stops with exit status 2 and says which option, without a traceback."""
    status, _, stderr = runs[case]
    assert status == 2, stderr
    assert "Traceback" not in stderr
    assert re.search(r"argument --(sweep|size)", stderr), stderr


def test_twins_have_the_same_short_cells():
    """The tabs line up: same tags in the same order, but for the two streams timed in one graph,
    which MXNet lacks on the CPU, and its traced print (the page says so in prose); shown cells fit
    the page (12 x 79)."""
    tags = {fw: [[tag for tag in t if tag != "raises-exception"] for t, _ in cells(fw)] for fw in ("pytorch", "mxnet")}
    assert [t for t in tags["pytorch"] if t[0] != "streams-time"] == [t for t in tags["mxnet"] if t[0] != "trace"]
    for framework in ("pytorch", "mxnet"):
        for (tag, *_), lines in cells(framework):
            if tag in HIDDEN or tag.endswith("-harness"):
                continue
            assert len(lines) <= SHOWN_LINES, (framework, tag, len(lines))
            assert max(map(len, lines)) <= SHOWN_COLUMNS, (framework, tag, max(lines, key=len))


@pytest.mark.gpu
def test_gpu_captures_two_streams_and_replays_eager_results(tmp_path):
    """On a GPU: both streams are captured in one graph, and every replay gives eager's results."""
    proc = start("pytorch", "--device", "gpu", "--size", "256", "--repeats", "2", "--sweep", "64",
                 "--json", "--figures", str(tmp_path))
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    obj = figures(stdout)
    assert obj["graph_matches"] is True and obj["streams_graph_matches"] is True
    assert obj["sweep_sizes"] == [64] and len(obj["graph_overlap"]) == 1
    assert 0 < obj["graph_overlap"][0] <= 1.3
    assert -0.5 < obj["figure_graph_overlap"] <= 1.3
    assert obj["t_loop_graph"] < obj["t_loop_eager"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["streams.en.png", "streams.tr.png"]
    for key, loop in (("t_step_backend", "t_loop_eager"), ("t_step_backend_graph", "t_loop_graph")):
        assert 0 < obj[key] * STEPS <= obj[loop] * 1.05, key  # the GPU's share of the whole loop


# The loop of the CUDA-graph section: "steps, w = 200, <64 x 64 uniform numbers> / <scale>".
LOOP_WEIGHTS = re.compile(r"^steps, w = (\d+), .*\(64, 64.*\) / (\d+)$", re.MULTILINE)


def loop_result(steps: int, scale: int):
    """y after ``steps`` steps of y = tanh(y @ w), with y and w * scale uniform in [0, 1), in fp32."""
    rng = np.random.default_rng(0)
    y = rng.random((64, 64), dtype=np.float32)
    w = rng.random((64, 64), dtype=np.float32) / np.float32(scale)
    for _ in range(steps):
        y = np.tanh(y @ w)
    return y


@pytest.mark.parametrize("framework", ["pytorch", "mxnet"])
def test_the_graph_loop_computes_normal_numbers_to_its_last_step(framework):
    """The captured loop (timed by MXNet on the CPU) keeps y far from zero. With w scaled by 1/64, y
    halved at each step, turned subnormal and then 0: the capture check compared zeros, and the CPU
    timed subnormal arithmetic, several times slower."""
    source = (EXAMPLES / framework / "hybridize.py").read_text(encoding="utf-8")
    steps, scale = map(int, LOOP_WEIGHTS.search(source).groups())
    assert steps == STEPS
    assert loop_result(steps, scale).min() > 1e-6, (framework, scale)


def test_the_loop_check_catches_the_scale_that_decayed_to_zero():
    assert loop_result(STEPS, 64).max() == 0.0
