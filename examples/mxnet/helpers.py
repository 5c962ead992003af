"""MXNet helpers shared by the example scripts of this chapter.

The twin of examples/pytorch/helpers.py, with the same function names: device
(context) discovery that never fails on a machine without a GPU, waiting for
EVERY device, a timer that reports medians over repeats, running several jobs
at once, and a recorder of start/end times for timelines.

MXNet 1.9.1 is the last release. Its GPU builds stop at CUDA 11.7 and carry no
code for newer GPUs (such as the H200), so on most machines today the MXNet
twins run on the CPU and say so. Every MXNet call goes to the dependency
engine and returns at once, on the CPU too; ``npx.waitall()`` waits for all.

This is the one place that puts examples/ on sys.path, so that the scripts can
use the framework-agnostic modules in examples/common/.
"""
import atexit
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import NamedTuple

import numpy_compat

# The book's figures are fp32: keep cuBLAS from using TF32 on GPUs that have it.
os.environ.setdefault("NVIDIA_TF32_OVERRIDE", "0")
# MXNet's pip wheel links OpenBLAS 0.3.13 built with OpenMP and NUM_PARALLEL=1: one OpenMP
# caller at a time (upstream's build notes: further concurrent callers wait, or risk wrong
# results). On a 2-core test machine, two products at once (on cpu(0) and cpu(1)) with 2
# OpenMP threads each never finished. One thread per product avoids that (MXNet's default is
# half the cores); it must be set before MXNet loads OpenMP. See MEASUREMENTS.md.
os.environ["OMP_NUM_THREADS"] = "1"
numpy_compat.restore()  # before mxnet: numpy >= 1.24 lacks names that MXNet 1.9.1 binds
import mxnet  # noqa: E402
from mxnet import np, npx  # noqa: E402

npx.set_np()
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common.machine import cpu_model, device_label  # noqa: E402
from common.options import fail, install_error_hook, oom_message, parse_options  # noqa: E402
from common.report import Report, fraction, seconds  # noqa: E402,F401
from common.stats import count_equal, in_turns, matmul_flops, median, size_for_time, slowdown  # noqa: E402
from common.timeline import Span, draw_timeline  # noqa: E402,F401

FRAMEWORK = "mxnet"
CPU_THREADS = 1  # OpenMP threads per CPU product (OMP_NUM_THREADS above)
CPU_THREADS_NOTE = (
    "One thread per CPU product (OMP_NUM_THREADS=1). MXNet's OpenBLAS 0.3.13 serves\n"
    "one OpenMP caller at a time; with 2 threads each, two products at once never\n"
    "finished in our tests on a 2-core machine (see MEASUREMENTS.md).")
GPU_SIZE = 4000  # --size auto on a GPU, as in the book
CPU_JOB_SECONDS = 0.3  # --size auto on CPU contexts: one job of products takes about this long
_PROFILE = Path(tempfile.gettempdir()) / f"mxnet-example-profile-{os.getpid()}.json"
_profiler_on = []  # [True] once the profiler is configured
_ENGINE_OPS = ("DeleteVariable", "WaitForVar", "WaitForAll")  # the engine's own, not our work
_why_no_gpu = ["this MXNet build has no CUDA" if not mxnet.runtime.Features().is_enabled("CUDA")
               else "npx.num_gpus() is 0"]


def start(doc, keys=(), add_arguments=None):
    """Parse the options and return ``(options, report)``; products are fp32 (MXNet's default).

    Out-of-memory errors from here on end with one line that suggests a smaller
    --size instead of a traceback.
    """
    options = parse_options(doc, add_arguments=add_arguments)

    def explain(exc):
        if "larger than 2^31 elements" in str(exc):  # the pip builds index arrays with int32
            return (f"--size {options.size} is too large for this MXNet build (at most 2^31 - 1 "
                    "elements per array, i.e. --size 46340); try a smaller --size")
        if not is_out_of_memory(exc):
            return None
        return oom_message(options.size, "the GPU" if "cuda" in str(exc).lower() else "the CPU")

    install_error_hook(explain)
    return options, Report(options, keys)


