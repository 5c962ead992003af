"""The PyTorch example scripts, run as a reader runs them: tiny sizes, on the CPU.

Every script is started once per case, all cases at the same time (the torch
import dominates), and the tests check what a reader sees: the labels, the
honest CPU messages, the --json object, exit status 2 for bad options, PNGs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "examples" / "pytorch"
TIME = r"\d+\.\d{4} s"

# The published keys, as the contract between the scripts and the book fixes them.
ALWAYS = {"size", "repeats", "devices"}
DOCUMENTED = {
    "auto_parallelism": ALWAYS | {
        "mode", "n_gpus", "lanes", "products", "t_alone_0", "t_alone_1", "t_alone_max", "t_together",
        "parallel_eff", "t_run", "t_copy_pageable", "t_copy_nonblocking", "t_run_copy_nonblocking",
        "overlap_eff_seed", "t_copy_pinned", "t_run_copy_streams", "overlap_eff", "copy_matches",
        "d2h_gbps", "d2h_peak_gbps", "d2h_frac", "tflops_run", "tflops_peak", "tflops_frac"},
    "async_computation": ALWAYS | {
        "t_enqueue", "t_complete", "t_wait_item", "t_wait_numpy", "t_wait_print", "t_wait_sync",
        "t_sync_each_step", "t_sync_once", "speedup_sync_once"},
    "parallelism_sweep": ALWAYS | {
        "sweep_sizes", "small_parallel_eff", "large_parallel_eff", "small_overlap_eff", "large_overlap_eff"},
}
GPU_ONLY = ["t_run", "t_copy_pageable", "t_copy_nonblocking", "t_run_copy_nonblocking", "overlap_eff_seed",
            "t_copy_pinned", "t_run_copy_streams", "overlap_eff", "copy_matches", "d2h_gbps",
            "d2h_peak_gbps", "d2h_frac", "tflops_run", "tflops_peak", "tflops_frac"]

CASES = {
    "auto": ["auto_parallelism", "--size", "48", "--repeats", "3", "--device", "cpu", "--figures", "{tmp}/auto"],
    "auto_json": ["auto_parallelism", "--size", "48", "--repeats", "3", "--device", "cpu", "--json"],
    "auto_gpu": ["auto_parallelism", "--device", "gpu", "--size", "8"],
    "async": ["async_computation", "--size", "48", "--repeats", "3", "--device", "cpu"],
    "async_json": ["async_computation", "--size", "48", "--repeats", "3", "--device", "cpu", "--json"],
    "async_oom": ["async_computation", "--size", "2000000", "--device", "cpu"],
    "sweep": ["parallelism_sweep", "--sizes", "32,64", "--repeats", "3", "--device", "cpu",
              "--figures", "{tmp}/sweep"],
    "sweep_json": ["parallelism_sweep", "--sizes", "32,64", "--repeats", "3", "--device", "cpu", "--json"],
    "sweep_bad": ["parallelism_sweep", "--sizes", "64,x"],
}
# Cases whose efficiencies are checked: they must not share the CPU with the others.
TIMED = ["auto_json", "sweep_json"]


def start(args, tmp):
    script, *options = args
    env = dict(os.environ, MPLBACKEND="Agg", OMP_NUM_THREADS="1")
    env.pop("EXAMPLE_ARGS", None)
    return subprocess.Popen([sys.executable, f"{script}.py", *[o.format(tmp=tmp) for o in options]],
                            cwd=SCRIPTS, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Run every case; return name -> (exit status, stdout, stderr, tmp folder).

    The cases whose timings are checked run one at a time on a quiet machine; the
    others, which only check what is printed, then run all at once.
    """
    tmp = tmp_path_factory.mktemp("pytorch")
    done = {}
    for name in TIMED:
        out, err = (proc := start(CASES[name], tmp)).communicate(timeout=300)
        done[name] = (proc.returncode, out, err, tmp)
    procs = {name: start(args, tmp) for name, args in CASES.items() if name not in TIMED}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        done[name] = (proc.returncode, out, err, tmp)
    return done


def ok(runs, name):
    status, out, err, tmp = runs[name]
    assert status == 0, f"{name} failed:\n{err}"
    return out, tmp


