# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Do small operations gain from parallelism on one device? A size sweep with MXNet.

For matrix sizes from tiny to large, you measure on one device (a) two
independent jobs queued at once against each alone (on a GPU: both on its
context, spread by the engine over its worker streams; on the CPU: one on
cpu(0), one on cpu(1), two contexts of the same processor) and (b), on a GPU,
products next to device-to-host copies. Needs nothing but a CPU; uses the first
GPU that MXNet can use, if there is one. By default the GPU sweeps 64 ...
--size and the CPU 64 ... min(--size, 1024); --sizes 64,256,1024 sets the sizes
for both; --device gpu sweeps only the GPU.
"""

# %% tags=["setup"]
import helpers  # first: it lets MXNet 1.9.1 import under newer numpy
from helpers import fraction, seconds
from mxnet import np, npx
from common.keys import PARALLELISM_SWEEP
from common.options import size_list
from common.plots import draw_efficiency
from common.stats import overlap_efficiency, parallel_efficiency

npx.set_np()
PRODUCTS = 50  # products per job, as in auto_parallelism
CPU_LARGEST = 1024  # default largest CPU size: larger ones take long on a CPU


def add_sizes(parser):
    parser.add_argument("--sizes", type=size_list, help="comma-separated matrix sizes, e.g. 64,256,1024")


def default_sizes(largest):
    """Powers of two from 64 below ``largest``, then ``largest`` itself."""
    return sorted({n for n in (64, 128, 256, 512, 1024, 2048) if n < largest} | {largest})


options, report = helpers.start(__doc__, PARALLELISM_SWEEP, add_arguments=add_sizes)
gpus = helpers.gpus(options.device)
devices = gpus[:1] + ([] if options.device == "gpu" else [helpers.cpu()])  # --device gpu: the GPU only
sizes = {d: options.sizes or default_sizes(options.size if d in gpus else min(options.size, CPU_LARGEST))
         for d in devices}
if not gpus:
    print(f"{helpers.no_gpu_reason(options.device)}: sweeping the CPU only (two jobs = the contexts "
          "cpu(0) and cpu(1)); the copy overlap needs a GPU.")
for d in devices:
    print(f"{helpers.name(d)}: sizes {sizes[d]}, {PRODUCTS} products per job, TF32 off (fp32)")
if options.device != "gpu":
    print(helpers.CPU_THREADS_NOTE)
report.publish("devices", [helpers.name(d) for d in devices])

# %% tags=["sweep"]
def run(x):
    return [x.dot(x) for _ in range(PRODUCTS)]


def two_jobs(x, x_other):
    """Two independent jobs queued at once, on x's context and on x_other's; the engine runs them."""
    return helpers.run_concurrently([lambda: run(x), lambda: run(x_other)])


def copy_all(y, pinned):
    """Queue the copies of the results y into the pinned host buffers."""
    return [y_i.copyto(p) for p, y_i in zip(pinned, y)]


def measure_size(d, n):
    """One row of the table: device d, matrix size n."""
    x = helpers.rand(n, d)
    x_other = x if d in gpus else x.copyto(helpers.cpu(1))  # a GPU: the same context
    one = helpers.measure(lambda: run(x), [d], options.repeats)
    two = helpers.measure(lambda: two_jobs(x, x_other), [d], options.repeats)
    row = {"one": one, "two": two, "parallel_eff": parallel_efficiency([one, one], two),
           "copy": None, "both": None, "overlap_eff": None}
    if d in gpus:
        y = run(x)  # results to copy, computed once
        pinned = [np.empty(y_i.shape, dtype=y_i.dtype, ctx=npx.cpu_pinned()) for y_i in y]
        row["copy"] = helpers.measure(lambda: copy_all(y, pinned), [d], options.repeats)
        row["both"] = helpers.measure(lambda: (run(x), copy_all(y, pinned)), [d], options.repeats)
        row["overlap_eff"] = overlap_efficiency(one, row["copy"], row["both"])
    return row


table = {}  # (device, size) -> row
for d in devices:
    print(f"{helpers.name(d)}:\n{'size':>6} {'one job':>10} {'two at once':>12} {'parallel eff':>13}"
          f" {'copy':>10} {'run+copy':>10} {'overlap eff':>12}")
    for n in sizes[d]:
        row = table[d, n] = measure_size(d, n)
        print(f"{n:>6} {seconds(row['one']):>10} {seconds(row['two']):>12} "
              f"{fraction(row['parallel_eff']):>13} {seconds(row['copy']):>10} "
              f"{seconds(row['both']):>10} {fraction(row['overlap_eff']):>12}")
main = devices[0]  # the published figures: the GPU if there is one, else the CPU
small, large = table[main, sizes[main][0]], table[main, sizes[main][-1]]
report.publish_all({"sweep_sizes": sizes[main], "small_parallel_eff": small["parallel_eff"],
                    "large_parallel_eff": large["parallel_eff"], "small_overlap_eff": small["overlap_eff"],
                    "large_overlap_eff": large["overlap_eff"]})

# %% tags=["plot"]
curves = {}
for d in devices:
    kind = "one context" if d in gpus else "cpu(0) + cpu(1)"
    curves[f"{helpers.name(d)}: two jobs ({kind})"] = (sizes[d], [table[d, n]["parallel_eff"] for n in sizes[d]])
    if d in gpus:
        curves[f"{helpers.name(d)}: products + copies"] = (sizes[d], [table[d, n]["overlap_eff"]
                                                                       for n in sizes[d]])
fig = draw_efficiency(curves, title="Parallelism on one device")
report.figure(fig, "sweep")
figures = report.finish()