def is_out_of_memory(exc):
    """True for a GPU or CPU out-of-memory error (MXNet raises them as MXNetError)."""
    text = str(exc).lower()
    return isinstance(exc, MemoryError) or (isinstance(exc, mxnet.base.MXNetError) and any(
        s in text for s in ("out of memory", "bad_alloc", "failed to allocate", "cudaerrormemoryallocation")))


def gpus(choice="auto"):
    """All usable GPU contexts; [] for --device cpu or without a usable GPU.

    A GPU that fails a tiny computation (e.g. no kernels for its architecture)
    is left out with a note on stderr. ``--device gpu`` without one stops with exit 2.
    """
    found, problem = [], _why_no_gpu[0]
    if choice != "cpu":
        try:
            count = npx.num_gpus()
        except Exception as exc:  # a broken driver counts as no GPU
            count, problem = 0, str(exc).strip().splitlines()[-1]
        for i in range(count):
            try:
                (np.ones(1, ctx=npx.gpu(i)) + 1).wait_to_read()
                found.append(npx.gpu(i))
            except Exception as exc:
                problem = f"gpu({i}): {str(exc).strip().splitlines()[-1]}"
                print(f"note: leaving out {problem}", file=sys.stderr)
    _why_no_gpu[0] = problem
    if choice == "gpu" and not found:
        fail(f"--device gpu: no usable GPU for MXNet ({problem}); use --device cpu or --device auto")
    return found


def no_gpu_reason(choice):
    """Why a script runs without a GPU: ``--device cpu``, or why MXNet has none (after gpus())."""
    return "--device cpu" if choice == "cpu" else f"No GPU usable by MXNet ({_why_no_gpu[0]})"


def cpu(i=0):
    """The CPU context ``cpu(i)``: one processor, but its own engine workers for each i."""
    return npx.cpu(i)


def _gpu_model(i):
    try:  # MXNet has no call that names a GPU
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", f"--id={i}"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out or "GPU"


def name(ctx, lane=None):
    """How the output names a context: ``gpu(0) (NVIDIA A100 ...)``, ``cpu(1) (AMD EPYC ...)``.

    ``lane`` is accepted for the PyTorch twin's sake: MXNet's CPU lanes are
    already told apart by their context, cpu(0) and cpu(1).
    """
    if ctx.device_type == "gpu":
        return device_label(f"gpu({ctx.device_id})", _gpu_model(ctx.device_id))
    return device_label(f"cpu({ctx.device_id})", cpu_model())


def synchronize(devices=()):
    """Wait until every queued job on every device is done.

    ``npx.waitall()`` waits for everything queued so far, on all contexts, so
    ``devices`` only documents which ones the caller means.
    """
    npx.waitall()


def rand(size, device):
    """A ``size x size`` fp32 matrix of uniform random numbers on ``device``."""
    return np.random.uniform(size=(size, size), ctx=device)


def measure_all(job, devices, repeats, warmup=1):
    """Wall-clock times of ``repeats`` calls of ``job()``, waiting for all devices.

    Everything queued is finished before the clock starts and before it stops;
    ``warmup`` untimed calls come first.
    """
    synchronize(devices)
    for _ in range(warmup):
        job()
        synchronize(devices)
    times = []
    for _ in range(repeats):
        synchronize(devices)
        begin = time.perf_counter()
        job()
        synchronize(devices)
        times.append(time.perf_counter() - begin)
    return times


def measure(job, devices, repeats, warmup=1):
    """The median of :func:`measure_all` in seconds."""
    return median(measure_all(job, devices, repeats, warmup))


def measure_in_turns(cases, repeats, warmup=1):
    """Medians of several ``name: (job, devices)`` cases timed in turns (common.stats.in_turns)."""
    return in_turns(measure_all, cases, repeats, warmup)


