# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Compilers and interpreters with MXNet: HybridBlock, hybridize() and export().

You learn what the interpreter costs per operation, what hybridize() changes
when it turns a HybridBlock into one graph for the engine, how export() saves
that graph (a symbol file and the parameters), and whether two small jobs on
two contexts run side by side once each is a graph. MXNet 1.9.1 has no GPU
kernels for new GPUs, so this twin runs on CPU contexts and says so; it has
no CUDA graphs to show. --size n|auto: the GELU input is an n x n matrix.
"""

# %% tags=["harness"]
import helpers  # first: it lets MXNet 1.9.1 import under newer numpy
from common.hybridize import CHAIN, sweep_option
from common.stats import median, overlap, speedup

options, report = helpers.start(__doc__, "hybridize", add_arguments=sweep_option([16, 64, 256]))


# %% tags=["setup"]
import json
import tempfile
from statistics import median
from pathlib import Path

import helpers  # the book's devices and timer; first, for MXNet's imports
from mxnet import gluon, np, npx
from mxnet.gluon import nn

device = helpers.try_gpu()  # the first GPU, or the CPU without one
n = helpers.matrix_size(device)  # 4000 on a GPU
x = np.random.uniform(size=(n, n), ctx=device)

# %% tags=["setup-harness"]
if device.device_type == "cpu":
    print(f"{helpers.no_gpu_reason(options.device)}: running on CPU contexts.")
report.publish_all({"size": n, "devices": [helpers.name(device)]})


# %% tags=["imperative"]
class GELU(nn.HybridBlock):  # tanh approximation: nine elementwise operations
    def hybrid_forward(self, F, x):
        inner = 0.7978845608 * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + F.np.tanh(inner))


gelu = GELU()
eager = helpers.benchmark(
    {"imperative, one operation at a time": lambda: gelu(x)}, device)

# %% tags=["compile"]
compiled = GELU()
compiled.hybridize(static_alloc=True, static_shape=True)  # graph on 1st call
first = helpers.benchmark(
    {"first call (builds the graph)": lambda: compiled(x)},
    device, repeats=1, warmup=0)
fused = helpers.benchmark(
    {"hybridized, one graph": lambda: compiled(x)}, device)
print("same result:", bool(np.allclose(compiled(x), gelu(x), atol=1e-5)))
own = helpers.device_benchmark({
    "imperative, device time": lambda: gelu(x),
    "hybridized, device time": lambda: compiled(x)}, device)

# %% tags=["speed-up"]
t_eager, t_first, t_fused = (
    median(*t.values()) for t in (eager, first, fused))
t_eager_dev, t_fused_dev = (median(t) for t in own.values())
print(f"speed-up, called from Python: {t_eager / t_fused:.1f}x")
print(f"speed-up, device time: {t_eager_dev / t_fused_dev:.1f}x")
saved = t_eager - t_fused  # per call
print("calls until hybridizing pays off:",
      round(t_first / saved) if saved > 0 else "never")

# %% tags=["speed-up-harness"]
for key, samples in (("t_eager", eager), ("t_compile", first), ("t_compiled", fused)):
    report.publish_timing(key, *samples.values())
for key, (label, samples) in zip(("t_eager_device", "t_compiled_device"), own.items()):
    report.publish_timing(key, samples)
report.publish_all({"speedup_compiled": speedup(t_eager, t_fused),
                    "speedup_compiled_device": speedup(t_eager_dev, t_fused_dev),
                    "breakeven_calls": round(t_first / saved) if saved > 0 else None,
                    "compile_cache_warm": None})

# %% tags=["trace"]
class Traced(nn.HybridBlock):
    def hybrid_forward(self, F, x):
        print("  Python runs hybrid_forward")
        return x * 2


traced = Traced()
traced.hybridize()
for call in range(3):
    print(f"call {call}:")
    traced(x)

# %% tags=["export"]
net = nn.HybridSequential()
net.add(nn.Dense(64, in_units=64), nn.Activation("tanh"))
net.initialize(ctx=device)
net.hybridize()
sample = np.random.uniform(size=(1, 64), ctx=device)
net(sample)  # export() saves the graph of the last hybridized call
path = Path(tempfile.mkdtemp()) / "net"  # net-symbol.json, net-0000.params
net.export(str(path))
nodes = json.loads(Path(f"{path}-symbol.json").read_text())["nodes"]
print("operators:", [n["op"] for n in nodes if n["op"] != "null"])

# %% tags=["export-load"]
loaded = gluon.SymbolBlock.imports(f"{path}-symbol.json", ["data"])  # fp32
loaded.collect_params().load(f"{path}-0000.params", ctx=device)
print("same result:", bool(np.allclose(loaded(sample), net(sample))))

# %% tags=["export-harness"]
print("files:", sorted(p.name for p in path.parent.iterdir()))
report.publish_all({"export_files": sorted(p.name for p in path.parent.iterdir()),
                    "export_matches": bool(np.allclose(loaded(sample), net(sample)))})


# %% tags=["graph-setup"]
steps, w = 200, np.random.uniform(size=(64, 64), ctx=device) / 32
y0 = np.random.uniform(size=(64, 64), ctx=device)


class Loop(nn.HybridBlock):  # small steps, like the async section's loop
    def hybrid_forward(self, F, y, w):
        for _ in range(steps):
            y = F.np.tanh(F.np.dot(y, w))
        return y

# %% tags=["graph"]
loop, graph = Loop(), Loop()
graph.hybridize(static_alloc=True, static_shape=True)
y_graph = graph(y0, w)  # the first call builds the graph; later calls reuse it

# %% tags=["graph-time"]
t = helpers.benchmark({"imperative loop": lambda: loop(y0, w),
                       "hybridized loop": lambda: graph(y0, w)}, device)

# %% tags=["graph-harness"]
report.publish_timing("t_loop_eager", t["imperative loop"])
report.publish_timing("t_loop_graph", t["hybridized loop"])
# The engine's busy time per step, from the profiler, which slows the loop: published, not shown
# next to the loops timed without it.
step = helpers.measure({"per step, engine (imperative)": lambda: loop(y0, w),
                        "per step, engine (hybridized)": lambda: graph(y0, w)},
                       [device], clock="gpu", per=steps)
for key, label in [("t_step_backend", "per step, engine (imperative)"),
                   ("t_step_backend_graph", "per step, engine (hybridized)")]:
    report.publish_timing(key, step[label])
report.publish_all({"speedup_graph": speedup(median(t["imperative loop"]),
                                             median(t["hybridized loop"])),
                    "graph_matches": bool(np.allclose(y_graph, loop(y0, w), atol=1e-5))})


# %% tags=["streams"]
def two_streams(jobs):
    """Queue the jobs one after the other, one context each; their
    products share the CPU contexts' few workspaces and take turns."""
    return [job() for job in jobs]


