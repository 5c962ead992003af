"""PyTorch helpers shared by the example scripts of this chapter.

The pages call a handful of them, each introduced where it is first used:
:func:`try_gpu`, :func:`gpu`, :func:`two_devices`, :func:`matrix_size`,
:func:`job_sizes`, :func:`benchmark` (the book's timer, shown in full on the
first page) and :func:`device_benchmark`. The rest is harness the pages do not
show: the options and the report of a whole script, jobs that run from threads
of their own, GPU time from CUDA events, the peaks of the hardware, and
timelines. The MXNet twin (examples/mxnet/helpers.py) has the same function
names.

A page's shown cells run as a program of their own: without :func:`start`,
the helpers read the options from the command line (or EXAMPLE_ARGS in a
notebook) the first time they need them.

This is the one place that puts examples/ on sys.path, so that the scripts can
use the framework-agnostic modules in examples/common/.
"""
import getpass
import os
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import hardware  # noqa: E402
from common.compare import read_book  # noqa: E402
from common.keys import EXAMPLES  # noqa: E402
from common.machine import cpu_model, device_label  # noqa: E402
from common.machine import cpu_count, host_memory_bytes  # noqa: E402
from common.options import (CPU_JOB_SECONDS, GPU_SIZE, fail, install_error_hook, no_gpu_reason, oom_message,  # noqa: E402
                            parse_options, stop_here)
from common.report import Report, print_timings, fraction, timing  # noqa: E402,F401
from common.stats import count_equal as _count_equal, in_turns, matmul_flops, median, rate, size_for_time  # noqa: E402
from common.timeline import Span, draw_timeline  # noqa: E402,F401

FRAMEWORK = "pytorch"
#: Matrix products per job, as in the book.
PRODUCTS = 50
# What start() and matrix_size() settled: the options, the script's report, the size.
_settings = {"options": None, "report": None, "size": None}


def options():
    """The options: those that :func:`start` parsed, else the command line's, read once."""
    if _settings["options"] is None:
        _settings["options"] = parse_options()
    return _settings["options"]


def start(doc, name, add_arguments=None):
    """Parse a whole script's options, switch TF32 off, and return ``(options, report)`` for the example
    ``name`` (``"hardware"``), whose keys common.keys names; with --compare the book's figures of it are
    read first, and a run without them stops here with one line.

    Out-of-memory errors from here on end with one line that suggests a smaller
    --size instead of a traceback.
    """
    options = _settings["options"] = parse_options(doc, add_arguments=add_arguments)
    book = read_book(Path(__file__).resolve().parent, FRAMEWORK, name) if options.compare else None
    # The book's figures are fp32: TF32 would make products ~7x faster and less exact.
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False

    def explain(exc):
        if not is_out_of_memory(exc):
            return None
        size = _settings["size"] or (options.size if isinstance(options.size, int) else GPU_SIZE)
        return oom_message(size, *memory_of("cuda" if "cuda" in str(exc).lower() else "cpu"))

    install_error_hook(explain)
    report = _settings["report"] = Report(options, EXAMPLES[name], book)
    return options, report


def memory_of(kind):
    """Where an out-of-memory error happened ("the GPU" or "the CPU") and the memory it reports,
    in bytes: the current GPU's total, or the host's."""
    if kind == "cuda":
        return "the GPU", torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
    return "the CPU", host_memory_bytes()


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


def try_gpu():
    """The first GPU, or the CPU without one (or with --device cpu); prints which."""
    found = gpus(options().device)
    device = found[0] if found else cpu()
    print(f"device: {name(device)}")
    return device


def compile_cache():
    """"warm" when Inductor's compile cache holds code of earlier runs (which makes compiling
    faster), else "empty". The cache is the folder Inductor uses by default, named after the
    user as getpass gives it, or TORCHINDUCTOR_CACHE_DIR."""
    folder = os.environ.get("TORCHINDUCTOR_CACHE_DIR") or os.path.join(
        tempfile.gettempdir(), f"torchinductor_{getpass.getuser()}")
    return "warm" if os.path.isdir(folder) and any(os.scandir(folder)) else "empty"


