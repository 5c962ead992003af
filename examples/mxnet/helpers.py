"""MXNet helpers shared by the example scripts of this chapter.

The pages call a handful of them, each introduced where it is first used:
:func:`try_gpu`, :func:`gpu`, :func:`two_devices`, :func:`matrix_size`,
:func:`job_sizes`, :func:`benchmark` (the book's timer, shown in full on the
first page) and :func:`device_benchmark`. The rest is harness the pages do not
show: the options and the report of a whole script, context discovery that
never fails without a GPU, each job's finish time and the device's busy time
from MXNet's profiler, the peaks of the hardware, and timelines. The PyTorch
twin (examples/pytorch/helpers.py) has the same function names.

A page's shown cells run as a program of their own: without :func:`start`,
the helpers read the options from the command line (or EXAMPLE_ARGS in a
notebook) the first time they need them.

MXNet 1.9.1 is the last release. Its GPU builds stop at CUDA 11.7 and carry no
code for newer GPUs (such as the H200), so on most machines today the MXNet
twins run on the CPU contexts and say so. Every MXNet call hands its work to
the dependency engine and returns at once, on the CPU too; ``npx.waitall()``
waits for all of it.

This is the one place that puts examples/ on sys.path, so that the scripts can
use the framework-agnostic modules in examples/common/.
"""
import atexit
import ctypes
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

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

from common import hardware, i18n  # noqa: E402
from common.compare import read_book  # noqa: E402
from common.keys import EXAMPLES  # noqa: E402
from common.machine import cpu_count, cpu_model, device_label, host_memory_bytes  # noqa: E402,F401
from common.options import (CPU_JOB_SECONDS, GPU_SIZE, fail, install_error_hook, oom_message, parse_options,  # noqa: E402
                            stop_here)
from common.report import Report, print_timings, duration, fraction, timing  # noqa: E402,F401
from common.stats import count_equal as _count_equal, in_turns, matmul_flops, median, rate, size_for_time  # noqa: E402
from common.timeline import Span, draw_timeline  # noqa: E402,F401

FRAMEWORK = "mxnet"
#: Matrix products per job, as in the book.
PRODUCTS = 50
#: OpenMP threads per CPU product (OMP_NUM_THREADS above).
CPU_THREADS = 1
CPU_THREADS_NOTE = (
    "One thread per CPU product (OMP_NUM_THREADS=1). MXNet's OpenBLAS 0.3.13 serves\n"
    "one OpenMP caller at a time; with 2 threads each, two products at once never\n"
    "finished in our tests on a 2-core machine (see MEASUREMENTS.md).")
#: Figure texts of the MXNet twins that the PyTorch twins do not need (the rest: common.i18n).
TEXTS = {
    "en": {"copies_after_all": "all products queued, then all copies",
           "copies_after_each": "each copy queued right after its product",
           "two_contexts": "{device}: two jobs (cpu(0) and cpu(1))",
           "one_context": "{device}: two jobs (one context)"},
    "tr": {"copies_after_all": "önce tüm çarpımlar, sonra tüm kopyalar kuyruğa eklendi",
           "copies_after_each": "her kopya kendi çarpımının hemen ardından kuyruğa eklendi",
           "two_contexts": "{device}: iki iş (cpu(0) ve cpu(1))",
           "one_context": "{device}: iki iş (tek bağlam)"},
}
# What start() and matrix_size() settled: the options, the script's report, the size.
_settings = {"options": None, "report": None, "size": None}
#: MXNet's default repeats: its CPU jobs take longer than PyTorch's GPU jobs.
REPEATS = 3
_why_no_gpu = ["this MXNet build has no CUDA" if not mxnet.runtime.Features().is_enabled("CUDA")
               else "npx.num_gpus() is 0"]


def text(lang, key, **values):
    """A figure text in ``lang``: the MXNet twins' own (TEXTS) or the shared one (common.i18n)."""
    own = TEXTS[lang].get(key)
    return own.format(**values) if own else i18n.text(lang, key, **values)


