# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Do small operations gain from parallelism on one device? A size sweep with PyTorch.

For matrix sizes from tiny to large, you measure on one device (a) two
independent jobs at once against one alone (two CUDA streams on a GPU, two
threads on the CPU) and (b), on a GPU, products next to device-to-host copies
on a side stream. Needs nothing but a CPU; uses the first GPU if there is one.
The GPU sweeps 64 ... --size (auto: 4000); the CPU sweeps 64 ... the size at
which one job takes about 0.2 s (at most 1024), or --size if given (at most
1024). --sizes 64,256,1024 sets the sizes for both; --device gpu sweeps only
the GPU.
"""

# %% tags=["setup"]
import torch

import helpers
from common.i18n import text
from common.machine import cpu_count
from common.options import CPU_JOB_SECONDS, GPU_SIZE, fail, no_gpu_reason, size_list
from common.report import sweep_table
from common.plots import draw_overlap, sweep_curves
from common.stats import median, overlap

CPU_LARGEST = 1024  # larger CPU sizes take long


def add_sizes(parser):
    parser.add_argument("--sizes", type=size_list, help="comma-separated matrix sizes, e.g. 64,256,1024")


def default_sizes(largest):
    """Powers of two from 64 below ``largest``, then ``largest`` itself."""
    return sorted({n for n in (64, 128, 256, 512, 1024, 2048) if n < largest} | {largest})


options, report = helpers.start(__doc__, "parallelism_sweep", add_arguments=add_sizes)
gpus = helpers.gpus(options.device)
devices = gpus[:1] + ([] if options.device == "gpu" else [helpers.cpu()])  # --device gpu: the GPU only
helpers.use_cpu_threads(cpu_count())  # one CPU job may use every core, as one GPU job may fill the GPU


def largest(d):
    """The largest size to sweep on device d: --size (on the CPU at most CPU_LARGEST), or for
    --size auto 4000 on a GPU and on the CPU the size at which one job takes about 0.2 s."""
    if options.size != "auto":
        return options.size if d.type == "cuda" else min(options.size, CPU_LARGEST)
    if d.type == "cuda":
        return GPU_SIZE
    return helpers.run_in_lane(0, lambda: helpers.cpu_size_for(CPU_JOB_SECONDS, helpers.PRODUCTS, CPU_LARGEST))


if not gpus and options.size != "auto" and options.size > CPU_LARGEST and not options.sizes:
    fail(f"--size {options.size}: the CPU sweep goes up to {CPU_LARGEST} at most (larger CPU sizes take "
         f"minutes); give --size {CPU_LARGEST} or less, or --sizes")
sizes = {d: options.sizes or default_sizes(largest(d)) for d in devices}
for d in devices:
    if d.type == "cpu" and options.size != "auto" and options.size > max(sizes[d]):
        print(f"{helpers.name(d)}: --size {options.size} is above the CPU's largest, {CPU_LARGEST}; "
              f"the CPU sweep stops at {max(sizes[d])}")
print(f"size: {max(sizes[devices[0]])} (the largest size swept on {helpers.name(devices[0])})")
report.publish("size", max(sizes[devices[0]]))
if not gpus:
    print(f"{no_gpu_reason(options.device)}: sweeping the CPU only (two jobs = two threads); "
          "the copy overlap needs a GPU.")
for d in devices:
    print(f"{helpers.name(d)}: sizes {sizes[d]}, {helpers.PRODUCTS} products per job, TF32 off (fp32)")
report.publish("devices", [helpers.name(d) for d in devices])


def run(x):
    """One job: 50 independent products of x with itself."""
    return [x.mm(x) for _ in range(helpers.PRODUCTS)]


# %% tags=["streams"]
def two_jobs(x, streams):
    """Two independent jobs at once, one per CUDA stream."""
    results = []
    for stream in streams:
        with torch.cuda.stream(stream):
            results.append(run(x))
    return results  # kept until the device is synchronized


def copy_all(ys, pinned, stream):
    """Copy the results ys into pinned host buffers on a side stream."""
    with torch.cuda.stream(stream):
        for p, y in zip(pinned, ys):
            p.copy_(y, non_blocking=True)


# %% tags=["sweep"]
def measure_size(d, n, streams):
    """One row of the table: device d, matrix size n; the cases are timed in turns."""
    x = helpers.rand(n, d)
    if d.type == "cpu":  # each job from its own thread, alone and together
        cases = {"one": {0: lambda: run(x)}, "two": {0: lambda: run(x), 1: lambda: run(x)}}
    else:
        y = run(x)  # results to copy, computed once
        pinned = [torch.empty(y_i.shape, pin_memory=True) for y_i in y]
        cases = {"one": lambda: run(x), "two": lambda: two_jobs(x, streams),
                 "copy": lambda: copy_all(y, pinned, streams[1]),
                 "both": lambda: (run(x), copy_all(y, pinned, streams[1]))}
    times = {case: median(samples) for case, samples in helpers.measure(cases, [d]).items()}
    row = {"one": times["one"], "two": times["two"], "copy": times.get("copy"), "both": times.get("both"),
           "overlap_two": overlap([times["one"]] * 2, times["two"])}
    row["overlap_copy"] = overlap([row["one"], row["copy"]], row["both"]) if "copy" in times else None
    return row


table = {}  # (device, size) -> row
for d in devices:
    streams = [torch.cuda.Stream(d) for _ in range(2)] if d.type == "cuda" else None
    rows = {n: measure_size(d, n, streams) for n in sizes[d]}
    table.update({(d, n): row for n, row in rows.items()})
    report.text(lambda lang: f"{helpers.name(d)}:\n{sweep_table(rows, d.type == 'cuda', lang)}")
main = devices[0]  # the published figures: the GPU if there is one, else the CPU
small, large = table[main, sizes[main][0]], table[main, sizes[main][-1]]
report.publish_all({"sweep_sizes": sizes[main], "small_overlap_streams": small["overlap_two"],
                    "large_overlap_streams": large["overlap_two"], "small_overlap_copies": small["overlap_copy"],
                    "large_overlap_copies": large["overlap_copy"]})
cpu = next((d for d in devices if d.type == "cpu"), None)
report.publish_all({"cpu_small_overlap": table[cpu, sizes[cpu][0]]["overlap_two"] if cpu else None,
                    "cpu_large_overlap": table[cpu, sizes[cpu][-1]]["overlap_two"] if cpu else None})


# %% tags=["plot"]
def draw(lang):
    curves = {}
    for d in devices:
        label, on_gpu = helpers.name(d), d.type == "cuda"
        curves.update(sweep_curves({n: table[d, n] for n in sizes[d]},
                                   text(lang, "two_streams" if on_gpu else "two_threads", device=label),
                                   text(lang, "products_copies", device=label) if on_gpu else None))
    return draw_overlap(curves, lang, title=text(lang, "sweep_title"))


report.figure(draw, "sweep")

# %% tags=["finish"]
figures = report.finish()
