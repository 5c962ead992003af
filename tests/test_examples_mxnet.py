"""The MXNet example scripts, run as a reader runs them: tiny sizes, on the CPU.

MXNet 1.9.1 has no GPU on the machines we use, so the scripts must say that
they ran on the CPU contexts cpu(0) and cpu(1), skip the copy experiments, and
still publish the same --json keys as their PyTorch twins. Every case starts
at once (imports dominate). The GPU code paths are run with CPU contexts
standing in for GPUs ("pretend" cases), so that they are executed at least.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "examples" / "mxnet"
TIME = r"\d+\.\d{4} s"
GPU_ONLY = ["t_run", "t_copy_pageable", "t_copy_nonblocking", "t_run_copy_nonblocking", "overlap_eff_seed",
            "t_copy_pinned", "t_run_copy_streams", "overlap_eff", "copy_matches", "d2h_gbps",
            "d2h_peak_gbps", "d2h_frac", "tflops_run", "tflops_peak", "tflops_frac"]
TINY = ["--size", "48", "--repeats", "2"]
# Runs a script with CPU contexts pretending to be N GPUs (and small matrices on them).
PRETEND = """
import runpy, sys
import helpers
from mxnet import npx
n, script = int(sys.argv[1]), sys.argv[2]
fake = [npx.cpu(1 - i) for i in range(n)]  # contexts that MXNet's profiler names
helpers.gpus = lambda choice="auto": fake
rand = helpers.rand
helpers.rand = lambda size, ctx: rand(min(size, 64) if ctx in fake else size, ctx)
sys.argv = sys.argv[2:]
runpy.run_path(script, run_name="__main__")
"""
NOTEBOOK = """
import sys, nbformat, nbclient, jupytext
nb = jupytext.read(sys.argv[1])
nbclient.NotebookClient(nb, timeout=120, kernel_name="python3",
                        resources={"metadata": {"path": sys.argv[2]}}).execute()
nbformat.write(nb, sys.argv[3])
"""
CASES = {
    "auto": ["auto_parallelism.py", *TINY, "--figures", "{tmp}/auto"],
    "auto_json": ["auto_parallelism.py", *TINY, "--json"],
    "auto_gpu": ["auto_parallelism.py", "--device", "gpu", "--size", "8"],
    "auto_bad": ["auto_parallelism.py", "--repeats", "0"],
    "async": ["async_computation.py", *TINY, "--device", "cpu"],
    "async_json": ["async_computation.py", *TINY, "--json"],
    "async_oom": ["async_computation.py", "--size", "2000000", "--device", "cpu"],
    "sweep": ["parallelism_sweep.py", "--sizes", "32,64", "--repeats", "2", "--figures", "{tmp}/sweep"],
    "sweep_json": ["parallelism_sweep.py", "--sizes", "32,64", "--repeats", "2", "--json"],
    "sweep_bad": ["parallelism_sweep.py", "--device", "tpu"],
    "pretend_1gpu": ["-c", PRETEND, "1", "auto_parallelism.py", "--size", "32", "--repeats", "1", "--json"],
    "pretend_2gpu": ["-c", PRETEND, "2", "auto_parallelism.py", "--size", "32", "--repeats", "1"],
    "pretend_sweep": ["-c", PRETEND, "1", "parallelism_sweep.py", "--sizes", "32", "--repeats", "1", "--json"],
    "notebook": ["-c", NOTEBOOK, str(SCRIPTS / "auto_parallelism.py"), str(SCRIPTS), "{tmp}/auto.ipynb"],
}
CASES.update({f"torch_{name}": ["torch", f"{name}.py", *TINY, "--json"]
              for name in ("auto_parallelism", "async_computation", "parallelism_sweep")})
# Two products at once with 2 OpenMP threads each hang MXNet's OpenBLAS; helpers must prevent it.
CASES["omp2"] = ["auto_parallelism.py", "--size", "128", "--repeats", "1", "--json"]
ENV = {"omp2": {"OMP_NUM_THREADS": "2"}}


def start(args, tmp, extra_env=None):
    cwd = SCRIPTS
    if args[0] == "torch":
        cwd, args = ROOT / "examples" / "pytorch", args[1:]
    env = dict(os.environ, MPLBACKEND="Agg", EXAMPLE_ARGS="--size 48 --repeats 2", **(extra_env or {}))
    if args[1] == NOTEBOOK:
        env.pop("MPLBACKEND")  # the kernel's inline backend keeps the PNGs
    return subprocess.Popen([sys.executable, *[a.replace("{tmp}", str(tmp)) for a in args]], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Start every case at once; return name -> (exit status, stdout, stderr, tmp folder)."""
    tmp = tmp_path_factory.mktemp("mxnet")
    procs = {name: start(args, tmp, ENV.get(name)) for name, args in CASES.items()}
    done = {}
    for name, proc in procs.items():
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            err += "\n(killed after 120 s: it hung)"
        done[name] = (proc.returncode, out, err, tmp)
    return done


