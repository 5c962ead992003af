"""The MXNet example scripts, run as a reader runs them: tiny sizes, on CPU contexts.

MXNet 1.9.1 cannot run on the GPUs we record on, so the scripts must say that
they ran on the CPU contexts cpu(0) and cpu(1), leave out the copy timings,
still publish the same --json keys as their PyTorch twins, choose their size
by timing, and never present a CPU figure as a GPU figure. The copy check
runs on CPU contexts too, and a planted mismatch shows that it can fail. The
GPU code paths run with CPU contexts standing in for GPUs ("pretend" cases),
so that they are executed at least.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import types
import warnings
from pathlib import Path

import pytest

from example_runs import ALONE_HUNG_AFTER_S, DOCUMENTED, HIDDEN, HUNG_AFTER_S, NOTEBOOK, PNG, TIME, \
    auto_size_and_job_time, check_comparison, check_cpu_notes, check_executed_notebook, check_shown_cells, figures, median_interval, ok, overlap_range, run_cases

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "examples" / "mxnet"
GPU_ONLY = {k for k in DOCUMENTED["auto_parallelism"]
            if k.startswith(("t_copy", "t_run", "copy_", "overlap_s", "link", "fp32"))}
PEAKS = {"link_peak_gbps", "fp32_peak_tflops", "link_best_frac", "link_achieved_frac",
         "fp32_best_frac", "fp32_achieved_frac"}  # from the hardware: none on CPU contexts
NO_GPU = "No GPU usable by MXNet (this MXNet build has no CUDA)"
TINY = ["--size", "48", "--repeats", "3"]
# Runs a script with CPU contexts pretending to be N GPUs (and small work on them).
PRETEND = """
import runpy, sys
import helpers
from mxnet import npx
n, script = int(sys.argv[1]), sys.argv[2]
fake = [npx.cpu(1 - i) for i in range(n)]  # contexts that MXNet's profiler names
helpers.gpus = lambda choice="auto": fake
helpers.BEST_COPY_MIB, helpers.BEST_PRODUCT_SIZES = (1, 2), (32, 64)
rand = helpers.rand
helpers.rand = lambda size, ctx: rand(min(size, 64) if ctx in fake else size, ctx)
sys.argv = sys.argv[2:]
runpy.run_path(script, run_name="__main__")
"""
# Runs a script whose copy check compares one pair wrongly: the check must report it.
PLANTED = """
import runpy, sys
import helpers
from mxnet import npx
same, calls = helpers.same, []
def planted(host, result):
    calls.append(1)
    return same(host + (len(calls) == 7), result)  # the 7th copy differs by 1
helpers.same = planted
helpers.gpus = lambda choice="auto": [npx.cpu(1)]  # the copy check runs only with a GPU: pretend one
helpers.BEST_COPY_MIB, helpers.BEST_PRODUCT_SIZES = (1, 2), (32, 64)  # the limits' runs, at tiny sizes
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
CASES = {
    "auto": ["auto_parallelism.py", *TINY, "--figures", "{tmp}/auto"],
    "auto_json": ["auto_parallelism.py", *TINY, "--json", "--compare"],
    "auto_bad": ["auto_parallelism.py", "--size", "0"],
    "auto_planted": ["-c", PLANTED, "auto_parallelism.py", "--size", "16", "--repeats", "1"],
    "async": ["async_computation.py", *TINY, "--device", "cpu"],
    "async_auto": ["async_computation.py", "--repeats", "1"],
    "async_json": ["async_computation.py", *TINY, "--json", "--compare"],
    "async_oom": ["async_computation.py", "--size", "2000000", "--device", "cpu"],
    "async_bad": ["async_computation.py", "--repeats", "0"],
    "sweep": ["parallelism_sweep.py", "--sizes", "32,64", "--repeats", "3", "--figures", "{tmp}/sweep"],
    "sweep_json": ["parallelism_sweep.py", "--sizes", "32,64", "--repeats", "3", "--json", "--compare"],
    "sweep_bad": ["parallelism_sweep.py", "--sizes", "64,x"],
    "sweep_too_big": ["parallelism_sweep.py", "--size", "200000"],
    "pretend_1gpu": ["-c", PRETEND, "1", "auto_parallelism.py", "--size", "32", "--repeats", "1", "--json"],
    "pretend_2gpu": ["-c", PRETEND, "2", "auto_parallelism.py", "--size", "32", "--repeats", "1",
                     "--figures", "{tmp}/pretend"],
    "pretend_sweep": ["-c", PRETEND, "1", "parallelism_sweep.py", "--sizes", "32", "--repeats", "1", "--json"],
    "notebook": ["-c", NOTEBOOK, str(SCRIPTS / "auto_parallelism.py"), str(SCRIPTS), "{tmp}/auto.ipynb"],
    # Two products at once with 2 OpenMP threads each never finished; helpers must prevent it.
    "omp2": ["auto_parallelism.py", "--size", "128", "--repeats", "1", "--json"],
}
HANG_PRONE = ("omp2",)  # run alone, and killed after seconds if it hangs
ENV = {"omp2": {"OMP_NUM_THREADS": "2"}}
# Cases whose efficiencies are checked: they must not share the CPU with the others.
TIMED = ["auto_json", "sweep_json"]