def options():
    """The options: those that :func:`start` parsed, else the command line's, read once."""
    if _settings["options"] is None:
        _settings["options"] = parse_options(repeats=REPEATS)
    return _settings["options"]


def start(doc, name, add_arguments=None):
    """Parse a whole script's options (3 repeats by default) and return ``(options, report)`` for the
    example ``name`` (``"hardware"``), whose keys common.keys names; with --compare the book's figures of
    it are read first, and a run without them stops here with one line.

    Products are fp32 (MXNet's default). Errors that :func:`error_message`
    knows end from here on with one line instead of a traceback.
    """
    options = _settings["options"] = parse_options(doc, add_arguments=add_arguments, repeats=REPEATS)
    book = read_book(Path(__file__).resolve().parent, FRAMEWORK, name) if options.compare else None
    install_error_hook(lambda exc: error_message(
        exc, _settings["size"] or (options.size if isinstance(options.size, int) else GPU_SIZE)))
    report = _settings["report"] = Report(options, EXAMPLES[name], book)
    return options, report


def error_message(exc, size):
    """One line for an error that a smaller --size avoids (out of memory, or more elements
    than this MXNet build can index); None for any other error."""
    if "larger than 2^31 elements" in str(exc):  # the pip builds index arrays with int32
        return (f"--size {size} is too large for this MXNet build (at most 2^31 - 1 "
                "elements per array, i.e. --size 46340); try a smaller --size")
    if not is_out_of_memory(exc):
        return None
    return oom_message(size, *memory_of("cuda" if "cuda" in str(exc).lower() else "cpu"))


def memory_of(kind):
    """Where an out-of-memory error happened ("the GPU" or "the CPU") and the memory it reports,
    in bytes: the first GPU's total, or the host's."""
    if kind == "cuda":
        return "the GPU", mxnet.context.gpu_memory_info(0)[1]
    return "the CPU", host_memory_bytes()


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
    """The CPU context ``cpu(i)``: one processor, but its own engine worker for each i."""
    return npx.cpu(i)


def try_gpu():
    """The first GPU context, or cpu(0) without one (or with --device cpu); prints which."""
    found = gpus(options().device)
    device = found[0] if found else cpu()
    print(f"device: {name(device)}")
    return device


def gpu():
    """The first GPU context. Without one, say that what follows needs a GPU, and stop the program."""
    found = gpus(options().device)
    if not found:
        report = _settings["report"]
        stop_here(f"{no_gpu_reason(options().device)}: what follows needs a GPU that MXNet can use, so "
                  "the program stops here.", report.finish if report else None)
    return found[0]


def two_devices():
    """Two contexts for two jobs: the first two GPUs, else the GPU and cpu(0), else cpu(0) and cpu(1).

    cpu(0) and cpu(1) are one processor, but each has its own engine worker;
    the output says which pair it is.
    """
    found = gpus(options().device)
    if len(found) >= 2:
        print("2 or more GPUs: one job on each of the first two.")
        return found[:2]
    if found:
        print("1 GPU: one job on the GPU and one on cpu(0), sized to take about as long.")
        return [found[0], cpu(0)]
    print(f"{no_gpu_reason(options().device)}: two jobs on the CPU contexts cpu(0) and cpu(1), two names "
          "for the same processor; all figures are CPU figures.")
    return [cpu(0), cpu(1)]


def _gpu_model(i):
    try:  # MXNet has no call that names a GPU
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", f"--id={i}"],
                             capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        out = ""
    return out or "GPU"


def name(ctx):
    """How the output names a context: ``gpu(0) (NVIDIA A100 ...)``, ``cpu(1) (AMD EPYC ...)``."""
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


def same(host, result):
    """True if a host copy (a NumPy array) equals its device result exactly."""
    return bool((host == result.asnumpy()).all())


def count_equal(hosts, results):
    """How many host buffers hold exactly their device results (the copy check).

    Reads every buffer first, with ``.asnumpy()``: MXNet's engine runs a read
    only after the writes queued to that buffer, so nobody has to wait before.
    """
    return _count_equal(zip([h.asnumpy() for h in hosts], results), same)