# %% tags=["streams-harness"]
class Chain(nn.HybridBlock):  # one job: CHAIN products of an n x n matrix, each with a tanh
    def hybrid_forward(self, F, y, w):
        for _ in range(CHAIN):
            y = F.np.tanh(F.np.dot(y, w))
        return y


def chain(n, ctx, hybridized):
    """One job on ctx, with its own block and inputs, imperative or hybridized."""
    block, y, w_job = Chain(), helpers.rand(n, ctx), helpers.rand(n, ctx) / n
    if hybridized:
        block.hybridize(static_alloc=True, static_shape=True)
    return lambda: block(y, w_job)


contexts = [helpers.cpu(0), helpers.cpu(1)]  # each CPU context has its own engine workers
overlaps = {"eager": [], "graph": []}
for n in options.sweep:
    cases = {}
    for mode in overlaps:
        jobs = [chain(n, ctx, mode == "graph") for ctx in contexts]
        cases[f"{mode}_alone"] = jobs[0]
        cases[f"{mode}_both"] = lambda jobs=jobs: two_streams(jobs)
    t = helpers.measure(cases, contexts)
    for mode in overlaps:
        overlaps[mode].append(overlap([median(t[f"{mode}_alone"])] * 2, median(t[f"{mode}_both"])))
report.publish_all({"sweep_sizes": options.sweep, "eager_overlap": overlaps["eager"],
                    "graph_overlap": overlaps["graph"],
                    "small_size": options.sweep[0], "large_size": options.sweep[-1],
                    **{f"{end}_{mode}_overlap": overlaps[mode][i] for end, i in (("small", 0), ("large", -1))
                       for mode in overlaps}, "figure_graph_overlap": None})

# %% tags=["finish"]
figures = report.finish()
