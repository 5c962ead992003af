# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Compilers and interpreters with PyTorch: torch.compile, torch.export, CUDA graphs.

You learn what the interpreter costs per operation, what torch.compile
(TorchDynamo and Inductor) gains by fusing a chain of elementwise operations
and what the compilation costs, how torch.export saves a whole graph, how a
CUDA graph replays a captured loop of kernels with one launch, and whether two
streams of small jobs run side by side once they are captured as one graph.
--size n|auto: the GELU input is an n x n matrix. torch.compile needs a C++
compiler on the CPU. CUDA graphs need a GPU: without one the script compiles
and exports on the CPU, then says so and stops where the graphs begin.
"""

# %% tags=["harness"]
import warnings

import helpers
from common.hybridize import CHAIN, SWEEP, draw_streams, sweep_option
from common.stats import median, overlap, speedup
from common.timeline import Span

# torch.export.load warns about its own read-only buffers; the warning is not about this code.
warnings.filterwarnings("ignore", message="The given buffer is not writable", category=UserWarning)
# Inductor suggests TF32 for fp32 products; the book keeps fp32 on purpose (see the measuring page).
warnings.filterwarnings("ignore", message="TensorFloat32 tensor cores", category=UserWarning)

options, report = helpers.start(__doc__, "hybridize", add_arguments=sweep_option(SWEEP))
cache_warm = helpers.compile_cache() == "warm"  # before this run compiles anything


# %% tags=["setup"]
import tempfile
from statistics import median
from pathlib import Path

import torch

import helpers  # the book's devices and timer

device = helpers.try_gpu()  # the first GPU, or the CPU without one
n = helpers.matrix_size(device)  # 4000 on a GPU
x = torch.rand(n, n, device=device)

# %% tags=["setup-harness"]
report.publish_all({"size": n, "devices": [helpers.name(device)]})


# %% tags=["imperative"]
def gelu(x):  # GELU, tanh approximation: nine elementwise operations
    inner = 0.7978845608 * (x + 0.044715 * x * x * x)
    return 0.5 * x * (1.0 + torch.tanh(inner))


eager = helpers.benchmark({"eager, one operation at a time": lambda: gelu(x)},
                          device)

# %% tags=["compile"]
print("compile cache:", helpers.compile_cache())  # empty, or warm
compiled = torch.compile(gelu)  # TorchDynamo captures, Inductor generates code
first = helpers.benchmark({"first call (compiles)": lambda: compiled(x)},
                          device, repeats=1, warmup=0)
fused = helpers.benchmark({"compiled, fused": lambda: compiled(x)}, device)
print("same result:", torch.allclose(compiled(x), gelu(x), atol=1e-5))
own = helpers.device_benchmark({"eager, device time": lambda: gelu(x),
                                "compiled, device time": lambda: compiled(x)},
                               device)

# %% tags=["speed-up"]
t_eager, t_first, t_fused = (
    median(*t.values()) for t in (eager, first, fused))
t_eager_dev, t_fused_dev = (median(t) for t in own.values())
print(f"speed-up, called from Python: {t_eager / t_fused:.1f}x")
print(f"speed-up, device time: {t_eager_dev / t_fused_dev:.1f}x")
saved = t_eager - t_fused  # per call
print("calls until compiling pays off:",
      round(t_first / saved) if saved > 0 else "never")

# %% tags=["speed-up-harness"]
for key, samples in (("t_eager", eager), ("t_compile", first), ("t_compiled", fused)):
    report.publish_timing(key, *samples.values())
for key, (label, samples) in zip(("t_eager_device", "t_compiled_device"), own.items()):
    report.publish_timing(key, samples)
report.publish_all({"speedup_compiled": speedup(t_eager, t_fused),
                    "speedup_compiled_device": speedup(t_eager_dev, t_fused_dev),
                    "breakeven_calls": round(t_first / saved) if saved > 0 else None,
                    "compile_cache_warm": cache_warm})

# %% tags=["export"]
net = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Tanh())
sample = torch.rand(1, 64)
program = torch.export.export(net, (sample,))  # one graph, no Python left
path = Path(tempfile.mkdtemp()) / "net.pt2"
torch.export.save(program, path)
print("operators:", [str(n.target) for n in program.graph.nodes
                     if n.op == "call_function"])

# %% tags=["export-load"]
loaded = torch.export.load(path).module()
print("same result:", torch.allclose(loaded(sample), net(sample)))

# %% tags=["export-harness"]
print("files:", sorted(p.name for p in path.parent.iterdir()))
report.publish_all({"export_files": sorted(p.name for p in path.parent.iterdir()),
                    "export_matches": torch.allclose(loaded(sample), net(sample))})

# %% tags=["graph-setup", "raises-exception"]
gpu = helpers.gpu()  # CUDA graphs need a GPU: the program stops without one
steps, w = 200, torch.rand(64, 64, device=gpu) / 32
y0 = torch.rand(64, 64, device=gpu)


def loop(y, w):  # small steps, like the async section's loop
    for _ in range(steps):
        y = torch.tanh(y @ w)
    return y

# %% tags=["graph"]
loop(y0, w)  # warm-up: libraries set up their handles before a capture
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):  # records the kernels, runs nothing
    y_graph = loop(y0, w)
graph.replay()  # 200 steps of 2 kernels, one launch; result in y_graph

# %% tags=["graph-time"]
t = helpers.benchmark({"eager loop": lambda: loop(y0, w),
                       "one graph replay": graph.replay}, gpu)
step = helpers.device_benchmark({
    "per step, device (eager)": lambda: loop(y0, w),
    "per step, device (replayed)": graph.replay}, gpu, per=steps)

# %% tags=["graph-harness"]
report.publish_timing("t_loop_eager", t["eager loop"])
report.publish_timing("t_loop_graph", t["one graph replay"])
report.publish_timing("t_step_backend", step["per step, device (eager)"])
report.publish_timing("t_step_backend_graph", step["per step, device (replayed)"])
report.publish_all({"speedup_graph": speedup(median(t["eager loop"]), median(t["one graph replay"])),
                    "graph_matches": torch.allclose(y_graph, loop(y0, w), atol=1e-5)})

# %% tags=["streams"]
def two_streams(jobs, main, sides):
    """Run each job on its own stream, forked from main and joined back."""
    outs = []
    for job, side in zip(jobs, sides):
        side.wait_stream(main)  # starts after main's work so far
        with torch.cuda.stream(side):
            outs.append(job())
    for side in sides:
        main.wait_stream(side)  # main (and a capture) ends after both
    return outs


# %% tags=["streams-time"]
main = torch.cuda.current_stream()
sides = [torch.cuda.Stream() for _ in range(2)]  # one stream per job
jobs = [lambda: loop(y0, w), lambda: loop(y0, w)]  # two jobs of 200 steps
two_streams(jobs, main, sides)  # warm-up before the capture
both = torch.cuda.CUDAGraph()
with torch.cuda.graph(both):  # the capture forks both side streams
    two_streams(jobs, torch.cuda.current_stream(), sides)
t = helpers.benchmark({
    "one job, one graph replay": graph.replay,
    "two jobs, eager": lambda: two_streams(jobs, main, sides),
    "two jobs, one graph replay": both.replay}, gpu)

# %% tags=["streams-harness"]
def chain(n):
    """One job: CHAIN products of an n x n matrix, each followed by a tanh."""
    y, w = helpers.rand(n, gpu), helpers.rand(n, gpu) / n

    def job():
        out = y
        for _ in range(CHAIN):
            out = torch.tanh(out @ w)
        return out
    return job


def marked(job, marks):
    """job, with timing events recorded around it (kept in a graph, too)."""
    def run():
        begin, end = (torch.cuda.Event(enable_timing=True, external=True) for _ in range(2))
        begin.record()
        out = job()
        end.record()
        marks.append((begin, end))
        return out
    return run


def capture(work):
    """A CUDA graph of work() and the tensors it returns."""
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = work()
    return graph, out


def spans(origin, marks):
    """The marked jobs as timeline spans, in seconds after the origin event."""
    return [Span(str(i + 1), origin.elapsed_time(b) / 1e3, origin.elapsed_time(e) / 1e3)
            for i, (b, e) in enumerate(marks)]


def drawn_overlap(spans):
    """The overlap of the jobs as the figure draws them: their lengths against the span of both."""
    return overlap([s.end - s.start for s in spans], max(s.end for s in spans) - min(s.start for s in spans))


def timeline(jobs, sides, in_graph):
    """Spans of both jobs run once on two streams, eagerly or as one replayed graph."""
    marks, origin = [], torch.cuda.Event(enable_timing=True, external=True)

    def work():
        origin.record()
        return two_streams([marked(job, marks) for job in jobs], torch.cuda.current_stream(), sides)
    if in_graph:
        whole = capture(work)[0]
        whole.replay()
        helpers.synchronize(gpu)  # while whole (and its memory) is alive
    else:
        work()
    helpers.synchronize(gpu)
    return spans(origin, marks)


overlaps = {"eager": [], "graph": []}
matches = []
for n in options.sweep:
    jobs = [chain(n), chain(n)]
    both = lambda: two_streams(jobs, torch.cuda.current_stream(), sides)  # noqa: E731
    eager_outs = both()  # also the warm-up before the captures
    alone, (joint, joint_outs) = capture(jobs[0])[0], capture(both)
    t = helpers.measure({"eager_alone": jobs[0], "eager_both": both,
                         "graph_alone": alone.replay, "graph_both": joint.replay}, gpu)
    for mode in overlaps:
        overlaps[mode].append(overlap([median(t[f"{mode}_alone"])] * 2, median(t[f"{mode}_both"])))
    joint.replay()
    matches.append(all(torch.allclose(a, b, atol=1e-5) for a, b in zip(eager_outs, joint_outs)))
    if n == options.sweep[0]:
        panels = {mode: timeline(jobs, sides, mode == "graph") for mode in overlaps}
report.figure(lambda lang: draw_streams(panels, options.sweep[0], lang), "streams")
report.publish_all({"sweep_sizes": options.sweep, "eager_overlap": overlaps["eager"],
                    "graph_overlap": overlaps["graph"],
                    "small_size": options.sweep[0], "large_size": options.sweep[-1],
                    **{f"{end}_{mode}_overlap": overlaps[mode][i] for end, i in (("small", 0), ("large", -1))
                       for mode in overlaps}, "figure_graph_overlap": drawn_overlap(panels["graph"]),
                    "streams_graph_matches": all(matches)})

# %% tags=["finish"]
figures = report.finish()