def ok(runs, name):
    status, out, err, tmp = runs[name]
    assert status == 0, f"{name} failed:\n{err}"
    return out, tmp


def test_auto_parallelism_says_it_ran_on_cpu_contexts(runs):
    """Without a GPU for MXNet the reader is told so, sees cpu(0) and cpu(1) by model, and no GPU figure."""
    out, tmp = ok(runs, "auto")
    assert "No GPU usable by MXNet (this MXNet build has no CUDA): two jobs on the CPU contexts " \
           "cpu(0) and cpu(1)" in out and "all figures are CPU figures" in out
    for lane in (0, 1):
        assert re.search(rf"^cpu\({lane}\) \(.+\) alone: {TIME}$", out, re.M), out
    assert re.search(rf"^all 2 lanes together: {TIME}$", out, re.M)
    assert re.search(r"^parallel efficiency, max\(alone\) / together: \d+\.\d\d$", out, re.M)
    assert re.search(rf"^MXNet's profiler: the lanes computed at the same time for {TIME} of {TIME}$", out, re.M)
    assert "Each CPU product runs on one thread (OMP_NUM_THREADS=1)" in out
    assert "the copy experiments need a GPU and are skipped" in out
    assert "gpu(" not in out and not re.search(r"\d\s*(GB/s|TFLOP/s)", out)
    assert (tmp / "auto" / "timeline-devices.png").read_bytes().startswith(b"\x89PNG")
    assert not (tmp / "auto" / "timeline-copy.png").exists()


def test_two_cpu_contexts_do_not_hang_with_openmp_threads_set(runs):
    """OMP_NUM_THREADS=2 in the environment would hang products on cpu(0) and cpu(1); the run finishes."""
    values = json.loads(ok(runs, "omp2")[0])
    assert values["mode"] == "cpu" and values["t_together"] > 0


@pytest.mark.parametrize("name", ["auto_parallelism", "async_computation", "parallelism_sweep"])
def test_json_keys_equal_the_pytorch_twin(runs, name):
    """--json prints exactly one object, with the same keys as the PyTorch twin's; devices are CPUs."""
    short = {"auto_parallelism": "auto", "async_computation": "async", "parallelism_sweep": "sweep"}[name]
    out, _ = ok(runs, f"{short}_json")
    torch_out, _ = ok(runs, f"torch_{name}")
    assert out.count("\n") == 1
    values, torch_values = json.loads(out), json.loads(torch_out)
    assert list(values) == list(torch_values)
    assert values["devices"] and all(d.startswith("cpu(") for d in values["devices"])


def test_auto_parallelism_json_publishes_none_for_copies(runs):
    values = json.loads(ok(runs, "auto_json")[0])
    assert (values["mode"], values["n_gpus"], values["products"], values["size"]) == ("cpu", 0, 50, 48)
    assert [lane.split(" ")[0] for lane in values["lanes"]] == ["cpu(0)", "cpu(1)"]
    assert all(values[k] is None for k in GPU_ONLY)
    assert 0 < values["t_alone_0"] <= values["t_alone_max"] and values["t_together"] > 0
    assert values["parallel_eff"] == pytest.approx(values["t_alone_max"] / values["t_together"])


def test_async_computation_labels(runs):
    """The same labels as the PyTorch twin, with MXNet's blockers; the engine queues on the CPU too."""
    out, _ = ok(runs, "async")
    assert re.search(r"^device: cpu\(0\) \(.+\); TF32 is off", out, re.M)
    assert "--device cpu: running on the CPU, where MXNet's engine queues the work" in out
    for label in ["queue the work \\(Python returns\\)", "until the work is done", "wait in \\.item\\(\\)",
                  "wait in \\.asnumpy\\(\\)", "wait in print\\(\\)", "wait in npx\\.waitall\\(\\)",
                  "read a scalar every step", "read once at the end"]:
        assert re.search(rf"^{label}: {TIME}$", out, re.M), label
    assert re.search(r"^speedup of reading once: \d+\.\d\dx$", out, re.M)
    values = json.loads(ok(runs, "async_json")[0])
    assert values["t_enqueue"] <= values["t_complete"]


