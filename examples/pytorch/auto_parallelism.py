# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Automatic parallelism with PyTorch: several devices, and compute next to copies.

You learn that independent jobs on different devices run at the same time
from one Python thread when the GPU's work is queued first and nothing waits
for it in between (a GPU call only queues its work), and why a
device-to-host copy overlaps the compute on one GPU only with a side stream,
pinned buffers and events. Needs nothing but a CPU, where the two jobs run
one after the other and the script then says so and stops where the copies
begin; with 1 GPU the GPU works next to the CPU and the copy experiments run;
with 2 or more GPUs the first two work side by side. The
default size on a GPU (4000) needs about 14 GB of GPU memory; pass a smaller
--size on smaller GPUs.
"""

# %% tags=["harness"]
import helpers
from common.i18n import text
from common.stats import matmul_flops, median, overlap, rate, ratio, speedup

options, report = helpers.start(__doc__, "auto_parallelism")

# %% tags=["setup"]
from statistics import median

import torch

import helpers  # the book's devices and timer

devices = helpers.two_devices()  # two GPUs, a GPU and the CPU, or the CPU
sizes = helpers.job_sizes(devices)  # the CPU's job sized to match the GPU's
xs = [torch.rand(n, n, device=d) for n, d in zip(sizes, devices)]

# %% tags=["setup-harness"]
gpus = [d for d in devices if d.type == "cuda"]
mode = "multi-gpu" if len(gpus) == 2 else "gpu+cpu" if gpus else "cpu"
names = [helpers.name(d, i if mode == "cpu" else None) for i, d in enumerate(devices)]
cpu_threads = torch.get_num_threads() if mode != "multi-gpu" else None
print("TF32 is off: every product is fp32.")
report.publish_all({"size": sizes[0], "mode": mode, "n_gpus": len(helpers.gpus(options.device)),
                    "devices": sorted({helpers.name(d) for d in devices}),
                    "products": helpers.PRODUCTS, "cpu_threads": cpu_threads, "job_sizes": sizes})


# %% tags=["jobs"]
def run(x):
    """The job: 50 independent products of x with itself."""
    return [x.mm(x) for _ in range(50)]


for i, x in enumerate(xs):
    print(f"job {i}: 50 products of {len(x)}×{len(x)} on {x.device}")


# %% tags=["together"]
def together():
    """Both jobs, one after the other, from this one thread."""
    return run(xs[0]) + run(xs[1])


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


# %% tags=["timeline-devices"]
def spans_of(lanes):
    """Run the jobs of ``lanes`` as ``together`` does, once, and return when each ran."""
    timeline = helpers.Timeline(devices)
    wrapped = [timeline.wrap(str(i), devices[i], lambda i=i: run(xs[i])) for i in lanes]
    helpers.measure({"spans": lambda: [y for job in wrapped for y in job()]},
                    devices, repeats=1, warmup=0)
    return timeline.spans()


def row(lang, i):
    return text(lang, "cpu_job", i=i) if mode == "cpu" else names[i].split(" ")[0]


alone_spans = spans_of([0]) + spans_of([1])
together_spans = spans_of([0, 1])
report.figure(lambda lang: helpers.draw_timeline(
    {text(lang, "alone"): [s._replace(row=row(lang, int(s.row))) for s in alone_spans],
     text(lang, "together"): [s._replace(row=row(lang, int(s.row))) for s in together_spans]},
    lang), "timeline-devices")

# %% tags=["copies", "raises-exception"]
gpu = helpers.gpu()  # what follows needs a GPU: it stops without one
ys = run(xs[0])  # 50 results on the GPU to copy
pageable = [torch.empty(y.shape) for y in ys]  # allocated once
pinned = [torch.empty(y.shape, pin_memory=True) for y in ys]  # and pinned
copies = helpers.benchmark({
    "fresh .to('cpu')": lambda: [y.to("cpu") for y in ys],
    "into pageable buffers": lambda: [
        p.copy_(y) for p, y in zip(pageable, ys)],
    "into pinned buffers": lambda: [
        p.copy_(y, non_blocking=True) for p, y in zip(pinned, ys)],
}, gpu, repeats=2)

# %% tags=["copies-harness"]
for key, samples in zip(["t_copy_fresh", "t_copy_pageable", "t_copy_pinned"], copies.values()):
    report.publish_timing(key, samples)
nbytes = sum(y.numel() * y.element_size() for y in ys)
report.publish("copy_gbps", rate(nbytes, median(copies["into pinned buffers"]), 1e9))


# %% tags=["same-stream"]
def run_then_copy():
    ys = run(xs[0])
    for p, y in zip(pinned, ys):
        p.copy_(y, non_blocking=True)  # queued behind all the products
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
copy_stream = torch.cuda.Stream(gpu)  # a second queue on the GPU

def run_and_copy(inputs, wait=True):
    ys = []
    for a, p in zip(inputs, pinned):
        ys.append(a.mm(a))  # on the compute stream
        if wait:  # the copy waits until its product is done
            copy_stream.wait_event(torch.cuda.current_stream().record_event())
        with torch.cuda.stream(copy_stream):
            p.copy_(ys[-1], non_blocking=True)
        ys[-1].record_stream(copy_stream)  # keep its memory until copied
    return ys

# %% tags=["side-stream-time"]
side = helpers.benchmark({"products, copies on a side stream":
                          lambda: run_and_copy([xs[0]] * 50)}, gpu)

t_both = median(side["products, copies on a side stream"])
print(f"overlap: {(t_run + t_copy - t_both) / min(t_run, t_copy):.2f}")

# %% tags=["side-stream-harness"]
report.publish_timing("t_run_copy_streams", side["products, copies on a side stream"])
report.publish("overlap_side_stream", overlap([t_run, t_copy], t_both))

# %% tags=["check"]
correct = {}
for wait in (True, False):
    for p in pinned:
        p.zero_()  # clear what earlier runs left in the buffers
    inputs = [torch.rand_like(xs[0]) for _ in pinned]  # distinct data
    ys = run_and_copy(inputs, wait)
    torch.cuda.synchronize(gpu)  # the host may read pinned only now
    correct[wait] = sum(torch.equal(p.to(gpu), y) for p, y in zip(pinned, ys))
    print(f"wait={wait}: {correct[wait]} of {len(ys)} copies are right")

# %% tags=["check-harness"]
report.publish_all({"copies_correct": correct[True], "copies_correct_no_wait": correct[False]})

# %% tags=["timeline-copy"]
inputs = [xs[0]] * len(pinned)
one_stream = helpers.copy_spans(inputs, pinned)
two_streams = helpers.copy_spans(inputs, pinned, copy_stream)
copy_seconds = [s.end - s.start for s in two_streams if s.label == "copy"]
link_achieved = rate(ys[0].numel() * ys[0].element_size(), median(copy_seconds), 1e9)


def localized(spans, lang):
    return [s._replace(row=text(lang, s.row), label=text(lang, s.label)) for s in spans]


report.figure(lambda lang: helpers.draw_timeline(
    {text(lang, "one_stream"): localized(one_stream, lang),
     text(lang, "side_stream"): localized(two_streams, lang)},
    lang, title=names[0], color_by="label"), "timeline-copy")

# %% tags=["limits-setup"]
import helpers  # the book's devices and limits

gpu = helpers.gpu()  # this section needs a GPU

# %% tags=["limits"]
limit = helpers.peak_rates(gpu)  # from the hardware, through NVML
best = helpers.best_rates(gpu)  # large copies and products, CUDA events
for what, unit in (("link", "GB/s"), ("fp32", "TFLOP/s")):
    print(f"{what} ({unit}): limit {limit[what]:.1f}, best measured "
          f"{best[what]:.1f}, best / limit {best[what] / limit[what]:.2f}")

# %% tags=["limits-harness"]
achieved = {"link": link_achieved,  # the side stream's copies, overlapped
            "fp32": matmul_flops(sizes[0], 50) / t_run / 1e12}
for what, unit in (("link", "gbps"), ("fp32", "tflops")):
    best_frac, achieved_frac = ratio(best[what], limit[what]), ratio(achieved[what], limit[what])
    report.publish_all({f"{what}_peak_{unit}": limit[what], f"{what}_best_{unit}": best[what],
                        f"{what}_achieved_{unit}": achieved[what],
                        f"{what}_best_frac": best_frac, f"{what}_achieved_frac": achieved_frac})

# %% tags=["finish"]
figures = report.finish()
