"""PyTorch helpers shared by the example scripts of this chapter.

Device discovery that never fails on a machine without a GPU, synchronising
EVERY device involved, a timer that reports medians over repeats, running
several jobs at once, and a recorder of start/end times for timelines (CUDA
events on a GPU, ``time.perf_counter`` on the CPU). The MXNet twin
(examples/mxnet/helpers.py) has the same function names.

This is the one place that puts examples/ on sys.path, so that the scripts can
use the framework-agnostic modules in examples/common/.
"""
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import contextmanager, nullcontext
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common.machine import cpu_model, device_label  # noqa: E402
from common.options import fail, install_error_hook, oom_message, parse_options  # noqa: E402
from common.report import Report, fraction, seconds  # noqa: E402,F401
from common.stats import in_turns, matmul_flops, median, size_for_time  # noqa: E402
from common.timeline import Span, draw_timeline  # noqa: E402,F401

FRAMEWORK = "pytorch"


def start(doc, keys=(), add_arguments=None):
    """Parse the options, switch TF32 off, and return ``(options, report)``.

    Out-of-memory errors from here on end with one line that suggests a smaller
    --size instead of a traceback.
    """
    options = parse_options(doc, add_arguments=add_arguments)
    # The book's figures are fp32: TF32 would make products ~7x faster and less exact.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    def explain(exc):
        if not is_out_of_memory(exc):
            return None
        return oom_message(options.size, "the GPU" if "cuda" in str(exc).lower() else "the CPU")

    install_error_hook(explain)
    return options, Report(options, keys)


def is_out_of_memory(exc):
    """True for a GPU or CPU out-of-memory error."""
    oom = tuple(t for t in (getattr(torch, "OutOfMemoryError", None),
                            getattr(torch.cuda, "OutOfMemoryError", None)) if t is not None)
    if isinstance(exc, oom + (MemoryError,)):
        return True
    text = str(exc).lower()
    return isinstance(exc, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


def gpus(choice="auto"):
    """All usable CUDA devices; [] for --device cpu or without a GPU.

    A GPU that fails a tiny allocation (driver or CUDA error) is left out with a
    note on stderr. ``--device gpu`` without a usable GPU stops with exit 2.
    """
    found, problem = [], "torch.cuda.is_available() is False"
    if choice != "cpu":
        try:
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        except Exception as exc:  # a broken driver counts as no GPU
            count, problem = 0, f"{type(exc).__name__}: {exc}".splitlines()[0]
        for i in range(count):
            try:
                torch.zeros(1, device=torch.device("cuda", i))
                found.append(torch.device("cuda", i))
            except Exception as exc:
                problem = f"cuda:{i}: {type(exc).__name__}: {exc}".splitlines()[0]
                print(f"note: leaving out {problem}", file=sys.stderr)
    if choice == "gpu" and not found:
        fail(f"--device gpu: no usable GPU ({problem}); use --device cpu or --device auto")
    return found


def cpu():
    """The CPU device."""
    return torch.device("cpu")


def name(device, lane=None):
    """How the output names a device: ``cuda:0 (NVIDIA H200)``, ``cpu (AMD EPYC ...)``.

    ``lane`` tells apart several jobs on the same CPU: ``cpu thread 0 (...)``.
    """
    device = torch.device(device)
    if device.type == "cuda":
        return device_label(f"cuda:{device.index or 0}", torch.cuda.get_device_name(device))
    label = "cpu" if lane is None else f"cpu thread {lane}"
    return device_label(label, cpu_model())


def bind(device):
    """Make ``device``'s CUDA context current in this thread, as cuBLAS expects.

    A new thread has no current context; any CUDA runtime call binds the
    device's primary context. Call it only where the device is idle anyway.
    """
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.cuda.synchronize(device)


def synchronize(devices):
    """Wait until every queued job on every listed device is done.

    ``torch.cuda.synchronize()`` without an argument waits only for the current
    GPU, so we call it once per GPU. CPU work in eager PyTorch is already done
    when the call returns.
    """
    for device in devices:
        device = torch.device(device)
        if device.type == "cuda":
            torch.cuda.synchronize(device)


def rand(size, device):
    """A ``size x size`` fp32 matrix of uniform random numbers on ``device``."""
    return torch.rand(size, size, device=device)


def measure_all(job, devices, repeats, warmup=1):
    """Wall-clock times of ``repeats`` calls of ``job()``, synchronising ``devices``.

    Every device is synchronised before the clock starts and before it stops;
    ``warmup`` untimed calls come first. The job's result is kept alive until
    its work is done.
    """
    synchronize(devices)  # earlier work (e.g. the inputs) must be done first
    for _ in range(warmup):
        result = job()
        synchronize(devices)
        del result
    times = []
    for _ in range(repeats):
        synchronize(devices)
        begin = time.perf_counter()
        result = job()
        synchronize(devices)
        times.append(time.perf_counter() - begin)
        del result
    return times


def measure(job, devices, repeats, warmup=1):
    """The median of :func:`measure_all` in seconds."""
    return median(measure_all(job, devices, repeats, warmup))


def measure_in_turns(cases, repeats, warmup=1):
    """Medians of several ``name: (job, devices)`` cases timed in turns (common.stats.in_turns)."""
    return in_turns(measure_all, cases, repeats, warmup)


_LANE_THREADS = {}  # lane index -> its one worker thread, kept from call to call


def run_concurrently(jobs, lanes=None):
    """Call every job at the same time, each in its lane's own thread; return their results.

    ``lanes`` names the lane of each job (default 0, 1, ...). A lane always runs
    in the same thread, alone or together with others, so that a comparison of
    the two changes nothing but the company: PyTorch's CPU thread team is set
    up per calling thread, and the main thread's may differ from a worker's.
    A GPU job only queues its work and returns at once; a CPU job runs until it
    is done (PyTorch releases the GIL inside its kernels). The caller
    synchronises the devices.
    """
    lanes = range(len(jobs)) if lanes is None else lanes
    for lane in lanes:
        if lane not in _LANE_THREADS:
            _LANE_THREADS[lane] = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"lane{lane}")
    futures = [_LANE_THREADS[lane].submit(job) for lane, job in zip(lanes, jobs)]
    wait(futures)
    return [future.result() for future in futures]