def start(name, tmp):
    args = CASES[name]
    env = dict(os.environ, MPLBACKEND="Agg", **ENV.get(name, {}))
    env.pop("EXAMPLE_ARGS", None)
    if args[1] == NOTEBOOK:  # options from EXAMPLE_ARGS; the kernel's inline backend keeps the PNGs
        env.update(EXAMPLE_ARGS="--size 48 --repeats 2")
        env.pop("MPLBACKEND")
    return subprocess.Popen([sys.executable, *[a.replace("{tmp}", str(tmp)) for a in args]], cwd=SCRIPTS, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every case, run as example_runs.run_cases runs them (a case that hangs is killed)."""
    tmp = tmp_path_factory.mktemp("mxnet")
    return run_cases(list(CASES), TIMED, lambda name: start(name, tmp), tmp, HANG_PRONE)


def rerun_json(name):
    """One more run, alone, when a timing looks impossible: a busy machine can upset one measurement."""
    return figures(start(name, "").communicate(timeout=ALONE_HUNG_AFTER_S)[0])


def never_claims_a_gpu(out):
    """The output says why it ran on the CPU and names no GPU and no GPU rate."""
    assert NO_GPU in out or "--device cpu" in out, out
    assert "gpu(" not in out and not re.search(r"\d\s*(GB/s|TFLOP/s)", out), out


def test_auto_parallelism_says_it_ran_on_cpu_contexts(runs):
    """Without a GPU for MXNet the reader is told so, sees cpu(0) and cpu(1) by model, why each
    product has one thread, and no GPU figure."""
    out, tmp = ok(runs, "auto")
    assert f"{NO_GPU}: two jobs on the CPU contexts cpu(0) and cpu(1)" in out
    assert "all figures are CPU figures" in out and "size: 48 (--size)" in out
    assert "One thread per CPU product (OMP_NUM_THREADS=1). MXNet's OpenBLAS 0.3.13" in out
    assert out.rstrip().endswith(f"{NO_GPU}: what follows needs a GPU that MXNet can use, so the program stops here.")
    never_claims_a_gpu(out)
    assert not list((tmp / "auto").glob("timeline-copy*"))


@pytest.mark.parametrize("case, script, why", [("auto", "auto_parallelism", NO_GPU),
                                               ("async", "async_computation", "--device cpu"),
                                               ("sweep", "parallelism_sweep", NO_GPU)])
def test_every_cpu_note_says_what_is_left_out_and_why(runs, case, script, why):
    """On CPU contexts each script says, in one line each, what it leaves out and why (the --device the
    reader chose, or why MXNet has no GPU): the notes of example_runs.CPU_NOTES, no more and no fewer."""
    check_cpu_notes(ok(runs, case)[0], "mxnet", script, why)


def test_auto_parallelism_prints_each_jobs_time_and_the_efficiency(runs):
    """Each job alone and both together, medians with spread, and the overlap as printed (and no other measure)."""
    out, _ = ok(runs, "auto")
    for job in (0, 1):
        assert re.search(rf"^job {job}: 50 products of 48×48 on cpu\({job}\)$", out, re.M), out
        assert re.search(rf"^job {job} alone: ({TIME})$", out, re.M), out
    together = median_interval(re.search(rf"^both together: ({TIME})$", out, re.M).group(1))
    alone = [median_interval(re.search(rf"^job {job} alone: ({TIME})$", out, re.M).group(1)) for job in (0, 1)]
    # The printed overlap comes from the unrounded medians: it lies within what the printed medians
    # allow (their last digit) and its own rounding (0.005). It is the only measure printed.
    printed = float(re.search(r"^overlap: (-?\d+\.\d\d)$", out, re.M).group(1))
    low, high = overlap_range(alone, together)
    assert low - 0.005 <= printed <= high + 0.005, (printed, low, high)
    assert "per job" not in out and "speed-up" not in out


def test_auto_parallelism_draws_the_timeline_in_both_languages(runs):
    _, tmp = ok(runs, "auto")
    english, turkish = ((tmp / "auto" / f"timeline-devices.{lang}.png").read_bytes() for lang in ("en", "tr"))
    assert english.startswith(PNG) and turkish.startswith(PNG) and english != turkish


def test_copy_check_says_why_no_wait_is_right(runs):
    """The check copies 50 distinct products into cleared buffers, with and without a wait;
    MXNet's engine orders every read after its copy, so both give 50 of 50, and the output says why
    (run on CPU contexts that pretend to be GPUs: without a GPU the script stops before the copies)."""
    out, _ = ok(runs, "pretend_2gpu")
    assert re.search(r"^wait=True: 50 of 50 host copies are right\nwait=False: 50 of 50 host copies are "
                     r"right\nMXNet's engine runs each copy after its product and each read after its\n"
                     r"copy: a read that comes early waits; it cannot see stale data\.$", out, re.M), out


def test_copy_check_can_fail(runs):
    """A mismatch planted into the comparison shows up in the printed count and in --json terms."""
    out, _ = ok(runs, "auto_planted")
    assert "wait=True: 49 of 50 host copies are right" in out, out
    assert "wait=False: 50 of 50 host copies are right" in out


def test_auto_parallelism_json(runs):
    """--json prints one object with the documented keys; on CPU contexts the copy check has
    values and every other GPU figure is None."""
    out, _ = ok(runs, "auto_json")
    assert out.count("\n") == 1
    values = figures(out)
    assert set(values) == DOCUMENTED["auto_parallelism"]
    assert (values["mode"], values["n_gpus"], values["products"], values["size"]) == ("cpu", 0, 50, 48)
    assert values["job_sizes"] == [48, 48] and values["cpu_threads"] == 1
    assert [d.split(" ")[0] for d in values["devices"]] == ["cpu(0)", "cpu(1)"]
    assert all(values[k] is None for k in GPU_ONLY), {k: values[k] for k in GPU_ONLY if values[k] is not None}
    for key in ("t_alone_0", "t_alone_1", "t_together"):
        low, high = values[f"{key}_spread"]
        assert 0 < low <= values[key] <= high
    if not -2 <= values["overlap_devices"] <= 2:  # a sanity bound: a busy machine moves the overlap
        values = rerun_json("auto_json")
    assert -2 <= values["overlap_devices"] <= 2, values
    alone = [values["t_alone_0"], values["t_alone_1"]]
    assert values["overlap_devices"] == pytest.approx((sum(alone) - values["t_together"]) / min(alone))


@pytest.mark.parametrize("name, short", [("auto_parallelism", "auto"), ("async_computation", "async"),
                                         ("parallelism_sweep", "sweep")])
def test_json_keys_equal_the_pytorch_twins(runs, name, short):
    """Each twin publishes exactly the contract's keys (tests/test_examples_pytorch.py checks the
    PyTorch side against the same set); MXNet's devices are CPU contexts."""
    values = figures(ok(runs, f"{short}_json")[0])
    assert set(values) == DOCUMENTED[name]
    assert values["devices"] and all(d.startswith("cpu(") for d in values["devices"])