# Timing -------------------------------------------------------------------

class Samples(list):
    """The timed samples of one case (seconds); ``lanes`` holds, for a case of
    lanes, each lane's own finish times, and ``spans``, for each sample, the
    operators that MXNet's profiler saw, on rows named by :func:`profiler_row`."""

    def __init__(self, values=(), lanes=None):
        super().__init__(values)
        self.lanes = lanes or {}
        self.spans = []


def _contexts(result):
    """The contexts that hold the arrays of a job's result."""
    arrays = result if isinstance(result, (list, tuple)) else [result]
    return {a.ctx for a in arrays if isinstance(a, np.ndarray)}


def measure(cases, devices=(), wait=True, clock="host", per=1, repeats=None, warmup=1):
    """The harness's timer: samples like :func:`benchmark`'s, without printing them.

    ``cases`` maps a label to a function or to a list (or a {lane: function}
    mapping) of functions whose jobs run at the same time: each only queues
    its work, so all are called from this thread and MXNet's engine decides
    what runs when; for such a case each lane's own finish times are kept too
    (the end of its last operator, from MXNet's profiler). ``clock="gpu"``
    takes the device's own busy time from the profiler. With lanes, several
    devices or ``clock="gpu"``, each sample keeps the operators the profiler
    saw (``spans``).
    """
    if clock not in ("host", "gpu"):
        raise ValueError("clock must be 'host' or 'gpu'")
    cases = {label: case if callable(case) else dict(enumerate(case)) if isinstance(case, (list, tuple))
             else dict(case) for label, case in cases.items()}
    # The profiler records which operators ran where: for the device time, the lanes' finish times,
    # and the spans of work on several devices.
    several = isinstance(devices, (list, tuple)) and len(set(map(str, devices))) > 1
    profile = clock == "gpu" or not all(map(callable, cases.values())) or several
    timeline = Timeline() if profile else None

    def time_once(case):
        synchronize()  # earlier work must not be timed
        queued_at, begin = time.time(), time.perf_counter()
        if callable(case):
            result, lane_rows = case(), {}
        else:  # each lane's job only queues its work, so all are queued from here
            result = {lane: function() for lane, function in case.items()}
            lane_rows = {lane: {profiler_row(c) for c in _contexts(r)} for lane, r in result.items()}
        if wait:
            synchronize()
        elapsed = time.perf_counter() - begin
        synchronize()  # this call's work ends before the next call starts
        return elapsed, (queued_at, time.time()), lane_rows

    raw = in_turns(time_once, cases, repeats or options().repeats, warmup)
    spans = timeline.device_spans() if timeline else []
    out = {}
    for label, samples in raw.items():
        out[label] = Samples(lanes={lane: [] for lane in samples[0][2]})
        for elapsed, (begin, end), lane_rows in samples:
            mine = [s for s in spans if begin <= s.start and s.end <= end]
            out[label].append((busy_seconds(mine) if clock == "gpu" else elapsed) / per)
            out[label].spans.append(mine)
            for lane, rows in lane_rows.items():
                out[label].lanes[lane].append((max(s.end for s in mine if s.row in rows) - begin) / per)
    return out


def benchmark(cases, devices, wait=True, per=1, repeats=None, warmup=1):
    """Time each case; print its median [fastest-slowest]; return the samples."""
    samples = {label: [] for label in cases}
    for turn in range(warmup + (repeats or options().repeats)):
        for label, case in cases.items():  # in turns: a drift hits every case
            synchronize(devices)  # the work queued before is not timed
            begin = time.perf_counter()
            case()
            if wait:
                synchronize(devices)  # wait for every device involved
            if turn >= warmup:  # a warm-up pays the one-off costs, untimed
                samples[label].append((time.perf_counter() - begin) / per)
    print_timings(samples)  # median [fastest-slowest]
    return samples


def device_benchmark(cases, device, per=1):
    """Like :func:`benchmark`, but the device's own time: the time in which MXNet's
    profiler saw the device's engine worker busy (on CPU contexts too)."""
    samples = measure(cases, [device], clock="gpu", per=per)
    print_timings(samples)
    return samples


