# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Do small operations gain from parallelism on one device? A size sweep with MXNet.

For matrix sizes from tiny to large, you measure on one device (a) two
independent jobs queued at once against one alone (on a GPU: both on its
context, spread by the engine over its worker streams; on the CPU: one on
cpu(0), one on cpu(1), two contexts of the same processor) and (b), on a GPU,
products next to device-to-host copies. Needs nothing but a CPU; uses the
first GPU that MXNet can use, if there is one. The GPU sweeps 64 ... --size
(auto: 4000); the CPU sweeps 64 ... the size at which one job takes about
0.2 s (at most 1024), or --size if given (at most 1024). --sizes 64,256,1024
sets the sizes for both; --device gpu sweeps only the GPU.
"""

# %% tags=["setup"]
import helpers  # first: it lets MXNet 1.9.1 import under newer numpy
from mxnet import np, npx
from common.options import CPU_JOB_SECONDS, GPU_SIZE, fail, size_list
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


def largest(d):
    """The largest size to sweep on device d: --size (on the CPU at most CPU_LARGEST), or for
    --size auto 4000 on a GPU and on the CPU the size at which one job takes about 0.2 s."""
    if options.size != "auto":
        return options.size if d in gpus else min(options.size, CPU_LARGEST)
    if d in gpus:
        return GPU_SIZE
    return helpers.cpu_size_for(CPU_JOB_SECONDS, helpers.PRODUCTS, CPU_LARGEST, d)


if not gpus and options.size != "auto" and options.size > CPU_LARGEST and not options.sizes:
    fail(f"--size {options.size}: the CPU sweep goes up to {CPU_LARGEST} at most (larger CPU sizes take "
         f"minutes); give --size {CPU_LARGEST} or less, or --sizes")
sizes = {d: options.sizes or default_sizes(largest(d)) for d in devices}
for d in devices:
    if d not in gpus and options.size != "auto" and options.size > max(sizes[d]):
        print(f"{helpers.name(d)}: --size {options.size} is above the CPU's largest, {CPU_LARGEST}; "
              f"the CPU sweep stops at {max(sizes[d])}")
print(f"size: {max(sizes[devices[0]])} (the largest size swept on {helpers.name(devices[0])})")
report.publish("size", max(sizes[devices[0]]))
if not gpus:
    print(f"{helpers.no_gpu_reason(options.device)}: sweeping the CPU only (two jobs = the contexts "
          "cpu(0) and cpu(1)); the copy overlap needs a GPU.")
for d in devices:
    print(f"{helpers.name(d)}: sizes {sizes[d]}, {helpers.PRODUCTS} products per job, TF32 off (fp32)")
if options.device != "gpu":
    print(helpers.CPU_THREADS_NOTE)
report.publish("devices", [helpers.name(d) for d in devices])


def run(x):
    """One job: 50 independent products of x with itself."""
    return [x.dot(x) for _ in range(helpers.PRODUCTS)]


# %% tags=["streams"]
def two_jobs(x, x_other):
    """Two jobs, queued product by product, run side by side."""
    return [a.dot(a) for _ in range(50) for a in (x, x_other)]


def copy_all(ys, pinned):
    """Queue the copies of the results ys into pinned host buffers."""
    return [y.copyto(p) for p, y in zip(pinned, ys)]


# %% tags=["sweep"]
def measure_size(d, n):
    """One row of the table: device d, matrix size n; the cases are timed in turns."""
    x = helpers.rand(n, d)
    x_other = x if d in gpus else x.copyto(helpers.cpu(1))  # a GPU: the same context
    cases = {"one": lambda: run(x), "two": lambda: two_jobs(x, x_other)}
    if d in gpus:
        y = run(x)  # results to copy, computed once
        pinned = [np.empty(y_i.shape, ctx=npx.cpu_pinned()) for y_i in y]
        cases.update({"copy": lambda: copy_all(y, pinned), "both": lambda: (run(x), copy_all(y, pinned))})
    times = {case: median(samples) for case, samples in helpers.measure(cases, [d]).items()}
    row = {"one": times["one"], "two": times["two"], "copy": times.get("copy"), "both": times.get("both"),
           "overlap_two": overlap([times["one"]] * 2, times["two"])}
    row["overlap_copy"] = overlap([row["one"], row["copy"]], row["both"]) if "copy" in times else None
    return row


table = {}  # (device, size) -> row
for d in devices:
    rows = {n: measure_size(d, n) for n in sizes[d]}
    table.update({(d, n): row for n, row in rows.items()})
    report.text(lambda lang: f"{helpers.name(d)}:\n{sweep_table(rows, d in gpus, lang)}")
main = devices[0]  # the published figures: the GPU if there is one, else the CPU
small, large = table[main, sizes[main][0]], table[main, sizes[main][-1]]
report.publish_all({"sweep_sizes": sizes[main], "small_overlap_streams": small["overlap_two"],
                    "large_overlap_streams": large["overlap_two"], "small_overlap_copies": small["overlap_copy"],
                    "large_overlap_copies": large["overlap_copy"]})
cpu = next((d for d in devices if d not in gpus), None)
report.publish_all({"cpu_small_overlap": table[cpu, sizes[cpu][0]]["overlap_two"] if cpu else None,
                    "cpu_large_overlap": table[cpu, sizes[cpu][-1]]["overlap_two"] if cpu else None})


# %% tags=["plot"]
def draw(lang):
    curves = {}
    for d in devices:
        label, on_gpu = helpers.name(d), d in gpus
        curves.update(sweep_curves({n: table[d, n] for n in sizes[d]},
                                   helpers.text(lang, "one_context" if on_gpu else "two_contexts", device=label),
                                   helpers.text(lang, "products_copies", device=label) if on_gpu else None))
    return draw_overlap(curves, lang, title=helpers.text(lang, "sweep_title"))


report.figure(draw, "sweep")

# %% tags=["finish"]
figures = report.finish()