@pytest.mark.parametrize("name, short", [("auto_parallelism", "auto"), ("async_computation", "async"),
                                         ("parallelism_sweep", "sweep")])
def test_compare_sets_the_books_cpu_figures_beside_this_runs(runs, name, short):
    """--compare --json: the book ran MXNet on CPU contexts too, so its figures face this run's, each row
    with both values (example_runs.check_comparison)."""
    compared = check_comparison(ok(runs, f"{short}_json")[0], "mxnet", name)
    assert compared["rows"], compared


def test_async_computation_labels(runs):
    """The PyTorch twin's labels with MXNet's blockers; the engine queues on the CPU too, so
    Python returns before the work is done, and the device's time comes from the profiler."""
    out, _ = ok(runs, "async")
    assert re.search(r"^device: cpu\(0\) \(.+\)$", out, re.M)
    assert "--device cpu: running on the CPU, where MXNet's engine queues the work" in out
    for label in ["Python returns after", "the work is done after", r"work, then \.item\(\)",
                  r"work, then \.asnumpy\(\)", r"work, then str\(\)",
                  "Python issues one step", "the engine runs one step",
                  "read every step", "read once at the end"]:
        assert re.search(rf"^{label}: ({TIME})$", out, re.M), label
    assert re.search(r"^reading once is \d+\.\d\d times as fast$", out, re.M)
    assert "the device's time is its busy time in MXNet's profiler, on cpu(0)" in out
    never_claims_a_gpu(out)
    values = figures(ok(runs, "async_json")[0])
    assert set(values) == DOCUMENTED["async_computation"]
    assert (values["size"], values["repeats"], values["steps"], values["step_size"]) == (48, 3, 200, 64)
    # (t_queue < t_done is not asserted: at size 48 both are a millisecond, within the noise of a shared CPU)
    assert 0 < values["t_step_gpu"] <= values["t_read_each_step"] / values["steps"]
    assert values["speedup_read_once"] == pytest.approx(values["t_read_each_step"] / values["t_read_once"])