def gpu():
    """The first GPU. Without one, say that what follows needs a GPU, and stop the program."""
    found = gpus(options().device)
    if not found:
        report = _settings["report"]
        stop_here(f"{no_gpu_reason(options().device)}: what follows needs an NVIDIA GPU, so the "
                  "program stops here.", report.finish if report else None)
    return found[0]


def two_devices():
    """Two devices for two jobs: the first two GPUs, else the GPU and the CPU, else the CPU twice.

    A CPU job uses every core (its thread count is fixed, in every thread
    that runs it); the output says which pair it is.
    """
    found = gpus(options().device)
    if len(found) >= 2:
        print("2 or more GPUs: one job on each of the first two.")
        return found[:2]
    threads = use_cpu_threads(cpu_count())
    if found:
        print(f"1 GPU: one job on the GPU and one on the CPU ({threads} threads), sized to "
              "take about as long.")
        return [found[0], cpu()]
    print(f"{no_gpu_reason(options().device)}: two CPU jobs ({threads} threads each). Eager PyTorch "
          "runs a CPU operation before its call returns, so from one thread they run one after the "
          "other; all figures are CPU figures.")
    return [cpu(), cpu()]


def name(device, job=None):
    """How the output names a device: ``cuda:0 (NVIDIA H200)``, ``cpu (AMD EPYC ...)``.

    ``job`` tells apart several jobs on the same CPU: ``cpu job 0 (...)``.
    """
    device = torch.device(device)
    if device.type == "cuda":
        return device_label(f"cuda:{device.index or 0}", torch.cuda.get_device_name(device))
    label = "cpu" if job is None else f"cpu job {job}"
    return device_label(label, cpu_model())


def _as_list(devices):
    return [devices] if isinstance(devices, (torch.device, str)) else list(devices)


def synchronize(devices):
    """Wait until every queued job on every listed device (or one device) is done.

    ``torch.cuda.synchronize()`` without an argument waits only for the current
    GPU, so we call it once per GPU. CPU work in eager PyTorch is already done
    when the call returns.
    """
    for device in _as_list(devices):
        device = torch.device(device)
        if device.type == "cuda":
            torch.cuda.synchronize(device)


def rand(size, device):
    """A ``size x size`` fp32 matrix of uniform random numbers on ``device``."""
    return torch.rand(size, size, device=device)


def count_equal(hosts, results):
    """How many host copies equal their device results, pair by pair (the copy check).

    Each host copy goes back to its result's device for the comparison: a pinned
    buffer moves at the link's speed, where a fresh host copy of the result would
    wait for new host memory.
    """
    return _count_equal(zip(hosts, results), lambda h, r: torch.equal(h.to(r.device), r))


# Threads of their own -----------------------------------------------------

_lanes = {}  # lane -> its one worker thread, kept from call to call
_cpu_threads = {"count": None}


def use_cpu_threads(count):
    """Fix the CPU threads of every job (in this thread and in every lane's); return it."""
    _cpu_threads["count"] = count
    torch.set_num_threads(count)
    return count


def run_in_lane(lane, function):
    """Call ``function`` from ``lane``'s own thread and return its result.

    A lane always runs in the same thread, alone or together with others, so
    that a comparison of the two changes nothing but the company: PyTorch's
    CPU thread team belongs to the calling thread.
    """
    return _submit(lane, function).result()


def _submit(lane, function):
    if lane not in _lanes:
        _lanes[lane] = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"lane{lane}")
    # A new thread has no current CUDA context, and cuBLAS warns when it must set one up itself.
    device = torch.cuda.current_device() if torch.cuda.is_initialized() else None

    def call():
        count = _cpu_threads["count"]
        if count and torch.get_num_threads() != count:
            torch.set_num_threads(count)
        if device is not None:
            torch.cuda.set_device(device)
        return function()
    return _lanes[lane].submit(call)


def _devices_of(result):
    """The CUDA devices that hold the tensors of a job's result."""
    tensors = [result] if isinstance(result, torch.Tensor) else result if isinstance(result, (list, tuple)) else []
    return {t.device for t in tensors if isinstance(t, torch.Tensor) and t.is_cuda}


# Timing -------------------------------------------------------------------

