# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Automatic parallelism with MXNet: several devices, and compute next to copies.

You learn how well independent jobs on different devices run at the same
time when MXNet's engine schedules them, and that the engine also overlaps
device-to-host copies with the compute and orders each copy after the product
it reads, with no streams or events in your code. Needs nothing but a CPU:
without a GPU usable by MXNet (MXNet 1.9.1 has no kernels for GPUs newer than
sm_86, such as the H200) the jobs run on the CPU contexts cpu(0) and cpu(1);
with 1 GPU the GPU works next to cpu(0) and the copy experiments run; with 2
or more GPUs the first two work side by side. Without a GPU the script says so
and stops where the copies begin. --size auto: 4000 on a GPU, on
CPU contexts the size at which the 50 products take about 0.2 s.
"""

# %% tags=["harness"]
import helpers  # first: it lets MXNet 1.9.1 import under newer numpy
from common.stats import matmul_flops, median, overlap, rate, ratio, speedup

options, report = helpers.start(__doc__, "auto_parallelism")

# %% tags=["setup"]
from statistics import median

import helpers  # the book's devices and timer; first, for MXNet's imports
from mxnet import np, npx

devices = helpers.two_devices()  # two GPUs, a GPU and the CPU, or the CPU
sizes = helpers.job_sizes(devices)  # the CPU's job sized to match the GPU's
xs = [np.random.uniform(size=(n, n), ctx=d) for n, d in zip(sizes, devices)]

# %% tags=["setup-harness"]
gpus = [d for d in devices if d.device_type == "gpu"]
mode = "multi-gpu" if len(gpus) == 2 else "gpu+cpu" if gpus else "cpu"
cpu_threads = helpers.CPU_THREADS if mode != "multi-gpu" else None
if cpu_threads:
    print(helpers.CPU_THREADS_NOTE)
names = [helpers.name(d) for d in devices]
report.publish_all({"size": sizes[0], "mode": mode, "n_gpus": len(helpers.gpus(options.device)),
                    "devices": sorted(set(names)), "products": helpers.PRODUCTS,
                    "cpu_threads": cpu_threads, "job_sizes": sizes})


# %% tags=["jobs"]
def run(x):
    """The job: 50 independent products of x with itself."""
    return [x.dot(x) for _ in range(50)]


for i, x in enumerate(xs):
    print(f"job {i}: 50 products of {len(x)}×{len(x)} on {x.ctx}")


# %% tags=["together"]
def together():
    """Both jobs, product by product, from this one thread."""
    return [x.dot(x) for _ in range(50) for x in xs]


times = helpers.benchmark({"job 0 alone": lambda: run(xs[0]),
                           "job 1 alone": lambda: run(xs[1]),
                           "both together": together}, devices)

# %% tags=["efficiency"]
alone = [median(times[f"job {i} alone"]) for i in (0, 1)]
both = median(times["both together"])
saved = sum(alone) - both  # what running together saved over taking turns
print(f"overlap: {saved / min(alone):.2f}")  # 1: the shorter job fully hid

# %% tags=["efficiency-harness"]
for key, samples in zip(("t_alone_0", "t_alone_1", "t_together"), times.values()):
    report.publish_timing(key, samples)
report.publish_all({"overlap_devices": overlap(alone, both), "speedup_together": speedup(sum(alone), both)})
# One more run of each case under MXNet's profiler: which operators ran when, on which context.
profiled = helpers.measure({"alone_0": lambda: run(xs[0]), "alone_1": lambda: run(xs[1]),
                            "both": together}, devices, repeats=1)

# %% tags=["timeline-devices"]
rows = {helpers.profiler_row(d): name.split(" ")[0] for d, name in zip(devices, names)}


def on_rows(spans):  # the profiled run of a case, one row per context
    return [s._replace(row=rows[s.row]) for s in spans if s.row in rows]


report.figure(lambda lang: helpers.draw_timeline(
    {helpers.text(lang, "alone"): on_rows(profiled["alone_0"].spans[-1] + profiled["alone_1"].spans[-1]),
     helpers.text(lang, "together"): on_rows(profiled["both"].spans[-1])}, lang), "timeline-devices")

# %% tags=["copies", "raises-exception"]
gpu = helpers.gpu()  # what follows needs a GPU: it stops without one
ys = run(xs[0])  # 50 results on the GPU to copy
pageable = [np.empty(y.shape) for y in ys]  # allocated once, on cpu()
pinned = [np.empty(y.shape, ctx=npx.cpu_pinned()) for y in ys]
copies = helpers.benchmark({
    "fresh .copyto(npx.cpu())":  # new arrays, from MXNet's pool
        lambda: [y.copyto(npx.cpu()) for y in ys],
    "into pageable buffers":
        lambda: [y.copyto(p) for p, y in zip(pageable, ys)],
    "into pinned buffers":
        lambda: [y.copyto(p) for p, y in zip(pinned, ys)],
}, gpu, repeats=2)

# %% tags=["copies-harness"]
for key, samples in zip(["t_copy_fresh", "t_copy_pageable", "t_copy_pinned"], copies.values()):
    report.publish_timing(key, samples)
nbytes = sum(y.size * y.dtype.itemsize for y in ys)
report.publish("copy_gbps", rate(nbytes, median(copies["into pinned buffers"]), 1e9))


# %% tags=["same-stream"]
def run_then_copy():
    ys = run(xs[0])
    for p, y in zip(pinned, ys):
        y.copyto(p)  # queued after all the products, waits only for y
    return ys


runs = helpers.benchmark({"products alone": lambda: run(xs[0]),
                          "products, then copies": run_then_copy}, gpu)

# %% tags=["same-stream-overlap"]
t_run = median(runs["products alone"])
t_copy = median(copies["into pinned buffers"])
t_both = median(runs["products, then copies"])
print(f"overlap: {(t_run + t_copy - t_both) / min(t_run, t_copy):.2f}")

# %% tags=["same-stream-harness"]
report.publish_timing("t_run", runs["products alone"])
report.publish_timing("t_run_copy_same_stream", runs["products, then copies"])
report.publish("overlap_same_stream", overlap([t_run, t_copy], t_both))


# %% tags=["side-stream"]
def run_and_copy(inputs):
    ys = []
    for a, p in zip(inputs, pinned):
        ys.append(a.dot(a))
        ys[-1].copyto(p)  # the engine starts it when the product is done
    return ys

# %% tags=["side-stream-time"]
side = helpers.benchmark({"products, each copy queued after its product":
                          lambda: run_and_copy([xs[0]] * 50)}, gpu)

t_both = median(side["products, each copy queued after its product"])
print(f"overlap: {(t_run + t_copy - t_both) / min(t_run, t_copy):.2f}")

# %% tags=["side-stream-harness"]
report.publish_timing("t_run_copy_streams", side["products, each copy queued after its product"])
report.publish("overlap_side_stream", overlap([t_run, t_copy], t_both))

# %% tags=["check"]
correct = {}
for wait in (True, False):
    for p in pinned:
        p[:] = 0  # clear what earlier runs left in the buffers
    inputs = [helpers.rand(sizes[0], devices[0]) for _ in pinned]  # distinct
    ys = run_and_copy(inputs)
    if wait:
        npx.waitall()  # without it, each read below waits for its copy
    correct[wait] = helpers.count_equal(pinned, ys)
    print(f"wait={wait}: {correct[wait]} of {len(ys)} host copies are right")

# %% tags=["check-harness"]
print("MXNet's engine runs each copy after its product and each read after its\n"
      "copy: a read that comes early waits; it cannot see stale data.")
report.publish_all({"copies_correct": correct[True], "copies_correct_no_wait": correct[False]})

# %% tags=["timeline-copy"]
inputs = [xs[0]] * len(pinned)
after_all = helpers.copy_spans(gpu, run_then_copy)
after_each = helpers.copy_spans(gpu, lambda: run_and_copy(inputs))
copy_seconds = [s.end - s.start for s in after_each if s.label == "copy"]
link_achieved = rate(ys[0].size * ys[0].dtype.itemsize, median(copy_seconds), 1e9)


def localized(spans, lang):
    return [s._replace(row=helpers.text(lang, s.row), label=helpers.text(lang, s.label))
            for s in spans]


report.figure(lambda lang: helpers.draw_timeline(
    {helpers.text(lang, "copies_after_all"): localized(after_all, lang),
     helpers.text(lang, "copies_after_each"): localized(after_each, lang)},
    lang, title=names[0], color_by="label"), "timeline-copy")

# %% tags=["limits-setup"]
import helpers  # the book's devices and limits

gpu = helpers.gpu()  # this section needs a GPU

# %% tags=["limits"]
limit = helpers.peak_rates(gpu)  # from the hardware, through NVML
best = helpers.best_rates(gpu)  # large copies and products, profiler
for what, unit in (("link", "GB/s"), ("fp32", "TFLOP/s")):
    print(f"{what} ({unit}): limit {limit[what]:.1f}, best measured "
          f"{best[what]:.1f}, best / limit {best[what] / limit[what]:.2f}")

# %% tags=["limits-harness"]
achieved = {"link": link_achieved,  # the copies next to the products
            "fp32": matmul_flops(sizes[0], 50) / t_run / 1e12}
for what, unit in (("link", "gbps"), ("fp32", "tflops")):
    best_frac, achieved_frac = ratio(best[what], limit[what]), ratio(achieved[what], limit[what])
    report.publish_all({f"{what}_peak_{unit}": limit[what], f"{what}_best_{unit}": best[what],
                        f"{what}_achieved_{unit}": achieved[what],
                        f"{what}_best_frac": best_frac, f"{what}_achieved_frac": achieved_frac})

# %% tags=["finish"]
figures = report.finish()
