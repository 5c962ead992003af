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
or more GPUs the first two work side by side. --size auto: 4000 on a GPU, on
CPU contexts the size at which the 50 products take about 0.2 s.
"""

# %% tags=["setup"]
import helpers  # first: it lets MXNet 1.9.1 import under newer numpy
from mxnet import np, npx
from common.keys import AUTO_PARALLELISM
from common.stats import matmul_flops, median, overlap_efficiency, parallel_efficiency, rate, ratio

options, report = helpers.start(__doc__, AUTO_PARALLELISM)
gpus, no_gpu = helpers.gpus(options.device), helpers.no_gpu_reason(options.device)
gpu = gpus[0] if gpus else None
if len(gpus) >= 2:
    mode, devices, cpu_threads = "multi-gpu", gpus[:2], None
    print("2 or more GPUs: one job on each of the first two.")
elif gpus:
    mode, devices, cpu_threads = "gpu+cpu", [gpu, helpers.cpu()], helpers.CPU_THREADS
    print("1 GPU: one job on the GPU and one on cpu(0), sized to take about as long.")
else:
    mode, devices, cpu_threads = "cpu", [helpers.cpu(0), helpers.cpu(1)], helpers.CPU_THREADS
    print(f"{no_gpu}: two jobs on the CPU contexts cpu(0) and cpu(1), two names for the same "
          "processor; all figures are CPU figures.")
if cpu_threads:
    print(helpers.CPU_THREADS_NOTE)
names = [helpers.name(d) for d in devices]
print("TF32 is off: every product is fp32.")
size = helpers.choose_size(options, report, devices[0])
sizes = [size, helpers.cpu_size_like_gpu(gpu, size) if mode == "gpu+cpu" else size]
report.publish_all({"mode": mode, "n_gpus": len(gpus), "devices": sorted(set(names)),
                    "products": helpers.PRODUCTS, "cpu_threads": cpu_threads, "job_sizes": sizes})


# %% tags=["jobs"]
def run(x):
    """The job: 50 independent products of x with itself."""
    return [x.dot(x) for _ in range(50)]


xs = [np.random.uniform(size=(n, n), ctx=d) for n, d in zip(sizes, devices)]
jobs = [lambda: run(xs[0]), lambda: run(xs[1])]  # one job per device
for name, x in zip(names, xs):
    print(f"{name}: 50 products of {x.shape[0]}x{x.shape[0]}")

# %% tags=["together"]
def together():
    """Both jobs, product by product, from this one thread."""
    return [x.dot(x) for _ in range(50) for x in xs]


times = helpers.benchmark({f"{names[0]} alone": jobs[0],
                           f"{names[1]} alone": jobs[1],
                           "both together": together}, devices)

# %% tags=["together-harness"]
alone_0, alone_1, both = times.values()
parallel_eff = parallel_efficiency([median(alone_0), median(alone_1)], median(both))
print(f"parallel efficiency, max(alone) / together: {helpers.fraction(parallel_eff)}")
shared = [helpers.overlap_seconds(spans) for spans in both.spans]
print("MXNet's profiler, both together: the jobs computed at the same time for\n"
      f"  {helpers.timing([s for s, _ in shared])} of {helpers.timing([t for _, t in shared])}")
for key, samples in (("t_alone_0", alone_0), ("t_alone_1", alone_1), ("t_together", both)):
    report.publish_timing(key, samples)
report.publish("parallel_eff", parallel_eff)

# %% tags=["timeline-devices"]
rows = {helpers.profiler_row(d): name.split(" ")[0] for d, name in zip(devices, names)}


def on_rows(spans):  # the last timed run of a case, one row per context
    return [s._replace(row=rows[s.row]) for s in spans if s.row in rows]


report.figure(lambda lang: helpers.draw_timeline(
    {helpers.text(lang, "alone"): on_rows(alone_0.spans[-1] + alone_1.spans[-1]),
     helpers.text(lang, "together"): on_rows(both.spans[-1])}, lang), "timeline-devices")

# %% tags=["copies"]
if gpus:
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
    }, gpu, repeats=3)

# %% tags=["copies-harness"]
if gpus:
    for key, samples in zip(["t_copy_fresh", "t_copy_pageable", "t_copy_pinned"], copies.values()):
        report.publish_timing(key, samples)
    nbytes = sum(y.size * y.dtype.itemsize for y in ys)
    report.publish("copy_gbps", rate(nbytes, median(copies["into pinned buffers"]), 1e9))
else:
    print(f"{no_gpu}: the copy timings need a GPU and are left out.")


# %% tags=["same-stream"]
def run_then_copy():
    ys = run(xs[0])
    for p, y in zip(pinned, ys):
        y.copyto(p)  # queued after all the products, waits only for y
    return ys


if gpus:
    runs = helpers.benchmark({"products alone": lambda: run(xs[0]),
                              "products, then copies": run_then_copy}, gpu)

# %% tags=["same-stream-harness"]
if gpus:
    t_run, t_same = runs.values()
    t_pinned = copies["into pinned buffers"]
    overlap_eff_same_stream = overlap_efficiency(median(t_run), median(t_pinned), median(t_same))
    print(f"overlap efficiency, max(products, copies) / both: {helpers.fraction(overlap_eff_same_stream)}")
    report.publish_timing("t_run", t_run)
    report.publish_timing("t_run_copy_same_stream", t_same)
    report.publish("overlap_eff_same_stream", overlap_eff_same_stream)


# %% tags=["side-stream"]
def run_and_copy(inputs):
    ys = []
    for a, p in zip(inputs, pinned):
        ys.append(a.dot(a))
        ys[-1].copyto(p)  # the engine starts it when the product is done
    return ys

# %% tags=["side-stream-harness"]
if gpus:
    side = helpers.benchmark({"products, each copy queued after its product":
                              lambda: run_and_copy([xs[0]] * len(pinned))}, gpu)
    (t_side,) = side.values()
    overlap_eff = overlap_efficiency(median(t_run), median(t_pinned), median(t_side))
    print(f"overlap efficiency, max(products, copies) / both: {helpers.fraction(overlap_eff)}")
    report.publish_timing("t_run_copy_streams", t_side)
    report.publish("overlap_eff", overlap_eff)
else:  # the check below still runs: products on cpu(0), copies into host buffers
    pinned = [np.empty(xs[0].shape, ctx=npx.cpu_pinned()) for _ in range(50)]

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
if gpus:
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
else:
    print(f"{no_gpu}: no copy timeline.")

# %% tags=["limits"]
if gpus:
    peak = helpers.peak_rates(gpu)  # from the hardware, through NVML
    best = helpers.best_rates(gpu)  # large copies and products, profiler
    achieved = {"link": link_achieved,  # the copies next to the products
                "fp32": matmul_flops(size, 50) / median(t_run) / 1e12}
    for what, unit in (("link", "GB/s"), ("fp32", "TFLOP/s")):
        print(f"{what} ({unit}): peak {peak[what]:.1f}, best measured "
              f"{best[what]:.1f}, achieved {achieved[what]:.1f}")

# %% tags=["limits-harness"]
if gpus:
    for what, unit in (("link", "gbps"), ("fp32", "tflops")):
        best_frac, achieved_frac = ratio(best[what], peak[what]), ratio(achieved[what], peak[what])
        print(f"{what}: best / peak {helpers.fraction(best_frac)}, "
              f"achieved / peak {helpers.fraction(achieved_frac)}")
        report.publish_all({f"{what}_peak_{unit}": peak[what], f"{what}_best_{unit}": best[what],
                            f"{what}_achieved_{unit}": achieved[what],
                            f"{what}_best_frac": best_frac, f"{what}_achieved_frac": achieved_frac})
else:
    print(f"{no_gpu}: no link or GPU compute rates to compare.")

# %% tags=["finish"]
figures = report.finish()