class Samples(list):
    """The timed samples of one case (seconds); ``lanes`` holds, for a case of
    several lanes, each lane's own finish times."""

    def __init__(self, values=(), lanes=None):
        super().__init__(values)
        self.lanes = lanes or {}


def _host_time(case, devices, wait):
    synchronize(devices)  # earlier work must not be timed
    begin = time.perf_counter()
    if callable(case):
        result = case()
        if wait:
            synchronize(devices)
        return time.perf_counter() - begin, {}

    def lane_job(function):
        result = function()
        if wait:
            synchronize(_devices_of(result))  # this job's own devices
        return time.perf_counter() - begin, result

    futures = {lane: _submit(lane, lambda f=function: lane_job(f)) for lane, function in case.items()}
    finished = {lane: future.result() for lane, future in futures.items()}
    if wait:
        synchronize(devices)
    return time.perf_counter() - begin, {lane: t for lane, (t, _) in finished.items()}


def _gpu_time(case, device):
    """Seconds the GPU spent on the work ``case()`` queues, from CUDA events.

    A spin kernel holds the GPU back until the call has queued all of its work,
    so the span between the events is the GPU's own time, without the gaps of
    a frontend that queues more slowly than the GPU runs. If the GPU reached
    the first event before the queueing ended, the hold was too short: it is
    made longer and the call timed again.
    """
    hold = 1e-3  # seconds
    with torch.cuda.device(device):
        while True:
            torch.cuda.synchronize(device)
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda._sleep(int(hold * 2e9))  # about hold seconds at 2 GHz
            begin.record()
            result = case()
            end.record()
            held = not begin.query()
            torch.cuda.synchronize(device)
            del result
            if held:
                return begin.elapsed_time(end) / 1e3, {}
            hold *= 4


def measure(cases, devices=(), wait=True, clock="host", per=1, repeats=None, warmup=1):
    """The harness's timer: samples like :func:`benchmark`'s, without printing them.

    ``cases`` maps a label to a function, called from this thread, or to a
    list (or a {lane: function} mapping) of functions that start at the same
    time, each from its lane's own thread; for such a case each lane's own
    finish times are kept too (``Samples.lanes``). ``clock="gpu"`` times the
    GPU's own work with CUDA events (on the CPU, the host clock).
    """
    devices = [torch.device(d) for d in _as_list(devices)]
    gpu_clock = clock == "gpu" and any(d.type == "cuda" for d in devices)
    if clock not in ("host", "gpu"):
        raise ValueError("clock must be 'host' or 'gpu'")
    if gpu_clock and not all(callable(case) for case in cases.values()):
        raise ValueError("clock='gpu' times functions, not lanes")
    cases = {label: case if callable(case) else dict(enumerate(case)) if isinstance(case, (list, tuple))
             else dict(case) for label, case in cases.items()}

    def time_once(case):
        if gpu_clock:
            return _gpu_time(case, next(d for d in devices if d.type == "cuda"))
        return _host_time(case, devices, wait or clock == "gpu")

    raw = in_turns(time_once, cases, repeats or options().repeats, warmup)
    return {label: Samples([t / per for t, _ in samples],
                           {lane: [lanes[lane] / per for _, lanes in samples] for lane in samples[0][1]})
            for label, samples in raw.items()}


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
    """Like :func:`benchmark`, but the device's own time: on a GPU, CUDA events
    around the queued work (see :func:`_gpu_time`); on the CPU, the host clock."""
    samples = measure(cases, [device], clock="gpu", per=per)
    print_timings(samples)
    return samples


# Sizes --------------------------------------------------------------------