def run_concurrently(jobs):
    """Queue every job, one after another, from this thread; return their results.

    No threads are needed: each call only hands its work to MXNet's engine and
    returns, and the engine decides what runs at the same time. The caller waits.
    """
    return [job() for job in jobs]


def matmul_rate(device, size, repeats=3):
    """Measured FLOP/s of one ``size x size`` fp32 product on ``device``."""
    x = rand(size, device)
    return matmul_flops(size) / measure(lambda: x.dot(x), [device], repeats)


def size_for_job(seconds_target, products, device, largest=46336):
    """A matrix side whose ``products`` products take about ``seconds_target`` on ``device``.

    Times a few queued products at a small size, then at the size their rate suggests.
    """
    size, sample = 256, min(products, 10)
    for _ in range(2):
        x = rand(size, device)
        t = measure(lambda: [x.dot(x) for _ in range(sample)], [device], repeats=3)
        size = size_for_time(matmul_flops(size, sample) / t, seconds_target, products, largest=largest)
    return size


def choose_size(choice, device, products):
    """--size: a number as given; ``auto``: GPU_SIZE on a GPU, and on a CPU context the side
    at which one job of ``products`` products takes about CPU_JOB_SECONDS (timed here)."""
    if choice != "auto":
        return choice
    return GPU_SIZE if device.device_type == "gpu" else size_for_job(CPU_JOB_SECONDS, products, device)


def same(host, device):
    """True if a host copy (a NumPy array) equals its device result exactly."""
    return bool((host == device.asnumpy()).all())


def copies_correct(buffers, results):
    """How many host ``buffers`` hold exactly their device ``results``.

    Reads every buffer first, with ``.asnumpy()``: MXNet's engine runs a read only
    after the writes queued to that buffer, so nobody needs to wait before.
    """
    host = [b.asnumpy() for b in buffers]
    return count_equal(zip(host, results), same)