def test_size_auto_is_chosen_by_timing_and_printed(runs):
    """--size auto (the default) picks, on a CPU context, the size at which one job takes about
    0.2 s, prints it once and uses it. The bounds are loose (a shared machine's load changes
    rates many times over), but a broken choice, such as the smallest or the largest size,
    fails them."""
    out, _ = ok(runs, "async_auto")
    never_claims_a_gpu(out)
    size, t_job = auto_size_and_job_time(out)
    if not 0.01 <= t_job <= 9.0:  # one more run, alone, before judging
        out = start("async_auto", "").communicate(timeout=ALONE_HUNG_AFTER_S)[0]
        size, t_job = auto_size_and_job_time(out)
    assert 16 < size < 4000 and 0.01 <= t_job <= 9.0, (size, t_job)


def test_parallelism_sweep_table_and_plot(runs):
    """One row per size on cpu(0) + cpu(1), no copy columns, the plot in both languages."""
    out, tmp = ok(runs, "sweep")
    assert "sweeping the CPU only (two jobs = the contexts cpu(0) and cpu(1))" in out
    assert "size: 64 (the largest size swept on cpu(0) (" in out
    for n in (32, 64):
        assert re.search(rf"^ +{n} +\d[\d.]* +\d[\d.]* +-?\d+\.\d\d$", out, re.M), out
    never_claims_a_gpu(out)
    assert (tmp / "sweep" / "sweep.en.png").read_bytes() != (tmp / "sweep" / "sweep.tr.png").read_bytes()
    values = figures(ok(runs, "sweep_json")[0])
    assert set(values) == DOCUMENTED["parallelism_sweep"]
    assert values["sweep_sizes"] == [32, 64] and values["large_overlap_copies"] is None
    assert values["cpu_small_overlap"] == values["small_overlap_streams"]
    names = ("small_overlap_streams", "large_overlap_streams")
    if not all(-2 <= values[k] <= 2 for k in names):  # a sanity bound, not a benchmark
        values = rerun_json("sweep_json")
    assert all(-2 <= values[k] <= 2 for k in names), values