def efficiencies_in_range(values, names):
    return all(values[k] is None or 0 < values[k] <= 1.05 for k in names)


def rerun_json(name):
    """One more run when a timing looks impossible: a busy machine can upset one measurement."""
    args = [a for a in CASES[name] if "{tmp}" not in a]
    out, _ = start(args, "").communicate(timeout=300)
    return json.loads(out)


def test_auto_parallelism_says_what_ran_where(runs):
    """Without a GPU the reader is told so, sees two CPU lanes named by model, and no GPU figure."""
    out, tmp = ok(runs, "auto")
    assert "--device cpu: two CPU jobs in two threads" in out
    assert "TF32 is off" in out
    for lane in (0, 1):
        assert re.search(rf"^cpu thread {lane} \(.+\) alone: {TIME}$", out, re.M), out
    assert re.search(rf"^all 2 lanes together: {TIME}$", out, re.M)
    assert re.search(r"^parallel efficiency, max\(alone\) / together: \d+\.\d\d$", out, re.M)
    assert "the copy experiments need a GPU and are skipped" in out
    assert "cuda" not in out and not re.search(r"\d\s*(GB/s|TFLOP/s)", out)
    assert (tmp / "auto" / "timeline-devices.png").read_bytes().startswith(b"\x89PNG")
    assert not (tmp / "auto" / "timeline-copy.png").exists()


def test_auto_parallelism_json(runs):
    """--json prints exactly one object with the documented keys; GPU-only figures are None."""
    out, _ = ok(runs, "auto_json")
    assert out.count("\n") == 1
    values = json.loads(out)
    assert set(values) == DOCUMENTED["auto_parallelism"]
    assert (values["mode"], values["n_gpus"], values["products"], values["size"]) == ("cpu", 0, 50, 48)
    assert len(values["lanes"]) == 2 and all(lane.startswith("cpu") for lane in values["lanes"])
    assert all(values[k] is None for k in GPU_ONLY)
    assert 0 < values["t_alone_0"] <= values["t_alone_max"] and values["t_together"] > 0
    assert values["t_alone_max"] == max(values["t_alone_0"], values["t_alone_1"])
    if not efficiencies_in_range(values, ["parallel_eff"]):
        values = rerun_json("auto_json")
    assert efficiencies_in_range(values, ["parallel_eff"]), values
    assert values["parallel_eff"] == pytest.approx(values["t_alone_max"] / values["t_together"])


def test_async_computation_is_honest_about_the_cpu(runs):
    """On the CPU the script says that nothing is queued instead of pretending to show asynchrony."""
    out, _ = ok(runs, "async")
    assert re.search(r"^device: cpu \(.+\); TF32 is off", out, re.M)
    assert "eager PyTorch runs each operation before the call returns" in out
    for label in ["queue the work \\(Python returns\\)", "until the work is done", "wait in \\.item\\(\\)",
                  "wait in \\.cpu\\(\\)\\.numpy\\(\\)", "wait in print\\(\\)", "wait in synchronize",
                  "read a scalar every step", "read once at the end"]:
        assert re.search(rf"^{label}: {TIME}$", out, re.M), label
    assert re.search(r"^speedup of reading once: \d+\.\d\dx$", out, re.M)
    assert "cuda" not in out and "tensor(" not in out


def test_async_computation_json(runs):
    out, _ = ok(runs, "async_json")
    values = json.loads(out)
    assert set(values) == DOCUMENTED["async_computation"]
    assert values["devices"][0].startswith("cpu (")
    assert all(values[k] > 0 for k in DOCUMENTED["async_computation"] - ALWAYS - {"t_wait_sync"})
    assert values["t_enqueue"] <= values["t_complete"]
    assert values["speedup_sync_once"] == pytest.approx(values["t_sync_each_step"] / values["t_sync_once"])