# Sizes --------------------------------------------------------------------

def matmul_rate(device, size, products=10, repeats=3):
    """Measured FLOP/s of ``products`` queued ``size x size`` fp32 products on ``device``."""
    x = rand(size, device)
    job = measure({"products": lambda: [x.dot(x) for _ in range(products)]}, [device],
                  repeats=repeats)["products"]
    return matmul_flops(size, products) / median(job)


def cpu_size_for(seconds_target, products, largest, device=None):
    """A matrix side whose ``products`` products take about ``seconds_target`` on a CPU context.

    Measures the rate at a small size, picks a size, then measures again at
    that size (the rate depends on the size) and picks once more.
    """
    size = min(largest, 256)
    for _ in range(2):
        size = size_for_time(matmul_rate(device or cpu(), size), seconds_target, products, largest=largest)
    return size


def cpu_size_like_gpu(gpu, size):
    """The size on cpu(0) whose job takes as long as the GPU's job at ``size``."""
    t_gpu = matmul_flops(size, PRODUCTS) / matmul_rate(gpu, size)
    return cpu_size_for(t_gpu, PRODUCTS, size)


def matrix_size(device, largest=GPU_SIZE):
    """The side of the book's square matrices on ``device``, printed with how it was chosen.

    ``--size N`` gives N. ``--size auto`` gives GPU_SIZE on a GPU, and on a CPU
    context the size at which one job of PRODUCTS products takes about
    CPU_JOB_SECONDS (at most ``largest``).
    """
    if options().size != "auto":
        size, how = options().size, "--size"
    elif device.device_type == "gpu":
        size, how = GPU_SIZE, "--size auto on a GPU"
    else:
        size = cpu_size_for(CPU_JOB_SECONDS, PRODUCTS, largest, device)
        how = f"--size auto: one job takes about {CPU_JOB_SECONDS} s on this CPU"
    _settings["size"] = size
    print(f"size: {size} ({how})")
    return size


def job_sizes(devices):
    """The matrix side of each of two jobs: :func:`matrix_size` on the first context, and for
    cpu(0) next to a GPU the side whose job takes as long as the GPU's (both rates measured here)."""
    size = matrix_size(devices[0])
    if devices[0].device_type == "gpu" and devices[1].device_type == "cpu":
        return [size, cpu_size_like_gpu(devices[0], size)]
    return [size, size]


# Limits -------------------------------------------------------------------

def _cuda_properties(gpu):
    """(UUID, SM count, compute capability) of a GPU context, from the CUDA driver.

    MXNet has no call for them; the driver library that MXNet's GPU build
    loads answers through ctypes.
    """
    cuda = ctypes.CDLL("libcuda.so.1")
    device, value, uuid = ctypes.c_int(), ctypes.c_int(), ctypes.create_string_buffer(16)
    if cuda.cuInit(0) or cuda.cuDeviceGet(ctypes.byref(device), gpu.device_id) or cuda.cuDeviceGetUuid(uuid, device):
        raise OSError("the CUDA driver did not answer")

    def attribute(number):  # CUdevice_attribute: 16 SMs, 75/76 compute capability
        cuda.cuDeviceGetAttribute(ctypes.byref(value), number, device)
        return value.value

    u = uuid.raw.hex()
    return f"{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}", attribute(16), (attribute(75), attribute(76))


def peak_rates(gpu):
    """The GPU's theoretical peaks, link in GB/s and fp32 in TFLOP/s, read from the
    hardware (common.hardware, through NVML); nan where they cannot be read."""
    try:
        found = hardware.gpu_peaks(*_cuda_properties(gpu))
    except OSError as exc:
        found = {"link_peak_gbps": None, "fp32_peak_tflops": None, "problem": f"CUDA driver: {exc}"}
    if found["problem"]:
        print(f"note: no limit from the hardware: {found['problem']}")
    unknown = float("nan")  # printed as nan, published as None
    return {"link": found["link_peak_gbps"] or unknown, "fp32": found["fp32_peak_tflops"] or unknown}


