# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Automatic parallelism with MXNet: several devices, and compute next to copies.

You learn to time work on several devices correctly (warm up, wait for every
device, report medians), whether MXNet's engine runs independent jobs on
different contexts at the same time, and how it overlaps device-to-host copies
with compute. Needs nothing but a CPU: without a GPU usable by MXNet (MXNet
1.9.1 has no kernels for GPUs newer than sm_86, such as the H200) the jobs run
on the CPU contexts cpu(0) and cpu(1) and the copy experiments are skipped.
1 GPU adds the copy experiments; 2 or more GPUs are all used.
"""

# %% tags=["setup"]
from functools import partial

import helpers  # first: it lets MXNet 1.9.1 import under newer numpy
from helpers import fraction, seconds
from mxnet import np, npx
from common.keys import AUTO_PARALLELISM
from common.stats import matmul_flops, overlap_efficiency, parallel_efficiency, rate, ratio

npx.set_np()
PRODUCTS = 50  # matrix products per run, as in the book
options, report = helpers.start(__doc__, AUTO_PARALLELISM)
gpus, no_gpu = helpers.gpus(options.device), helpers.no_gpu_reason(options.device)
if len(gpus) >= 2:
    mode, lanes = "multi-gpu", gpus
    print(f"{len(gpus)} GPUs: one job on each of them.")
elif len(gpus) == 1:
    mode, lanes = "gpu+cpu", [gpus[0], helpers.cpu()]
    print("1 GPU: one job on the GPU and one on the CPU, sized to take comparable time.")
else:
    mode, lanes = "cpu", [helpers.cpu(0), helpers.cpu(1)]
    print(f"{no_gpu}: two jobs on the CPU contexts cpu(0) and cpu(1), two names for the same "
          "processor; all figures are CPU figures.")
names = [helpers.name(d, i if mode == "cpu" else None) for i, d in enumerate(lanes)]
print("TF32 is off: every product is fp32.")
if mode != "multi-gpu":
    print(helpers.CPU_THREADS_NOTE)
report.publish_all({"mode": mode, "n_gpus": len(gpus), "lanes": names, "products": PRODUCTS,
                    "devices": sorted({helpers.name(d) for d in lanes})})

# %% tags=["run-function"]
def run(x):
    """The book's job: PRODUCTS independent products of x with itself."""
    return [x.dot(x) for _ in range(PRODUCTS)]


def run_lane(i, timeline=None):
    """Queue lane i's job on its context (and record when it ran)."""
    with helpers.span(timeline, names[i], lanes[i]):
        return run(xs[i])


def run_together(timeline=None):
    """Queue every lane's job without waiting in between; the engine decides what overlaps."""
    return helpers.run_concurrently([partial(run_lane, i, timeline) for i in range(len(lanes))])


# %% tags=["warm-up"]
xs = [helpers.rand(options.size, d) for d in lanes]
if mode == "gpu+cpu":  # time the GPU job, then pick a CPU size that takes as long
    t_gpu = helpers.measure(partial(run_lane, 0), lanes[:1], repeats=1)
    xs[1] = helpers.rand(helpers.cpu_size_for(t_gpu, PRODUCTS, options.size), lanes[1])
for name, x in zip(names, xs):
    print(f"{name}: {PRODUCTS} products of {x.shape[0]}x{x.shape[0]}")
results = [run_lane(i) for i in range(len(lanes))]  # warm up every lane once
helpers.synchronize(lanes)

# %% tags=["devices-alone"]
cases = {i: (partial(run_lane, i), [lanes[i]]) for i in range(len(lanes))}
cases["together"] = (run_together, lanes)  # timed in turns with the lanes alone: same conditions
times = helpers.measure_in_turns(cases, options.repeats)
t_alone = [times[i] for i in range(len(lanes))]
for name, t_i in zip(names, t_alone):
    print(f"{name} alone: {seconds(t_i)}")

# %% tags=["devices-together"]
t_together = times["together"]  # measured above, in turns with each lane alone
parallel_eff = parallel_efficiency(t_alone, t_together)
print(f"all {len(lanes)} lanes together: {seconds(t_together)}")
print(f"parallel efficiency, max(alone) / together: {fraction(parallel_eff)}")
report.publish_all({"t_alone_0": t_alone[0], "t_alone_1": t_alone[1], "t_alone_max": max(t_alone),
                    "t_together": t_together, "parallel_eff": parallel_eff})

# %% tags=["timeline-devices"]
alone = helpers.Timeline(lanes)  # one profiler at a time: each timeline in turn
for i in range(len(lanes)):
    results = run_lane(i, alone)
    helpers.synchronize(lanes)
alone_spans, together = alone.spans(), helpers.Timeline(lanes)
results = run_together(together)
spans = together.spans()
shared, total = helpers.overlap_seconds(spans)
print(f"MXNet's profiler: the lanes computed at the same time for {seconds(shared)} of {seconds(total)}")
# MXNet 1.9.1 gives each CPU context its own worker thread, but all CPU contexts share a few
# temporary workspaces (MXNET_CPU_TEMP_COPY, default 4) and each product takes one: products
# queued lane by lane then wait for each other (see MEASUREMENTS.md).
fig = helpers.draw_timeline({"each lane alone, one after another": alone_spans,
                             "all lanes together": spans})
report.figure(fig, "timeline-devices")


# %% tags=["copy-seed"]
def copy_to_cpu(ys, pinned=False, timeline=None):
    """The book's copy: copyto() the host, into new pinned buffers if ``pinned``.

    Like every MXNet call it only queues the copy; the engine runs it on its
    copy stream as soon as the product it reads is done.
    """
    with helpers.span(timeline, "copies", ys[0].ctx, "copy"):
        return [y_i.copyto(npx.cpu_pinned() if pinned else npx.cpu()) for y_i in ys]