def test_parallelism_sweep_table_and_plot(runs):
    """The sweep prints one row per size and saves the efficiency plot."""
    out, tmp = ok(runs, "sweep")
    assert "--device cpu: sweeping the CPU only" in out
    assert re.search(r"size +one job +two at once +parallel eff", out)
    for n in (32, 64):
        assert re.search(rf"^ +{n} +{TIME} +{TIME} +\d+\.\d\d +n/a +n/a +n/a$", out, re.M), out
    assert "cuda" not in out
    assert (tmp / "sweep" / "sweep.png").read_bytes().startswith(b"\x89PNG")


def test_parallelism_sweep_json(runs):
    out, _ = ok(runs, "sweep_json")
    values = json.loads(out)
    assert set(values) == DOCUMENTED["parallelism_sweep"]
    assert values["sweep_sizes"] == [32, 64]
    assert values["small_overlap_eff"] is None and values["large_overlap_eff"] is None
    names = ["small_parallel_eff", "large_parallel_eff"]
    if not efficiencies_in_range(values, names):
        values = rerun_json("sweep_json")
    assert efficiencies_in_range(values, names) and values["small_parallel_eff"] is not None, values


def test_bad_options_exit_2(runs):
    """A bad option stops with status 2 and a message naming it, before any work.

    (Every script parses with common.options, whose errors the unit tests cover case by case.)
    """
    status, out, err, _ = runs["sweep_bad"]
    assert status == 2 and out == ""
    assert "error: argument --sizes" in err and "Traceback" not in err


def test_device_gpu_without_a_gpu_exits_2(runs):
    """--device gpu never silently runs on the CPU."""
    status, out, err, _ = runs["auto_gpu"]
    if status == 0 and "GPU" in out:
        pytest.skip("this machine has a GPU")
    assert status == 2
    assert err.strip().count("\n") == 0 and "--device gpu: no usable GPU" in err


def test_out_of_memory_is_one_line(runs):
    """A size that does not fit ends with one line that suggests a smaller --size, no traceback."""
    status, _, err, _ = runs["async_oom"]
    assert status == 2, err
    assert err.strip().count("\n") == 0 and "Traceback" not in err
    assert "out of memory" in err and "try a smaller --size" in err


# The PyTorch helpers, in this process ---------------------------------------

@pytest.fixture(scope="module")
def helpers():
    sys.path.insert(0, str(SCRIPTS))
    import helpers as module
    return module


def test_run_concurrently_runs_jobs_at_once_and_keeps_order(helpers):
    """Two CPU jobs really overlap (each waits for the other) and their results keep their order."""
    import threading
    both = threading.Barrier(2, timeout=10)
    assert helpers.run_concurrently([lambda: both.wait() * 0 + 1, lambda: both.wait() * 0 + 2]) == [1, 2]
    assert helpers.run_concurrently([]) == []


def test_run_concurrently_reraises_a_job_error(helpers):
    def broken():
        raise MemoryError("job 1")
    with pytest.raises(MemoryError, match="job 1"):
        helpers.run_concurrently([lambda: 1, broken])


def test_measure_reports_the_median_after_warm_up(helpers):
    calls = []
    times = helpers.measure_all(lambda: calls.append(1), ["cpu"], repeats=3, warmup=2)
    assert len(calls) == 5 and len(times) == 3 and all(t >= 0 for t in times)


def test_timeline_records_cpu_spans_on_one_clock(helpers):
    timeline = helpers.Timeline(["cpu"])
    with helpers.span(timeline, "cpu thread 0", "cpu", "run"):
        pass
    with helpers.span(None, "ignored", "cpu"):
        pass
    (span,) = timeline.spans()
    assert span.row == "cpu thread 0" and span.label == "run" and 0 <= span.end - span.start < 1


def test_out_of_memory_errors_are_recognised(helpers):
    assert helpers.is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert helpers.is_out_of_memory(RuntimeError("DefaultCPUAllocator: can't allocate memory"))
    assert helpers.is_out_of_memory(MemoryError())
    assert not helpers.is_out_of_memory(RuntimeError("shape mismatch"))


def test_cpu_is_named_by_model_and_gpus_respect_device_cpu(helpers):
    assert helpers.name("cpu").startswith("cpu (") and helpers.name("cpu", 1).startswith("cpu thread 1 (")
    assert helpers.gpus("cpu") == []