def test_parallelism_sweep_table_and_plot(runs):
    out, tmp = ok(runs, "sweep")
    assert "sweeping the CPU only (two jobs = the contexts cpu(0) and cpu(1))" in out
    for n in (32, 64):
        assert re.search(rf"^ +{n} +{TIME} +{TIME} +\d+\.\d\d +n/a +n/a +n/a$", out, re.M), out
    assert (tmp / "sweep" / "sweep.png").read_bytes().startswith(b"\x89PNG")
    values = json.loads(ok(runs, "sweep_json")[0])
    assert values["sweep_sizes"] == [32, 64] and values["large_overlap_eff"] is None


@pytest.mark.parametrize("name, option", [("auto_bad", "--repeats"), ("sweep_bad", "--device")])
def test_bad_options_exit_2(runs, name, option):
    status, out, err, _ = runs[name]
    assert status == 2 and out == ""
    assert f"error: argument {option}" in err and "Traceback" not in err


def test_device_gpu_without_a_gpu_exits_2(runs):
    """--device gpu never silently runs on the CPU."""
    status, out, err, _ = runs["auto_gpu"]
    assert status == 2, out
    assert err.strip().count("\n") == 0 and "--device gpu: no usable GPU for MXNet" in err


def test_out_of_memory_is_one_line(runs):
    status, _, err, _ = runs["async_oom"]
    assert status == 2, err
    assert err.strip().count("\n") == 0 and "try a smaller --size" in err


def test_gpu_code_paths_run_with_pretend_gpus(runs):
    """The 1-GPU and multi-GPU branches (copies, pinned buffers, limits) run, on CPU contexts."""
    values = json.loads(ok(runs, "pretend_1gpu")[0])
    assert values["mode"] == "gpu+cpu" and values["copy_matches"] is True
    assert all(values[k] is not None for k in GPU_ONLY)
    out, _ = ok(runs, "pretend_2gpu")
    assert "2 GPUs: one job on each of them." in out and "host copies equal the device results: True" in out
    sweep = json.loads(ok(runs, "pretend_sweep")[0])
    assert sweep["small_overlap_eff"] is not None


def test_executes_as_a_notebook(runs):
    """In a kernel the options come from EXAMPLE_ARGS; the timeline cell keeps a PNG; figures are glued."""
    _, tmp = ok(runs, "notebook")
    cells = json.loads((tmp / "auto.ipynb").read_text())["cells"]
    tags = [t for c in cells for t in c.get("metadata", {}).get("tags", [])]
    assert tags == ["setup", "run-function", "warm-up", "devices-alone", "devices-together",
                    "timeline-devices", "copy-seed", "copy-streams", "timeline-copy", "limits"]
    outputs = {t: c["outputs"] for c in cells for t in c.get("metadata", {}).get("tags", [])}
    assert any("image/png" in o.get("data", {}) for o in outputs["timeline-devices"])
    glued = {o["metadata"]["scrapbook"]["name"] for c in cells for o in c["outputs"]
             if "scrapbook" in o.get("metadata", {})}
    assert {"parallel_eff", "t_together", "mode", "t_run"} <= glued
    assert any("50 products of 48x48" in "".join(o.get("text", "")) for o in outputs["warm-up"])


# The numpy 2 shim and the helpers, in this process ---------------------------

def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def fake_numpy(version, **names):
    np = types.ModuleType("fake_numpy")
    np.__version__ = version
    for attr in ("all", "any", "round", "prod", "isin", "sort", "trapezoid"):
        setattr(np, attr, getattr(__import__("numpy"), attr, None))
    np.__dict__.update(names)
    return np


def test_numpy_shim_restores_only_missing_names_on_numpy_2():
    compat = _load("mxnet_numpy_compat", SCRIPTS / "numpy_compat.py")
    sentinel = object()
    np = fake_numpy("2.1.0", bool=sentinel)
    restored = compat.restore(np)
    assert np.bool is sentinel and "bool" not in restored
    assert np.PINF == float("inf") and np.NINF == -float("inf") and np.PZERO == 0.0
    assert np.alltrue is np.all and np.product is np.prod and np.in1d is np.isin
    assert np.compat.basestring is str
    assert np.msort([[3, 1], [2, 4]]).tolist() == [[2, 1], [3, 4]]
    with pytest.raises(NotImplementedError, match="numpy_financial"):
        np.npv(0.1, [1, 2])
    assert compat.restore(np) == []  # a second call changes nothing