class Timeline:
    """Records when each operator ran on each device, as MXNet's profiler sees it.

    The profiler notes, on the engine's worker thread, when an operator starts
    and ends; MXNet 1.x also waits for each GPU operator's stream before it
    calls the operator done, so the times are the device's. (Waiting on each
    result from Python would be no substitute: ``wait_to_read()`` is itself
    queued behind the work on cpu(0).) ``span`` says which row the operators
    of a device belong on, or, if ``label`` is "copy", the copies between
    devices. Call :meth:`spans` after the work.
    """

    def __init__(self, devices=()):
        self._rows = {}  # profiler's device name ("cpu/1", "gpu/0") or "copy" -> (row, label)
        synchronize(devices)
        if not _profiler_on:  # configure once: MXNet refuses a second configuration
            mxnet.profiler.set_config(profile_imperative=True, profile_memory=False, profile_api=False,
                                      aggregate_stats=False, filename=str(_PROFILE))
            atexit.register(_PROFILE.unlink, missing_ok=True)
            _profiler_on.append(True)
        self._begin = time.time()  # the profiler's clock (microseconds since the epoch)
        mxnet.profiler.set_state("run")

    @contextmanager
    def span(self, row, device, label=""):
        """Put the operators that run on ``device`` (all copies if label is "copy") on ``row``."""
        self._rows["copy" if label == "copy" else f"{device.device_type}/{device.device_id}"] = (row, label)
        yield

    def spans(self):
        """The recorded spans in seconds (waits for the work and stops the profiler first)."""
        synchronize()
        mxnet.profiler.set_state("stop")
        mxnet.profiler.dump(finished=False)  # appends the new events; the list stays open
        text = _PROFILE.read_text().rstrip().rstrip(",")
        try:
            events = json.loads(text)["traceEvents"]
        except ValueError:
            events = json.loads(text + "]}")["traceEvents"]
        devices = {e["pid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
        started, out = {}, []
        for e in sorted(events, key=lambda e: e.get("ts", 0)):
            if e.get("ph") not in ("B", "E") or e["ts"] < self._begin * 1e6:
                continue
            key = (e["pid"], e["tid"], e["name"])
            if e["ph"] == "B":
                started[key] = e["ts"]
            elif key in started and e["name"] not in _ENGINE_OPS:
                row = self._rows.get("copy" if e["name"].startswith("Copy") else devices.get(e["pid"]))
                if row:
                    out.append(Span(row[0], started.pop(key) / 1e6, e["ts"] / 1e6, row[1]))
        order = [row for row, _ in self._rows.values()]
        return sorted(out, key=lambda s: (order.index(s.row), s.start))


def overlap_seconds(spans):
    """``(shared, total)``: how long two or more rows were busy at once, and the whole time."""
    events = sorted((t, d, s.row) for s in spans for t, d in ((s.start, 1), (s.end, -1)))
    active, shared = {}, 0.0
    for (t, d, row), (t_next, *_) in zip(events, events[1:] + [(0, 0, None)]):
        active[row] = active.get(row, 0) + d
        if sum(1 for n in active.values() if n > 0) >= 2:
            shared += t_next - t
    return shared, (events[-1][0] - events[0][0] if events else 0.0)


class Turns(NamedTuple):
    """What :func:`time_jobs` measured: wall-clock samples and the profiler's view."""
    alone: list  # per job: seconds of each timed round, the job alone
    together: list  # seconds of each timed round, all jobs queued together
    slowdown: list  # per job: its own time together / alone, from the profiler (medians)
    shared: list  # per together round: (seconds two or more jobs computed at once, seconds)
    spans_alone: list  # the profiler's spans of the last round, each job alone
    spans_together: list  # ... and all together


def time_jobs(jobs, devices, repeats):
    """Time each job alone and all jobs together, in turns, with MXNet's profiler on.

    ``jobs[i]()`` queues job i on ``devices[i]``. After a warm-up round, every
    round times each job alone and then all together (common.stats.in_turns),
    so that a shared machine's drift affects every case alike. The wall clock
    cannot tell the jobs of one case apart; the profiler can: a job's own time
    runs from the moment its case was queued to the end of its last product.
    """
    rows = [name(d) for d in devices]
    cases = {i: [i] for i in range(len(jobs))}
    cases["together"] = list(range(len(jobs)))
    timeline, calls = Timeline(devices), []  # calls: (clock when queued, case), in order

    def time_once(members):
        synchronize(devices)
        calls.append((time.time(), members))
        begin = time.perf_counter()
        queued = []
        for i in members:
            with timeline.span(rows[i], devices[i]):
                queued.append(jobs[i]())
        synchronize(devices)
        return time.perf_counter() - begin

    wall = in_turns(time_once, cases, repeats)
    spans = timeline.spans()
    own, shared, last = {}, [], {}
    for k, ((begin, members), (end, _)) in enumerate(zip(calls, calls[1:] + [(math.inf, None)])):
        mine = [s for s in spans if begin <= s.start < end]
        last[tuple(members)] = mine
        if k < len(cases):
            continue  # the warm-up round
        for i in members:
            own.setdefault((len(members), i), []).append(max(s.end for s in mine if s.row == rows[i]) - begin)
        if len(members) > 1:
            shared.append(overlap_seconds(mine))
    together = len(jobs)
    slowdowns = [slowdown(median(own[1, i]), median(own[together, i])) for i in range(len(jobs))]
    return Turns([wall[i] for i in range(len(jobs))], wall["together"], slowdowns, shared,
                 [s for i in range(len(jobs)) for s in last[(i,)]], last[tuple(range(len(jobs)))])


def span(timeline, row, device, label=""):
    """``timeline.span(...)``, or a context that records nothing when timeline is None."""
    return nullcontext() if timeline is None else timeline.span(row, device, label)
