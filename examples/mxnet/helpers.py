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
import os
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy_compat

# The book's figures are fp32: keep cuBLAS from using TF32 on GPUs that have it.
os.environ.setdefault("NVIDIA_TF32_OVERRIDE", "0")
numpy_compat.restore()  # before mxnet: numpy >= 1.24 lacks names that MXNet 1.9.1 binds
import mxnet  # noqa: E402
from mxnet import np, npx  # noqa: E402

npx.set_np()
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common.machine import cpu_model, device_label  # noqa: E402
from common.options import fail, install_error_hook, oom_message, parse_options  # noqa: E402
from common.report import Report, fraction, seconds  # noqa: E402,F401
from common.stats import matmul_flops, median, size_for_time  # noqa: E402
from common.timeline import Span, draw_timeline  # noqa: E402,F401

FRAMEWORK = "mxnet"
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


def cpu_size_for(seconds_target, products, largest):
    """A CPU matrix side whose ``products`` products take about ``seconds_target``."""
    size = min(largest, 256)
    for _ in range(2):
        size = size_for_time(matmul_rate(cpu(), size), seconds_target, products, largest=largest)
    return size


class Timeline:
    """Records when the results of queued work became ready, on one host clock.

    These are HOST-OBSERVED times: MXNet has no events to read back, so a
    watcher thread blocks on each watched result in turn with ``wait_to_read()``
    (which releases the GIL) and notes when it returns. On each row, a result's
    bar ends when it was ready and starts at the latest of: when it was queued,
    when the row's previous result was ready, and its end minus the row's median
    gap between results (the host cannot see when work starts). Call
    :meth:`spans` after the work.
    """

    def __init__(self, devices=()):
        self._ready, self._threads = [], []  # (row, label, queued, ready) per result
        self._lock = threading.Lock()
        synchronize(devices)

    @contextmanager
    def span(self, row, device=None, label=""):
        """Yield ``watch(arrays)``, which notes when each array queued in the block is ready."""
        queued = time.perf_counter()

        def watch(arrays):
            def wait_each():
                for a in arrays:
                    a.wait_to_read()
                    with self._lock:
                        self._ready.append((row, label, queued, time.perf_counter()))
            thread = threading.Thread(target=wait_each, daemon=True)
            thread.start()
            self._threads.append(thread)
            return arrays

        yield watch

    def spans(self):
        """The observed spans in seconds (waits for the watcher threads first)."""
        for thread in self._threads:
            thread.join()
        out = []
        for row in dict.fromkeys(r[0] for r in self._ready):
            mine = sorted((r for r in self._ready if r[0] == row), key=lambda r: r[3])
            ends = [r[3] for r in mine]
            gap = median([b - a for a, b in zip(ends, ends[1:])] or [ends[0] - mine[0][2]])
            previous = mine[0][2]
            for _, label, queued, ready in mine:
                out.append(Span(row, max(queued, previous, ready - gap), ready, label))
                previous = ready
        return out


def overlap_seconds(spans):
    """How long at least two rows had a span in progress at the same time."""
    events = sorted((t, d, s.row) for s in spans for t, d in ((s.start, 1), (s.end, -1)))
    active, total, last = {}, 0.0, None
    for t, d, row in events:
        if last is not None and sum(1 for n in active.values() if n > 0) >= 2:
            total += t - last
        active[row] = active.get(row, 0) + d
        last = t
    return total


@contextmanager
def _no_timeline(*args, **kwargs):
    yield lambda arrays: arrays


def span(timeline, row, device=None, label=""):
    """``timeline.span(...)``, or a context whose ``watch`` records nothing when timeline is None."""
    return _no_timeline() if timeline is None else timeline.span(row, device, label)