def run_then_copy(timeline=None):
    with helpers.span(timeline, "products", gpu, "product"):
        ys = run(x)
    return ys, copy_to_cpu(ys, True, timeline)


if gpus:
    gpu, x = gpus[0], xs[0]
    y = run(x)  # the results to copy in this section
    t_run = helpers.measure(lambda: run(x), [gpu], options.repeats)
    t_copy_pageable = helpers.measure(lambda: copy_to_cpu(y), [gpu], options.repeats)
    t_copy_nonblocking = helpers.measure(lambda: copy_to_cpu(y, True), [gpu], options.repeats)
    t_run_copy_nonblocking = helpers.measure(run_then_copy, [gpu], options.repeats)
    overlap_eff_seed = overlap_efficiency(t_run, t_copy_nonblocking, t_run_copy_nonblocking)
    print(f"run on {names[0]}: {seconds(t_run)}")
    print(f"copy to CPU, pageable memory (cpu()): {seconds(t_copy_pageable)}")
    print(f"copy to CPU, new pinned buffers (cpu_pinned()): {seconds(t_copy_nonblocking)}")
    print(f"run, then copies queued without waiting: {seconds(t_run_copy_nonblocking)}")
    print(f"overlap efficiency (seed), max(run, copy) / both: {fraction(overlap_eff_seed)}")
    report.publish_all({"t_run": t_run, "t_copy_pageable": t_copy_pageable,
                        "t_copy_nonblocking": t_copy_nonblocking, "overlap_eff_seed": overlap_eff_seed,
                        "t_run_copy_nonblocking": t_run_copy_nonblocking})
else:
    print(f"{no_gpu}: the copy experiments need a GPU and are skipped.")

# %% tags=["copy-streams"]
def run_copy_streams(timeline=None):
    """Queue each product, then its copy into pinned[i]; the engine orders the two."""
    ys = []
    for i in range(PRODUCTS):
        with helpers.span(timeline, "products", gpu, "product"):
            ys.append(x.dot(x))
        with helpers.span(timeline, "copies", gpu, "copy"):
            ys[i].copyto(pinned[i])
    return ys


if gpus:
    pinned = [np.empty(y_i.shape, dtype=y_i.dtype, ctx=npx.cpu_pinned()) for y_i in y]  # allocated once
    t_copy_pinned = helpers.measure(lambda: [y_i.copyto(p) for p, y_i in zip(pinned, y)],
                                    [gpu], options.repeats)
    t_run_copy_streams = helpers.measure(run_copy_streams, [gpu], options.repeats)
    overlap_eff = overlap_efficiency(t_run, t_copy_pinned, t_run_copy_streams)
    ys = run_copy_streams()
    helpers.synchronize([gpu])
    copy_matches = all(bool((p.asnumpy() == y_i.asnumpy()).all()) for p, y_i in zip(pinned, ys))
    print(f"copy to pinned buffers allocated once: {seconds(t_copy_pinned)}")
    print(f"run, copying each result as soon as it is ready: {seconds(t_run_copy_streams)}")
    print(f"overlap efficiency, max(run, copy) / both: {fraction(overlap_eff)}")
    print(f"host copies equal the device results: {copy_matches}")
    report.publish_all({"t_copy_pinned": t_copy_pinned, "t_run_copy_streams": t_run_copy_streams,
                        "overlap_eff": overlap_eff, "copy_matches": copy_matches})

# %% tags=["timeline-copy"]
if gpus:
    seed = helpers.Timeline([gpu])
    results = run_then_copy(seed)
    seed_spans, streams = seed.spans(), helpers.Timeline([gpu])
    results = run_copy_streams(streams)
    fig = helpers.draw_timeline({"all products, then copies into new pinned buffers": seed_spans,
                                 "each product's copy queued right after it": streams.spans()},
                                title=names[0], color_by="label")
    report.figure(fig, "timeline-copy")
else:
    print(f"{no_gpu}: no copy timeline.")

# %% tags=["limits"]
if gpus:
    big, big_host = np.zeros(2**26, ctx=gpu), np.zeros(2**26, ctx=npx.cpu_pinned())  # 256 MiB
    d2h_gbps = rate(sum(y_i.size * y_i.dtype.itemsize for y_i in y), t_copy_pinned, 1e9)
    t_big = helpers.measure(lambda: big.copyto(big_host), [gpu], options.repeats)
    d2h_peak_gbps = rate(big.size * big.dtype.itemsize, t_big, 1e9)
    n = max(8192, options.size)  # a large product in the same precision (fp32)
    a = helpers.rand(n, gpu)
    tflops_run = rate(matmul_flops(options.size, PRODUCTS), t_run, 1e12)
    tflops_peak = rate(matmul_flops(n), helpers.measure(lambda: a.dot(a), [gpu], options.repeats), 1e12)
    d2h_frac, tflops_frac = ratio(d2h_gbps, d2h_peak_gbps), ratio(tflops_run, tflops_peak)
    print(f"device-to-host copies: {d2h_gbps:.1f} GB/s of {d2h_peak_gbps:.1f} GB/s peak "
          f"(fraction {fraction(d2h_frac)})")
    print(f"products: {tflops_run:.1f} TFLOP/s of {tflops_peak:.1f} TFLOP/s at {n}x{n} "
          f"(fraction {fraction(tflops_frac)})")
    report.publish_all({"d2h_gbps": d2h_gbps, "d2h_peak_gbps": d2h_peak_gbps, "d2h_frac": d2h_frac,
                        "tflops_run": tflops_run, "tflops_peak": tflops_peak, "tflops_frac": tflops_frac})
else:
    print(f"{no_gpu}: no copy bandwidth or GPU TFLOP/s to compare.")
figures = report.finish()