#: What best_rates() measures: copies of these many MiB, products of these sizes.
BEST_COPY_MIB, BEST_PRODUCT_SIZES = (64, 256, 1024), (4096, 8192)


def best_rates(gpu, repeats=3):
    """The best measured rates: device-to-host copies into pinned memory (BEST_COPY_MIB)
    in GB/s and products (BEST_PRODUCT_SIZES) in TFLOP/s, each timed as the
    device's busy time in MXNet's profiler (medians), the best size taken."""
    link, fp32 = [], []
    for mib in BEST_COPY_MIB:
        source = np.zeros(mib * 2**18, ctx=gpu)  # fp32: 4 bytes each
        target = np.zeros(source.shape, ctx=npx.cpu_pinned())
        times = measure({"copy": lambda: source.copyto(target)}, [gpu], clock="gpu", repeats=repeats)["copy"]
        link.append(rate(source.size * 4, median(times), 1e9))
        del source, target
    for n in BEST_PRODUCT_SIZES:
        a = rand(n, gpu)
        times = measure({"product": lambda: a.dot(a)}, [gpu], clock="gpu", repeats=repeats)["product"]
        fp32.append(rate(matmul_flops(a.shape[0]), median(times), 1e12))
        del a
    return {"link": max(link), "fp32": max(fp32)}


# Timelines ----------------------------------------------------------------

_PROFILE = Path(tempfile.gettempdir()) / f"mxnet-example-profile-{os.getpid()}.json"
_profiler_on = []  # [True] once the profiler is configured
_ENGINE_OPS = ("DeleteVariable", "WaitForVar", "WaitForAll")  # the engine's own, not our work


def profiler_row(ctx):
    """The profiler's name of a context's device: ``cpu/0``, ``gpu/1``."""
    return f"{ctx.device_type}/{ctx.device_id}"


class Timeline:
    """Records when each operator ran on each device, as MXNet's profiler sees it.

    The profiler notes, on the engine's worker thread, when an operator starts
    and ends; MXNet 1.x also waits for each GPU operator's stream before it
    calls the operator done, so the times are the device's. (Waiting on each
    result from Python would be no substitute: ``wait_to_read()`` is itself
    queued behind the work on cpu(0).) ``span`` says which row the operators
    of a device belong on, or, if ``label`` is "copy", the copies between
    devices. Call :meth:`spans` after the work. One timeline at a time.
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
        self._rows["copy" if label == "copy" else profiler_row(device)] = (row, label)
        yield

    def device_spans(self):
        """Every operator since the start, on the row of its device (``cpu/0``) or ``copy``.

        Waits for the work and stops the profiler first.
        """
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
                row = "copy" if e["name"].startswith("Copy") else devices.get(e["pid"])
                out.append(Span(row, started.pop(key) / 1e6, e["ts"] / 1e6))
        return out

    def spans(self):
        """The recorded spans in seconds, on the rows given to :meth:`span`."""
        out = []
        for s in self.device_spans():
            if s.row in self._rows:
                row, label = self._rows[s.row]
                out.append(Span(row, s.start, s.end, label))
        order = [row for row, _ in self._rows.values()]
        return sorted(out, key=lambda s: (order.index(s.row), s.start))


def busy_seconds(spans):
    """How long at least one of the spans was running (their union), in seconds."""
    busy, end = 0.0, -float("inf")
    for s in sorted(spans, key=lambda s: s.start):
        busy += max(0.0, s.end - max(s.start, end))
        end = max(end, s.end)
    return busy


def copy_spans(gpu, queue):
    """Run ``queue()`` (products on ``gpu`` and copies of their results to the
    host) once; return when each product and each copy ran, on the rows
    "compute_stream" and "copy_stream" (i18n keys: MXNet's engine gives the
    copies a stream of their own)."""
    timeline = Timeline()
    with timeline.span("compute_stream", gpu, "product"), timeline.span("copy_stream", None, "copy"):
        results = queue()
    spans = timeline.spans()
    del results
    return spans