@pytest.mark.parametrize("name, option", [("auto_bad", "--size"), ("async_bad", "--repeats"),
                                          ("sweep_bad", "--sizes")])
def test_bad_options_exit_2(runs, name, option):
    """A bad option stops with status 2 and a message naming it, before any work."""
    status, out, err, _ = runs[name]
    assert status == 2 and out == ""
    assert f"error: argument {option}" in err and "Traceback" not in err


def test_a_cpu_sweep_too_large_is_refused(runs):
    """--size above the CPU sweep's largest is refused with one line, never silently clamped."""
    status, out, err, _ = runs["sweep_too_big"]
    assert status == 2 and out == "", (out, err)
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert "error: --size 200000: the CPU sweep goes up to 1024 at most" in err


def test_too_large_a_size_is_one_line(runs):
    status, _, err, _ = runs["async_oom"]
    assert status == 2, err
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert "--size 2000000" in err and "try a smaller --size" in err


def test_two_cpu_contexts_do_not_hang_with_openmp_threads_set(runs):
    """OMP_NUM_THREADS=2 in the environment would hang products on cpu(0) and cpu(1); the run finishes."""
    values = figures(ok(runs, "omp2")[0])
    assert values["mode"] == "cpu" and values["t_together"] > 0


def test_gpu_code_paths_run_with_pretend_gpus(runs):
    """The 1-GPU and multi-GPU branches (copies, check, limits, copy timeline) run, on CPU contexts;
    a peak that the hardware cannot give is None, not a made-up number."""
    values = figures(ok(runs, "pretend_1gpu")[0])
    # The pretend GPUs are CPU contexts by type, so the published mode says cpu; the GPU branches ran.
    assert values["copies_correct"] == 50
    assert all(values[k] is not None for k in GPU_ONLY - PEAKS), [k for k in GPU_ONLY - PEAKS if values[k] is None]
    assert all(values[k] is None for k in PEAKS)
    out, tmp = ok(runs, "pretend_2gpu")
    assert "2 or more GPUs: one job on each of the first two." in out
    assert "note: no limit from the hardware: CUDA driver:" in out
    assert re.search(r"^link \(GB/s\): limit nan, best measured \d+\.\d, best / limit nan$", out, re.M), out
    for lang in ("en", "tr"):
        assert (tmp / "pretend" / f"timeline-copy.{lang}.png").read_bytes().startswith(PNG)
    sweep = figures(ok(runs, "pretend_sweep")[0])
    assert sweep["small_overlap_copies"] is not None and sweep["cpu_small_overlap"] is not None


def test_executes_as_a_notebook(runs):
    """In a kernel: options from EXAMPLE_ARGS, the contract's tags, each value glued once
    ('size' too), and every figure once per language with its book_language metadata."""
    _, tmp = ok(runs, "notebook")
    check_executed_notebook(tmp / "auto.ipynb")


@pytest.mark.parametrize("script", sorted(HIDDEN))
def test_cells_have_the_contracts_tags_and_shown_cells_are_short(script):
    check_shown_cells(SCRIPTS, script)


def test_recorded_mxnet_outputs_never_claim_a_gpu():
    """The committed recordings of these scripts ran on CPU contexts and say so."""
    for name in DOCUMENTED:
        recording = ROOT / "examples" / "recordings" / "mxnet" / f"{name}.ipynb"
        notebook = json.loads(recording.read_text())
        devices = ast.literal_eval(notebook["metadata"]["recording"]["glue"]["devices"])
        assert devices and all(d.startswith("cpu(") for d in devices), (recording.name, devices)
        never_claims_a_gpu("".join("".join(o.get("text", "")) for c in notebook["cells"]
                                   for o in c.get("outputs", [])))


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


def test_numpy_shim_asks_numpy_1_26_for_bool_without_its_future_warning():
    """numpy 1.24 to 1.26 warn when asked for the removed ``np.bool`` (their module __getattr__): the
    shim asks quietly, so MXNet on Python 3.12 (numpy 1.26.4) starts without a FutureWarning."""
    compat = _load("mxnet_numpy_compat", SCRIPTS / "numpy_compat.py")
    np = fake_numpy("1.26.4", compat=types.SimpleNamespace(basestring=str))

    def removed(name):  # what numpy 1.26's __getattr__ does for np.bool
        warnings.warn(f"In the future `np.{name}` will be defined as the corresponding NumPy scalar.",
                      FutureWarning, stacklevel=2)
        raise AttributeError(name)

    np.__getattr__ = removed
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        assert "bool" in compat.restore(np)