def matmul_rate(device, size, repeats=3):
    """Measured FLOP/s of ``size x size`` fp32 products on ``device``.

    Each sample times a few products (about 0.2 GFLOP, at most PRODUCTS); the
    fastest sample counts, since other work on a shared machine only ever
    slows a sample down.
    """
    x = rand(size, device)
    count = max(1, min(PRODUCTS, int(2e8 // matmul_flops(size))))
    samples = measure({"products": lambda: [x.mm(x) for _ in range(count)]}, [device],
                      repeats=repeats)["products"]
    return matmul_flops(size, count) / min(samples)


def cpu_size_for(seconds_target, products, largest):
    """A CPU matrix side whose ``products`` products take about ``seconds_target``.

    Measures the CPU's rate at a small size, picks a size, then measures again
    at that size (the rate depends on the size) and picks again, twice.
    """
    size = min(largest, 256)
    for _ in range(3):
        size = size_for_time(matmul_rate(cpu(), size), seconds_target, products, largest=largest)
    return size


def matrix_size(device, largest=GPU_SIZE):
    """The side of the book's square matrices on ``device``, printed with how it was chosen.

    ``--size N`` gives N. ``--size auto`` gives GPU_SIZE on a GPU, and on the
    CPU the size at which one job of PRODUCTS products takes about
    CPU_JOB_SECONDS (at most ``largest``).
    """
    if options().size != "auto":
        size, how = options().size, "--size"
    elif torch.device(device).type == "cuda":
        size, how = GPU_SIZE, "--size auto on a GPU"
    else:
        size = cpu_size_for(CPU_JOB_SECONDS, PRODUCTS, largest)
        how = f"--size auto: one job takes about {CPU_JOB_SECONDS} s on this CPU"
    _settings["size"] = size
    print(f"size: {size} ({how})")
    return size


def job_sizes(devices):
    """The matrix side of each of two jobs: :func:`matrix_size` on the first device, and for a
    CPU next to a GPU the side whose job takes as long as the GPU's (both rates measured here)."""
    size = matrix_size(devices[0])
    if devices[0].type == "cuda" and devices[1].type == "cpu":
        return [size, cpu_size_like_gpu(devices[0], size)]
    return [size, size]


def cpu_size_like_gpu(gpu, size):
    """The CPU size whose job takes as long as the GPU's job at ``size``.

    Both rates are measured here, the CPU's with the thread count that the
    CPU job will have.
    """
    t_gpu = matmul_flops(size, PRODUCTS) / matmul_rate(gpu, size)
    return cpu_size_for(t_gpu, PRODUCTS, size)


# Limits -------------------------------------------------------------------

def _peaks(gpu):
    """common.hardware's peaks of ``gpu`` and their formulas; a note when some cannot be read."""
    props = torch.cuda.get_device_properties(gpu)
    capability = (props.major, props.minor)
    found = hardware.gpu_peaks(str(props.uuid), props.multi_processor_count, capability)
    if found["problem"]:
        print(f"note: no limit from the hardware: {found['problem']}")
    return found, hardware.formulas(found, props.multi_processor_count, capability)


def peak_rates(gpu):
    """The GPU's theoretical peaks, link in GB/s and fp32 in TFLOP/s, read from the
    hardware (common.hardware, through NVML); nan where they cannot be read."""
    found, _ = _peaks(gpu)
    unknown = float("nan")  # printed as nan, published as None
    return {"link": found["link_peak_gbps"] or unknown, "fp32": found["fp32_peak_tflops"] or unknown}


def limits(gpu):
    """Every limit the hardware gives, with the formula that computes it: ``{key: (value, formula)}``
    for link_peak_gbps, memory_peak_gbps, fp32_peak_tflops and the Tensor Cores'
    <precision>_peak_tflops of every precision (common.hardware). A limit that cannot be read is
    ``(None, why)``."""
    found, formulas = _peaks(gpu)
    values = {"link_peak_gbps": found["link_peak_gbps"], "memory_peak_gbps": found["memory_peak_gbps"],
              "fp32_peak_tflops": found["fp32_peak_tflops"],
              **{f"{p}_peak_tflops": found["tensor_peak_tflops"].get(p) for p in hardware.TENSOR_PRECISIONS}}
    unknown = found["problem"] or "none known for this GPU"
    return {key: (value, formulas[key]) if value else (None, unknown) for key, value in values.items()}


def against_limit(measured, limit, unit):
    """``limit: <formula> = <value> <unit>, measured / limit <fraction>`` for one of ``limits()``."""
    value, formula = limit
    if value is None:
        return f"limit: {formula}"
    return f"limit: {formula} = {value:.1f} {unit}, measured / limit {measured / value:.2f}"


def tf32(function, *args):
    """``function(*args)`` with TF32 products allowed: fp32 inputs on the Tensor Cores, whose
    multiplications keep 10 bits of mantissa. The book's other products stay fp32."""
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        return function(*args)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = False


def fp8_case(a):
    """``{"fp8": f}``, where ``f()`` multiplies ``a`` by itself in fp8 (e4m3 inputs, scales of 1, a
    bf16 result) with ``torch._scaled_mm``, on a GPU whose Tensor Cores have fp8 (compute
    capability 8.9 or newer); on any other GPU ``{}``, and a line that says so."""
    props = torch.cuda.get_device_properties(a.device)
    if not hardware.has_fp8((props.major, props.minor)):
        print(f"fp8: left out; {name(a.device)} has compute capability {props.major}.{props.minor}, "
              "and fp8 Tensor Cores need 8.9 or newer")
        return {}
    a8 = a.to(torch.float8_e4m3fn)
    b8 = a8.t().contiguous().t()  # the same numbers in column-major order, as _scaled_mm wants them
    one = torch.ones((), device=a.device)
    return {"fp8": lambda: torch._scaled_mm(a8, b8, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)}


def best_rates(gpu, repeats=3):
    """The best measured rates: device-to-host copies into pinned memory of 64 MiB,
    256 MiB and 1 GiB in GB/s, and products of 4096 and 8192 in TFLOP/s,
    each timed with CUDA events (medians), the best size taken."""
    link, fp32 = [], []
    for mib in (64, 256, 1024):
        source = torch.empty(mib * 2**18, device=gpu)  # fp32: 4 bytes each
        target = torch.empty(source.shape, pin_memory=True)
        times = measure({"copy": lambda: target.copy_(source, non_blocking=True)}, [gpu],
                        clock="gpu", repeats=repeats)["copy"]
        link.append(rate(source.numel() * 4, median(times), 1e9))
        del source, target
    for n in (4096, 8192):
        a = rand(n, gpu)
        times = measure({"product": lambda: a.mm(a)}, [gpu], clock="gpu", repeats=repeats)["product"]
        fp32.append(rate(matmul_flops(n), median(times), 1e12))
        del a
    return {"link": max(link), "fp32": max(fp32)}


# Timelines ----------------------------------------------------------------

class Timeline:
    """Records start/end times of activities on several devices on one clock.

    GPU activities are timed with CUDA events recorded on their stream, so the
    spans show when the GPU really ran them; CPU activities with
    ``time.perf_counter``. Call :meth:`spans` after the work is done.
    """

    def __init__(self, devices):
        self.devices = [torch.device(d) for d in _as_list(devices)]
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

    def wrap(self, row, device, function, label=""):
        """``function`` with its work recorded as one span."""
        def recorded():
            with self.span(row, device, label):
                return function()
        return recorded

    def spans(self):
        """The recorded spans in seconds on one clock (synchronizes the devices first)."""
        synchronize(self.devices)
        out = []
        for row, device, begin, end, label in self._records:
            if device.type == "cuda":
                event, host = self._origins[device]
                begin = host + event.elapsed_time(begin) / 1e3
                end = host + event.elapsed_time(end) / 1e3
            out.append(Span(row, begin, end, label))
        return out


def copy_spans(inputs, pinned, copy_stream=None):
    """Run products of ``inputs`` and copy each into ``pinned``; return their spans.

    Without ``copy_stream``: all products, then the copies, on the current
    stream. With it: the book's side-stream version (each copy on
    ``copy_stream`` after its product's event), with each product and copy
    recorded by CUDA events. The rows and labels are i18n keys.
    """
    gpu = inputs[0].device
    compute = torch.cuda.current_stream(gpu)
    timeline, ys = Timeline([gpu]), []
    for a in inputs:
        with timeline.span("compute_stream", gpu, "product", compute):
            ys.append(a.mm(a))
        if copy_stream is not None:
            copy_stream.wait_event(compute.record_event())
            with torch.cuda.stream(copy_stream), timeline.span("copy_stream", gpu, "copy", copy_stream):
                pinned[len(ys) - 1].copy_(ys[-1], non_blocking=True)
    if copy_stream is None:
        for p, y in zip(pinned, ys):
            with timeline.span("compute_stream", gpu, "copy", compute):
                p.copy_(y, non_blocking=True)
    return timeline.spans()
