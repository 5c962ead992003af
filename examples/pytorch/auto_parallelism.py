# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Automatic parallelism with PyTorch: several devices, and compute next to copies.

You learn to time work on several devices correctly (warm up, synchronise every
device, report medians), how well independent jobs on different devices run at
the same time, and why a device-to-host copy overlaps the compute only with a
side stream, pinned buffers and events. Needs nothing but a CPU; 1 GPU adds the
copy experiments; 2 or more GPUs are all used. --size 4000 needs about 7 GB
per GPU; pass a smaller --size on smaller GPUs.
"""

# %% tags=["setup"]
from functools import partial

import torch

import helpers
from helpers import fraction, seconds
from common.keys import AUTO_PARALLELISM
from common.options import no_gpu_reason
from common.stats import matmul_flops, overlap_efficiency, parallel_efficiency, rate, ratio

PRODUCTS = 50  # matrix products per run, as in the book
options, report = helpers.start(__doc__, AUTO_PARALLELISM)
gpus, no_gpu = helpers.gpus(options.device), no_gpu_reason(options.device)
if len(gpus) >= 2:
    mode, lanes = "multi-gpu", gpus
    print(f"{len(gpus)} GPUs: one job on each of them.")
elif len(gpus) == 1:
    mode, lanes = "gpu+cpu", [gpus[0], helpers.cpu()]
    print("1 GPU: one job on the GPU and one on the CPU, sized to take comparable time.")
else:
    mode, lanes = "cpu", [helpers.cpu(), helpers.cpu()]
    print(f"{no_gpu}: two CPU jobs in two threads on the same CPU; all figures are CPU figures.")
names = [helpers.name(d, i if mode == "cpu" else None) for i, d in enumerate(lanes)]
print("TF32 is off: every product is fp32.")
report.publish_all({"mode": mode, "n_gpus": len(gpus), "lanes": names, "products": PRODUCTS,
                    "devices": sorted({helpers.name(d) for d in lanes})})

# %% tags=["run-function"]
def run(x):
    """The book's job: PRODUCTS independent products of x with itself."""
    return [x.mm(x) for _ in range(PRODUCTS)]


def run_lane(i, timeline=None):
    """Run lane i's job on its device (and record when it ran)."""
    helpers.bind(lanes[i])  # the lane's thread may be new; every device is idle here
    with helpers.span(timeline, names[i], lanes[i]):
        return run(xs[i])


def run_alone(i, timeline=None):
    """Run lane i's job by itself, in the same thread as when all lanes run together."""
    return helpers.run_concurrently([partial(run_lane, i, timeline)], lanes=[i])


def run_together(timeline=None):
    """Start every lane's job at the same time; the caller waits for all devices."""
    return helpers.run_concurrently([partial(run_lane, i, timeline) for i in range(len(lanes))])


# %% tags=["warm-up"]
xs = [helpers.rand(options.size, d) for d in lanes]
if mode == "gpu+cpu":  # time the GPU job, then pick a CPU size that takes as long
    t_gpu = helpers.measure(partial(run_lane, 0), lanes[:1], repeats=1)
    xs[1] = helpers.rand(helpers.cpu_size_for(t_gpu, PRODUCTS, options.size), lanes[1])
for name, x in zip(names, xs):
    print(f"{name}: {PRODUCTS} products of {x.shape[0]}x{x.shape[0]}")
results = [run_alone(i) for i in range(len(lanes))]  # warm up every lane once
helpers.synchronize(lanes)

# %% tags=["devices-alone"]
cases = {i: (partial(run_alone, i), [lanes[i]]) for i in range(len(lanes))}
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
alone, together = helpers.Timeline(lanes), helpers.Timeline(lanes)
for i in range(len(lanes)):
    results = run_alone(i, alone)
    helpers.synchronize(lanes)
results = run_together(together)
helpers.synchronize(lanes)
fig = helpers.draw_timeline({"each lane alone, one after another": alone.spans(),
                             "all lanes together": together.spans()})
report.figure(fig, "timeline-devices")

# %% tags=["copy-seed"]
def copy_to_cpu(ys, non_blocking=False, timeline=None):
    """The book's copy: .to('cpu') on the current stream, the one that computed ys."""
    with helpers.span(timeline, "compute stream", ys[0].device, "copy"):
        return [y_i.to("cpu", non_blocking=non_blocking) for y_i in ys]  # non_blocking: read after sync!


def run_then_copy(timeline=None):
    with helpers.span(timeline, "compute stream", gpu, "product"):
        ys = run(x)
    return ys, copy_to_cpu(ys, True, timeline)  # keep ys alive until the caller synchronises