@pytest.mark.parametrize("version, expected", [("1.23.5", []), ("1.26.4", ["bool"])])
def test_numpy_shim_leaves_older_numpy_alone(version, expected):
    compat = _load("mxnet_numpy_compat", SCRIPTS / "numpy_compat.py")
    everything = {name: 0 for name in compat._replacements(fake_numpy(version))
                  if name != "bool"}
    np = fake_numpy(version, compat=types.SimpleNamespace(basestring=str), **everything)
    assert compat.restore(np) == expected
    assert hasattr(np, "bool") == bool(expected)


@pytest.mark.skipif(not os.environ.get("MXNET_NUMPY2_PYTHON"), reason="set MXNET_NUMPY2_PYTHON to a Python "
                    "with mxnet 1.9.1, numpy 2 and setuptools to run the scripts under numpy 2")
def test_scripts_run_under_numpy_2():
    """The shim lets MXNet 1.9.1 import and run under numpy 2 (the GPU machine's Python 3.12)."""
    python = os.environ["MXNET_NUMPY2_PYTHON"]
    check = subprocess.run([python, "-c", "import numpy; print(numpy.__version__)"],
                           capture_output=True, text=True, check=True)
    assert int(check.stdout.split(".")[0]) >= 2
    run = subprocess.run([python, "auto_parallelism.py", *TINY, "--json"], cwd=SCRIPTS,
                         capture_output=True, text=True, timeout=120, env=dict(os.environ, MPLBACKEND="Agg"))
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["mode"] == "cpu"


@pytest.fixture(scope="module")
def helpers():
    if str(SCRIPTS) not in sys.path:
        sys.path.append(str(SCRIPTS))  # for its numpy_compat; appended, so the PyTorch helpers still win
    saved = dict(os.environ)
    yield _load("mxnet_example_helpers", SCRIPTS / "helpers.py")
    os.environ.clear()
    os.environ.update(saved)  # helpers sets OMP_NUM_THREADS; later tests must not inherit it


def test_timeline_shows_each_product_on_its_context(helpers):
    """The profiler's spans: one per product, on the row of its context, in time order; nothing else."""
    xs = [helpers.rand(32, helpers.cpu(i)) for i in (0, 1)]
    helpers.synchronize()
    timeline = helpers.Timeline()
    with helpers.span(timeline, "lane 0", helpers.cpu(0), "product"):
        ys = [xs[0].dot(xs[0]) for _ in range(3)]
    with helpers.span(timeline, "lane 1", helpers.cpu(1)):
        ys += [xs[1].dot(xs[1]) for _ in range(2)]
    with helpers.span(None, "ignored", helpers.cpu(0)):
        del ys  # frees the results: the engine's DeleteVariable is not drawn
    spans = timeline.spans()
    assert [(s.row, s.label) for s in spans] == [("lane 0", "product")] * 3 + [("lane 1", "")] * 2
    assert all(0 <= s.end - s.start < 5 for s in spans)
    assert all(a.end <= b.start for a, b in zip(spans[:2], spans[1:3]))  # one worker per context
    later = helpers.Timeline()
    assert later.spans() == []  # a new timeline sees only its own work


def test_overlap_seconds_counts_only_time_shared_by_two_rows(helpers):
    Span = helpers.Span
    assert helpers.overlap_seconds([Span("a", 0, 2), Span("b", 1, 3)]) == pytest.approx((1, 3))
    assert helpers.overlap_seconds([Span("a", 0, 2), Span("a", 1, 3), Span("b", 5, 6)]) == (0, 6)
    assert helpers.overlap_seconds([]) == (0, 0)


def test_helpers_name_contexts_and_recognise_memory_errors(helpers):
    import mxnet
    assert helpers.name(helpers.cpu(1)).startswith("cpu(1) (") and helpers.gpus("cpu") == []
    assert helpers.is_out_of_memory(mxnet.base.MXNetError("Failed to allocate CPU Memory"))
    assert helpers.is_out_of_memory(MemoryError())
    assert not helpers.is_out_of_memory(mxnet.base.MXNetError("shape mismatch"))
    assert helpers.run_concurrently([lambda: 1, lambda: 2]) == [1, 2]