def test_scripts_run_under_numpy_2():
    """The shim lets MXNet 1.9.1 import and run under numpy 2 (the GPU machine's Python 3.12).

    ``make test`` builds a numpy-2 environment and points MXNET_NUMPY2_PYTHON at
    its Python; without it this test fails rather than pass unseen.
    """
    python = os.environ.get("MXNET_NUMPY2_PYTHON")
    if not python:
        pytest.fail("MXNET_NUMPY2_PYTHON is not set: run the tests with `make test`, which creates the "
                    "numpy-2 environment (mxnet 1.9.1, numpy 2, setuptools) and sets it")
    check = subprocess.run([python, "-c", "import numpy; print(numpy.__version__)"],
                           capture_output=True, text=True, check=True)
    assert int(check.stdout.split(".")[0]) >= 2, check.stdout
    run = subprocess.run([python, "auto_parallelism.py", "--size", "32", "--repeats", "1", "--json"],
                         cwd=SCRIPTS, capture_output=True, text=True, timeout=ALONE_HUNG_AFTER_S,
                         env=dict(os.environ, MPLBACKEND="Agg"))
    assert run.returncode == 0, run.stderr
    values = figures(run.stdout)
    assert values["mode"] == "cpu" and values["t_together"] > 0


def test_scripts_run_on_python_3_12_with_the_zips_pins_and_no_future_warning():
    """A reader on Python 3.12 installs the MXNet zip's requirements.txt (numpy 1.26.4 there, whose
    ``np.bool`` warns when asked for): every MXNet script starts and runs without a FutureWarning.

    ``make test`` installs them with python3.12 into .venv-mxnet312 (once: a second run installs
    nothing) and points MXNET_PY312_VENV at it; where python3.12 does not run, the folder says why and
    this test skips with that reason.
    """
    venv = os.environ.get("MXNET_PY312_VENV")
    if not venv:
        pytest.fail("MXNET_PY312_VENV is not set: run the tests with `make test`, which installs the MXNet "
                    "zips' requirements on Python 3.12 and sets it")
    if (Path(venv) / "skipped").is_file():
        pytest.skip((Path(venv) / "skipped").read_text().strip())
    python = str(Path(venv) / "bin" / "python")
    wanted = (Path(venv) / "requirements.txt").read_text()
    numpy = subprocess.run([python, "-c", "import sys, numpy; print(sys.version_info[:2], numpy.__version__)"],
                           capture_output=True, text=True, check=True).stdout.split(")")
    assert numpy[0] == "(3, 12" and f"numpy=={numpy[1].strip()}; python_version >= \"3.12\"" in wanted, (numpy, wanted)
    env = dict(os.environ, MPLBACKEND="Agg")
    env.pop("EXAMPLE_ARGS", None)
    scripts = sorted(p.name for p in SCRIPTS.glob("*.py") if p.name not in ("helpers.py", "numpy_compat.py"))
    runs = {script: subprocess.Popen([python, "-W", "error::FutureWarning", script, "--size", "32", "--repeats", "1",
                                      "--json"], cwd=SCRIPTS,
                                     env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for script in scripts}
    for script, run in runs.items():
        out, err = run.communicate(timeout=HUNG_AFTER_S)
        assert run.returncode == 0 and "Warning" not in err, f"{script} on Python 3.12:\n{err[-3000:]}"
        assert figures(out), script


@pytest.fixture(scope="module")
def helpers():
    # With torch already imported, MXNet's products on two contexts hang in this process (seen with
    # test_examples_pytorch.py run first); fail at once and say why, rather than hang.
    if "torch" in sys.modules:
        pytest.fail("torch is already imported in this test process, and MXNet's products on two CPU contexts "
                    "then hang here: run tests/test_examples_mxnet.py before anything that imports torch "
                    "(make test does), or in a process of its own")
    if str(SCRIPTS) not in sys.path:
        sys.path.append(str(SCRIPTS))  # for its numpy_compat; appended, so the PyTorch helpers still win
    saved = dict(os.environ)
    with warnings.catch_warnings():  # MXNet 1.9.1's own import warns about numpy and distutils
        warnings.simplefilter("ignore", DeprecationWarning)
        module = _load("mxnet_example_helpers", SCRIPTS / "helpers.py")
    yield module
    os.environ.clear()
    os.environ.update(saved)  # helpers sets OMP_NUM_THREADS; later tests must not inherit it


def test_copy_check_counts_a_planted_mismatch(helpers):
    """The check behind 'N of 50 copies are right' fails for a copy that differs in one element."""
    from mxnet import np, npx
    results = [np.full((4, 4), float(i)) for i in range(50)]
    hosts = [r.copyto(npx.cpu_pinned()) for r in results]
    assert helpers.count_equal(hosts, results) == 50
    hosts[17][2, 3] += 1
    assert helpers.count_equal(hosts, results) == 49
    assert helpers.count_equal([np.zeros((4, 4))] * 50, results) == 1  # cleared buffers match only zeros


def test_benchmark_prints_medians_with_spread_and_times_in_turns(helpers, capsys):
    """Each case warms up once, then the cases take turns; each prints its median [min-max]."""
    order = []
    samples = helpers.benchmark({"a": lambda: order.append("a"), "b": lambda: order.append("b")},
                                helpers.cpu(), repeats=3)
    assert order == ["a", "b"] * 4
    assert list(samples) == ["a", "b"] and all(len(s) == 3 and min(s) >= 0 for s in samples.values())
    out = [line for line in capsys.readouterr().out.splitlines()
           if not line.startswith("Times: median [fastest-slowest]")]  # the heading of the first times
    assert all(re.fullmatch(rf"[ab]: ({TIME})", line) for line in out) and len(out) == 2, out


def test_lanes_finish_times_and_device_time_come_from_the_profiler(helpers):
    """Each lane's own finish time is the end of its last operator; the device's busy time of a
    loop of small steps is at most the wall time, and above zero."""
    import time
    xs = [helpers.rand(128, helpers.cpu(i)) for i in (0, 1)]
    jobs = [lambda: [xs[0].dot(xs[0]) for _ in range(2)], lambda: [xs[1].dot(xs[1]) for _ in range(40)]]
    together = helpers.measure({"both": jobs}, repeats=2)["both"]
    assert set(together.lanes) == {0, 1} and all(len(v) == 2 for v in together.lanes.values())
    assert all(0 < t <= total + 1e-3 for lane in together.lanes.values() for t, total in zip(lane, together))
    assert max(together.lanes[0]) < min(together.lanes[1])  # 2 products end before 40
    assert {s.row for s in together.spans[-1]} == {"cpu/0", "cpu/1"}

    def gap():  # two small products with 50 ms of Python between them
        xs[0].dot(xs[0])
        time.sleep(0.05)
        return xs[0].dot(xs[0])
    host = helpers.measure({"gap": gap}, repeats=2)["gap"]
    busy = helpers.measure({"gap": gap}, clock="gpu", repeats=2)["gap"]
    assert all(0 < b < 0.04 for b in busy) and min(host) >= 0.05, (busy, host)
    with pytest.raises(ValueError, match="clock"):
        helpers.measure({"gap": gap}, clock="wall")


def test_matrix_size_is_given_or_timed_on_cpu_contexts(helpers, monkeypatch, capsys):
    """--size N is used as given; auto is 4000 on a GPU and timed on a CPU context; the choice is printed."""
    from mxnet import npx

    monkeypatch.setitem(helpers._settings, "options", argparse.Namespace(size=48))
    assert helpers.matrix_size(helpers.cpu()) == 48
    monkeypatch.setitem(helpers._settings, "options", argparse.Namespace(size="auto"))
    assert helpers.matrix_size(npx.gpu(0)) == 4000
    seen = []
    monkeypatch.setattr(helpers, "cpu_size_for", lambda *args: seen.append(args) or 272)
    assert helpers.matrix_size(helpers.cpu(1), largest=1024) == 272
    assert seen == [(0.2, 50, 1024, helpers.cpu(1))]
    assert "size: 272 (--size auto: one job takes about 0.2 s on this CPU)" in capsys.readouterr().out


def test_cpu_size_for_aims_at_the_target_time(helpers):
    """The chosen size's job takes about the target time (a factor 10 either way on a busy
    machine, after a second try), and the size stays within its bounds."""
    for _ in range(2):
        size = helpers.cpu_size_for(0.1, 50, 1024)
        x = helpers.rand(size, helpers.cpu())
        (took,) = helpers.measure({"job": lambda: [x.dot(x) for _ in range(50)]}, repeats=1).values()
        if 0.01 <= took[0] <= 1.0:
            break
    assert 16 < size <= 1024 and 0.01 <= took[0] <= 1.0, (size, took)
    assert helpers.cpu_size_for(100, 50, 96) == 96


def test_timeline_shows_each_product_on_its_context(helpers):
    """The profiler's spans: one per product, on the row of its context, in time order; nothing else."""
    xs = [helpers.rand(32, helpers.cpu(i)) for i in (0, 1)]
    helpers.synchronize()
    timeline = helpers.Timeline()
    with timeline.span("lane 0", helpers.cpu(0), "product"):
        ys = [xs[0].dot(xs[0]) for _ in range(3)]
    with timeline.span("lane 1", helpers.cpu(1)):
        ys += [xs[1].dot(xs[1]) for _ in range(2)]
    del ys  # frees the results: the engine's DeleteVariable is not drawn
    spans = timeline.spans()
    assert [(s.row, s.label) for s in spans] == [("lane 0", "product")] * 3 + [("lane 1", "")] * 2
    assert all(0 <= s.end - s.start < 5 for s in spans)
    assert all(a.end <= b.start for a, b in zip(spans[:2], spans[1:3]))  # one worker per context
    later = helpers.Timeline()
    assert later.spans() == []  # a new timeline sees only its own work


def test_busy_seconds(helpers):
    Span = helpers.Span
    assert helpers.busy_seconds([Span("a", 0, 2), Span("b", 1, 3), Span("a", 5, 6)]) == pytest.approx(4)
    assert helpers.busy_seconds([]) == 0


def test_figure_texts_exist_in_both_languages(helpers):
    """MXNet's own figure texts are in English and Turkish; the rest come from common.i18n."""
    assert helpers.TEXTS["en"].keys() == helpers.TEXTS["tr"].keys()
    assert helpers.text("tr", "copies_after_each").startswith("her kopya")
    assert helpers.text("tr", "one_context", device="gpu(0)") == "gpu(0): iki iş (tek bağlam)"
    assert helpers.text("tr", "alone") == "her iş tek başına, biri ötekinden sonra"  # shared


def test_helpers_name_contexts_and_recognise_memory_errors(helpers):
    import mxnet
    assert helpers.name(helpers.cpu(1)).startswith("cpu(1) (") and helpers.gpus("cpu") == []
    assert helpers.is_out_of_memory(mxnet.base.MXNetError("Failed to allocate CPU Memory"))
    assert helpers.is_out_of_memory(MemoryError())
    assert not helpers.is_out_of_memory(mxnet.base.MXNetError("shape mismatch"))


def test_errors_that_a_smaller_size_avoids_are_one_line(helpers):
    """Out of memory, and (where memory suffices) MXNet's int32 limit on elements per array."""
    import mxnet
    too_many = mxnet.base.MXNetError("Check failed: Size of tensor you are trying to allocate is "
                                     "larger than 2^31 elements. Please build with USE_INT64_TENSOR_SIZE=1")
    assert helpers.error_message(too_many, 50000) == (
        "--size 50000 is too large for this MXNet build (at most 2^31 - 1 elements per array, "
        "i.e. --size 46340); try a smaller --size")
    assert "out of memory on the CPU at --size 8000" in helpers.error_message(MemoryError(), 8000)
    assert helpers.error_message(mxnet.base.MXNetError("shape mismatch"), 8000) is None