if gpus:
    gpu, x = gpus[0], xs[0]
    y = run(x)  # the results to copy in this section
    t_run = helpers.measure(lambda: run(x), [gpu], options.repeats)
    t_copy_pageable = helpers.measure(lambda: copy_to_cpu(y), [gpu], options.repeats)
    t_copy_nonblocking = helpers.measure(lambda: copy_to_cpu(y, True), [gpu], options.repeats)
    t_run_copy_nonblocking = helpers.measure(run_then_copy, [gpu], options.repeats)
    overlap_eff_seed = overlap_efficiency(t_run, t_copy_nonblocking, t_run_copy_nonblocking)
    print(f"run on {names[0]}: {seconds(t_run)}")
    print(f"copy to CPU, blocking, pageable memory: {seconds(t_copy_pageable)}")
    print(f"copy to CPU, non_blocking=True: {seconds(t_copy_nonblocking)}")
    print(f"run, then non_blocking copies on the same stream: {seconds(t_run_copy_nonblocking)}")
    print(f"overlap efficiency (seed), max(run, copy) / both: {fraction(overlap_eff_seed)}")
    report.publish_all({"t_run": t_run, "t_copy_pageable": t_copy_pageable,
                        "t_copy_nonblocking": t_copy_nonblocking, "overlap_eff_seed": overlap_eff_seed,
                        "t_run_copy_nonblocking": t_run_copy_nonblocking})
else:
    print(f"{no_gpu}: the copy experiments need a GPU and are skipped.")

# %% tags=["copy-streams"]
def copy_one(i, y_i, ready=None, timeline=None):
    """Copy y_i into pinned[i] on the side stream, after the event ``ready`` if given."""
    if ready is not None:
        copy_stream.wait_event(ready)  # wait for this product only, not for later ones
    with torch.cuda.stream(copy_stream), helpers.span(timeline, "copy stream", gpu, "copy"):
        pinned[i].copy_(y_i, non_blocking=True)


def run_copy_streams(timeline=None):
    ys = []
    for i in range(PRODUCTS):
        with helpers.span(timeline, "compute stream", gpu, "product"):
            ys.append(x.mm(x))
        ready = torch.cuda.Event()
        ready.record(torch.cuda.current_stream(gpu))  # fires when product i is done
        copy_one(i, ys[i], ready, timeline)
    return ys  # keep the results alive until the caller synchronises


if gpus:
    copy_stream = torch.cuda.Stream(gpu)  # a side stream for the copies
    pinned = [torch.empty(y_i.shape, dtype=y_i.dtype, pin_memory=True) for y_i in y]  # allocated once
    t_copy_pinned = helpers.measure(lambda: [copy_one(i, y_i) for i, y_i in enumerate(y)],
                                    [gpu], options.repeats)
    t_run_copy_streams = helpers.measure(run_copy_streams, [gpu], options.repeats)
    overlap_eff = overlap_efficiency(t_run, t_copy_pinned, t_run_copy_streams)
    ys = run_copy_streams()
    helpers.synchronize([gpu])  # only now may the host read pinned[]
    copy_matches = all(torch.equal(p.to(gpu), y_i) for p, y_i in zip(pinned, ys))
    print(f"copy to pinned buffers on a side stream: {seconds(t_copy_pinned)}")
    print(f"run, copying each result on the side stream: {seconds(t_run_copy_streams)}")
    print(f"overlap efficiency, max(run, copy) / both: {fraction(overlap_eff)}")
    print(f"host copies equal the device results: {copy_matches}")
    report.publish_all({"t_copy_pinned": t_copy_pinned, "t_run_copy_streams": t_run_copy_streams,
                        "overlap_eff": overlap_eff, "copy_matches": copy_matches})

# %% tags=["timeline-copy"]
if gpus:
    run_then_copy()  # untimed: the pinned buffers above took the blocks PyTorch had cached
    seed, streams = helpers.Timeline([gpu]), helpers.Timeline([gpu])
    results = run_then_copy(seed)
    helpers.synchronize([gpu])
    del results  # give the pinned blocks back before the next version runs
    results = run_copy_streams(streams)
    helpers.synchronize([gpu])
    fig = helpers.draw_timeline({"products, then non_blocking copies on one stream": seed.spans(),
                                 "copies on a side stream into pinned buffers": streams.spans()},
                                title=names[0], color_by="label")
    report.figure(fig, "timeline-copy")
else:
    print(f"{no_gpu}: no copy timeline.")

# %% tags=["limits"]
if gpus:
    big, big_host = torch.empty(2**26, device=gpu), torch.empty(2**26, pin_memory=True)  # 256 MiB
    d2h_gbps = rate(sum(y_i.numel() * y_i.element_size() for y_i in y), t_copy_pinned, 1e9)
    t_big = helpers.measure(lambda: big_host.copy_(big, non_blocking=True), [gpu], options.repeats)
    d2h_peak_gbps = rate(big.numel() * big.element_size(), t_big, 1e9)
    n = max(8192, options.size)  # a large product in the same precision (fp32)
    a = helpers.rand(n, gpu)
    tflops_run = rate(matmul_flops(options.size, PRODUCTS), t_run, 1e12)
    tflops_peak = rate(matmul_flops(n), helpers.measure(lambda: a.mm(a), [gpu], options.repeats), 1e12)
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
