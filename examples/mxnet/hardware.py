# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Hardware with MXNet: what the host's memory, its cores and the engine deliver, measured.

You learn what a copy in host memory moves per second (MXNet's take() costs
more than the memory does, so reads are timed in the PyTorch twin), what one
CPU context and all of them
together reach in matrix products, and what MXNet's engine costs per small
operation, issued and done. MXNet 1.9.1 cannot run kernels on today's GPUs
(its CUDA builds stop at compute capability 8.6), so the GPU rows of the
book's page are PyTorch's; this script runs on CPU contexts anywhere.
"""

# %% tags=["harness"]
import helpers  # first: it lets MXNet 1.9.1 import under newer numpy
from common.options import fail, note_unused
from common.stats import matmul_flops, median, rate, ratio, significant

options, report = helpers.start(__doc__, "hardware")
if options.device == "gpu":  # these rows run on CPU contexts only
    fail("--device gpu: MXNet's rows of this section run on CPU contexts; the GPU rows are the PyTorch "
         "twin's; use --device cpu or --device auto")
if options.size != "auto":  # these rows have fixed sizes
    note_unused(f"--size {options.size}", "it sizes the roofline's product, which only the PyTorch twin "
                "times, on a GPU")

# %% tags=["setup"]
from statistics import median

import helpers  # the book's devices and timer; first, for MXNet's imports
from mxnet import np

cpu = helpers.cpu()  # the host: its memory and its cores
big = np.ones(2**28)  # 1 GiB of fp32, far more than the CPU's caches

# %% tags=["setup-harness"]
print("MXNet runs these rows on CPU contexts; the GPU rows need PyTorch (MXNet 1.9.1 has no code "
      "for GPUs newer than compute capability 8.6).")
print(helpers.CPU_THREADS_NOTE)
report.publish_all({"devices": [helpers.name(cpu)], "host_threads": helpers.cpu_count()})

# %% tags=["host-memory"]
# MXNet's take() costs more per number than the memory does, so this tab
# times the copy only; the PyTorch tab also reads in order and at random.
out = np.empty_like(big)
copy = helpers.benchmark({"copy 1 GiB": lambda: big.copyto(out)},
                         cpu, repeats=3)

# %% tags=["host-memory-rates"]
host_gbps = 2 * big.size * 4 / median(*copy.values()) / 1e9
print(f"host copy: {host_gbps:.1f} GB/s, read + write; limit: none known")

# %% tags=["host-memory-harness"]
(t_copy,) = copy.values()
report.publish_timing("t_host_copy", t_copy)
report.publish_all({"host_copy_gbps": rate(2 * big.size * 4, median(t_copy), 1e9), "t_read_order": None,
                    "t_read_random": None, "slowdown_random_read": None})


# %% tags=["cpu-products"]
def on_contexts(count):  # a 1024x1024 product on each of count contexts
    return [a[i].dot(a[i]) for i in range(count)]


threads = helpers.cpu_count()  # a context, with its own worker, per core
a = [np.random.uniform(size=(1024, 1024), ctx=helpers.cpu(i))
     for i in range(threads)]
products = helpers.benchmark({
    "1024x1024 product, 1 thread": lambda: on_contexts(1),
    f"1024x1024 products, {threads} threads": lambda: on_contexts(threads),
}, cpu, repeats=3)

# %% tags=["cpu-rates"]
for count, t in zip((1, threads), products.values()):  # 2 n^3 FLOPs each
    gflops = count * 2 * 1024**3 / median(t) / 1e9
    print(f"{count} product(s) at once: {gflops:.0f} GFLOP/s")

# %% tags=["cpu-products-harness"]
(t_one, t_all), flops = products.values(), matmul_flops(1024)
gflops = {"one": rate(flops, median(t_one), 1e9), "all": rate(threads * flops, median(t_all), 1e9)}
report.publish_timing("t_cpu_mm_one", t_one)
report.publish_timing("t_cpu_mm_all", t_all)
report.publish_all({"cpu_mm_size": 1024, "cpu_one_gflops": gflops["one"], "cpu_all_gflops": gflops["all"],
                    "speedup_cpu_threads": ratio(gflops["all"], gflops["one"])})

# %% tags=["small-ops"]
small = np.zeros((64, 64))  # an operation on 4,096 numbers


def ops():  # 1000 small operations, one after another
    return [np.add(small, 1, out=small) for _ in range(1000)]


issued = helpers.benchmark({"Python issues one op": ops}, cpu,
                           wait=False, per=1000)
done = helpers.benchmark({"one op is done": ops}, cpu, per=1000)

# %% tags=["small-ops-harness"]
for key, samples in (("cpu_op_issue", issued["Python issues one op"]), ("cpu_op_done", done["one op is done"])):
    report.publish_timing(f"t_{key}", samples)
    report.publish(f"{key}_us", significant(median(samples) * 1e6))

# %% tags=["finish"]
figures = report.finish()