def matmul_rate(device, size, repeats=3):
    """Measured FLOP/s of one ``size x size`` fp32 product on ``device``."""
    x = rand(size, device)
    return matmul_flops(size) / measure(lambda: x.mm(x), [device], repeats)


def cpu_size_for(seconds_target, products, largest):
    """A CPU matrix side whose ``products`` products take about ``seconds_target``.

    Measures the CPU's rate at a small size, picks a size, then measures again
    at that size (the rate depends on the size) and picks once more.
    """
    size = min(largest, 256)
    for _ in range(2):
        size = size_for_time(matmul_rate(cpu(), size), seconds_target, products, largest=largest)
    return size


class Timeline:
    """Records start/end times of activities on several devices on one clock.

    GPU activities are timed with CUDA events recorded on their stream, so the
    spans show when the GPU really ran them; CPU activities with
    ``time.perf_counter``. Call :meth:`spans` after the work is done.
    """

    def __init__(self, devices):
        self.devices = [torch.device(d) for d in devices]
        self._origins = {}
        self._records = []
        self._lock = threading.Lock()
        synchronize(self.devices)
        for device in self.devices:
            if device.type == "cuda" and device not in self._origins:
                event = torch.cuda.Event(enable_timing=True)
                event.record(torch.cuda.current_stream(device))
                torch.cuda.synchronize(device)
                self._origins[device] = (event, time.perf_counter())

    @contextmanager
    def span(self, row, device, label="", stream=None):
        """Time the work queued inside the ``with`` block on ``device`` (and ``stream``)."""
        device = torch.device(device)
        if device.type == "cuda":
            stream = stream or torch.cuda.current_stream(device)
            begin, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            begin.record(stream)
            yield
            end.record(stream)
        else:
            begin = time.perf_counter()
            yield
            end = time.perf_counter()
        with self._lock:
            self._records.append((row, device, begin, end, label))

    def spans(self):
        """The recorded spans in seconds on one clock (synchronises the devices first)."""
        synchronize(self.devices)
        out = []
        for row, device, begin, end, label in self._records:
            if device.type == "cuda":
                event, host = self._origins[device]
                begin = host + event.elapsed_time(begin) / 1e3
                end = host + event.elapsed_time(end) / 1e3
            out.append(Span(row, begin, end, label))
        return out


def span(timeline, row, device, label="", stream=None):
    """``timeline.span(...)``, or a context that records nothing when timeline is None."""
    return nullcontext() if timeline is None else timeline.span(row, device, label, stream)
