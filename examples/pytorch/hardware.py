# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

"""Hardware with PyTorch: the numbers every deep learning programmer should know, measured.

You learn what the host's memory and cores deliver, what one small GPU
operation, a synchronize, an .item() and a small copy cost, how fast device
memory, the L2 cache and the host link move data, and what matrix products
reach in fp32, TF32, bf16, fp16 and fp8; each rate beside the limit that the
hardware itself gives (NVML and the device properties), with its formula, and
the chapter's workloads on a roofline. Needs nothing but a CPU for the host
rows; without a GPU the script says so and stops where the GPU rows begin.
fp8 products need compute capability 8.9 or newer. --size n|auto: the side of
the chapter's fp32 product placed on the roofline (4000 on a GPU).
"""

# %% tags=["harness"]
import helpers
from common.options import note_unused
from common.roofline import draw_roofline, gelu_times, roofline_points
from common.stats import matmul_flops, median, rate, ratio, significant

options, report = helpers.start(__doc__, "hardware")
if options.size != "auto" and not helpers.gpus(options.device):  # the host rows have fixed sizes
    note_unused(f"--size {options.size}", "it sizes the roofline's product, which needs a GPU")


# %% tags=["setup"]
from statistics import median

import torch

import helpers  # the book's devices and timer

cpu = helpers.cpu()  # the host first: its memory and its cores
big = torch.ones(2**28)  # 1 GiB of fp32, far more than the CPU's caches

# %% tags=["setup-harness"]
report.publish_all({"devices": [helpers.name(d) for d in [cpu, *helpers.gpus(options.device)]],
                    "host_threads": helpers.cpu_count()})

# %% tags=["host-memory"]
out = torch.empty_like(big)
blocks = iter(big.view(64, 2**22))  # a fresh 16 MiB block for each read
order = torch.arange(2**22)  # 4 Mi numbers, one after another
scattered = iter(torch.randint(big.numel(), (8, 2**22)))  # fresh ones anywhere
copy = helpers.benchmark({"copy 1 GiB": lambda: out.copy_(big)},
                         cpu, repeats=3)
reads = helpers.benchmark({
    "read 1000 numbers in order": lambda: next(blocks).take(order).sum(),
    "read 1000 numbers at random": lambda: big.take(next(scattered)).sum(),
}, cpu, per=order.numel() / 1000, repeats=3)

# %% tags=["host-memory-rates"]
host_gbps = 2 * big.numel() * 4 / median(*copy.values()) / 1e9
t_order, t_random = (median(t) for t in reads.values())
print(f"host copy: {host_gbps:.1f} GB/s, read + write; limit: none known")
print(f"at random, a read took {t_random / t_order:.0f} times as long")

# %% tags=["host-memory-harness"]
(t_copy,), (t_order, t_random) = copy.values(), reads.values()
host_copy_gbps = rate(2 * big.numel() * 4, median(t_copy), 1e9)  # read + write
slowdown_random_read = ratio(median(t_random), median(t_order))
for key, samples in (("t_host_copy", t_copy), ("t_read_order", t_order), ("t_read_random", t_random)):
    report.publish_timing(key, samples)
report.publish_all({"host_copy_gbps": host_copy_gbps, "slowdown_random_read": slowdown_random_read})


# %% tags=["cpu-products"]
def on_threads(count):  # one product of 1024x1024 matrices on count threads
    torch.set_num_threads(count)
    return a @ a


a, threads = torch.rand(1024, 1024), helpers.cpu_count()  # all cores
products = helpers.benchmark({
    "1024x1024 product, 1 thread": lambda: on_threads(1),
    f"1024x1024 product, {threads} threads": lambda: on_threads(threads),
}, cpu, repeats=3)

# %% tags=["cpu-rates"]
for label, t in products.items():  # 2 n^3 FLOPs per product
    print(f"{label}: {2 * 1024**3 / median(t) / 1e9:.0f} GFLOP/s")

# %% tags=["cpu-products-harness"]
(t_one, t_all), flops = products.values(), matmul_flops(1024)
gflops = {"one": rate(flops, median(t_one), 1e9), "all": rate(flops, median(t_all), 1e9)}
report.publish_timing("t_cpu_mm_one", t_one)
report.publish_timing("t_cpu_mm_all", t_all)
report.publish_all({"cpu_mm_size": 1024, "cpu_one_gflops": gflops["one"], "cpu_all_gflops": gflops["all"],
                    "speedup_cpu_threads": ratio(gflops["all"], gflops["one"])})

# %% tags=["small-ops"]
small = torch.zeros(64, 64)  # an operation on 4,096 numbers


def ops():  # 1000 small operations, one after another
    return [torch.add(small, 1, out=small) for _ in range(1000)]


issued = helpers.benchmark({"Python issues one op": ops}, cpu,
                           wait=False, per=1000)
done = helpers.benchmark({"one op is done": ops}, cpu, per=1000)

# %% tags=["small-ops-harness"]
print("CPU: eager PyTorch runs each operation before the call returns, so issuing one is running it.")
for key, samples in (("cpu_op_issue", issued["Python issues one op"]), ("cpu_op_done", done["one op is done"])):
    report.publish_timing(f"t_{key}", samples)
    report.publish(f"{key}_us", significant(median(samples) * 1e6))

# %% tags=["gpu-setup", "raises-exception"]
gpu = helpers.gpu()  # what follows needs a GPU: it stops without one
tiny = torch.zeros(64, 64, device=gpu)  # small operations, as above
one = torch.zeros(1, device=gpu)
pinned_one = torch.zeros(1, pin_memory=True)  # 4 bytes of host memory


# %% tags=["launch"]
def gpu_ops():  # 1000 small kernels, one after another
    return [torch.add(tiny, 1, out=tiny) for _ in range(1000)]


issued = helpers.benchmark({"Python issues one op": gpu_ops}, gpu,
                           wait=False, per=1000)
gaps = helpers.device_benchmark({"the GPU runs one op": gpu_ops}, gpu,
                                per=1000)

# %% tags=["round-trips"]
trips = helpers.benchmark({
    "one op, then synchronize": lambda: (
        torch.add(tiny, 1, out=tiny), torch.cuda.synchronize(gpu)),
    ".item() of one number": lambda: one.item(),
    "copy 4 bytes to the GPU": lambda: one.copy_(pinned_one,
                                                  non_blocking=True),
}, gpu)

# %% tags=["round-trips-harness"]
for key, samples in zip(("gpu_op_issue", "gpu_op_gpu", "sync", "item", "h2d_small"),
                        [*issued.values(), *gaps.values(), *trips.values()]):
    report.publish_timing(f"t_{key}", samples)
    if key.startswith("gpu_op"):  # the latencies that the prose quotes
        report.publish(f"{key}_us", significant(median(samples) * 1e6))

# %% tags=["device-memory"]
src = torch.rand(2**28, device=gpu)  # 2^28 fp32 numbers: 1 GiB
dst = torch.empty_like(src)
l2 = torch.cuda.get_device_properties(gpu).L2_cache_size  # in bytes
src_l2, dst_l2 = src[: l2 // 16], dst[: l2 // 16]  # a quarter of it each
memory = helpers.device_benchmark(
    {"copy 1 GiB on the GPU": lambda: dst.copy_(src)}, gpu)
cache = helpers.device_benchmark({"copy within the L2 cache": lambda: [
    dst_l2.copy_(src_l2) for _ in range(100)]}, gpu, per=100)

# %% tags=["memory-limit"]
limits = helpers.limits(gpu)  # {name: (value, formula)}, from the hardware
gbps = 2 * src.numel() * 4 / median(*memory.values()) / 1e9  # read + write
l2_gbps = 2 * src_l2.numel() * 4 / median(*cache.values()) / 1e9
print(f"copy 1 GiB on the GPU: {gbps:.0f} GB/s;",
      helpers.against_limit(gbps, limits["memory_peak_gbps"], "GB/s"))
print(f"copy within the L2 cache ({l2 / 2**20:.0f} MiB): {l2_gbps:.0f} GB/s")

# %% tags=["device-memory-harness"]
(t_memory,), (t_l2,) = memory.values(), cache.values()
memory_gbps = rate(2 * src.numel() * 4, median(t_memory), 1e9)  # read + write
memory_peak = limits["memory_peak_gbps"][0]
report.publish_timing("t_memory_copy", t_memory)
report.publish_timing("t_l2_copy", t_l2)
report.publish_all({"memory_copy_gbps": memory_gbps, "memory_peak_gbps": memory_peak,
                    "memory_frac": ratio(memory_gbps, memory_peak), "l2_mib": l2 / 2**20,
                    "l2_copy_gbps": l2_gbps, "speedup_l2_copy": ratio(l2_gbps, memory_gbps)})
del src, dst, src_l2, dst_l2

# %% tags=["link"]
host = torch.empty(2**26)  # 256 MiB of pageable host memory
pinned = torch.empty(2**26, pin_memory=True)  # and of pinned memory
dev = torch.empty(2**26, device=gpu)
link = helpers.benchmark({
    "to the GPU, pageable": lambda: dev.copy_(host),
    "to the GPU, pinned": lambda: dev.copy_(pinned, non_blocking=True),
    "from the GPU, pageable": lambda: host.copy_(dev),
    "from the GPU, pinned": lambda: pinned.copy_(dev, non_blocking=True),
}, gpu)

# %% tags=["link-limit"]
for label, t in link.items():
    gbps = host.numel() * 4 / median(t) / 1e9
    print(f"{label}: {gbps:.1f} GB/s;",
          helpers.against_limit(gbps, limits["link_peak_gbps"], "GB/s"))

# %% tags=["link-harness"]
link_peak = limits["link_peak_gbps"][0]
gbps = {}
for key, samples in zip(("h2d_pageable", "h2d_pinned", "d2h_pageable", "d2h_pinned"), link.values()):
    report.publish_timing(f"t_{key}", samples)
    gbps[key] = rate(host.numel() * 4, median(samples), 1e9)
    report.publish(f"{key}_gbps", gbps[key])
for direction in ("h2d", "d2h"):
    report.publish(f"{direction}_pinned_frac", ratio(gbps[f"{direction}_pinned"], link_peak))
    report.publish(f"slowdown_pageable_{direction}", ratio(gbps[f"{direction}_pinned"], gbps[f"{direction}_pageable"]))
report.publish("link_peak_gbps", link_peak)
del host, pinned, dev

# %% tags=["products"]
x = torch.rand(8192, 8192, device=gpu)  # large products: the best case
x16, xb = x.half(), x.bfloat16()
products = helpers.device_benchmark({
    "fp32": lambda: x @ x,
    "tf32": lambda: helpers.tf32(torch.mm, x, x),  # 10-bit mantissas
    "bf16": lambda: xb @ xb,
    "fp16": lambda: x16 @ x16,
    **helpers.fp8_case(x),  # only where the GPU has fp8 (8.9 or newer)
}, gpu)

# %% tags=["products-limit"]
for precision, t in products.items():
    tflops = 2 * 8192**3 / median(t) / 1e12
    print(f"{precision}: {tflops:.0f} TFLOP/s;", helpers.against_limit(
        tflops, limits[f"{precision}_peak_tflops"], "TFLOP/s"))

# %% tags=["products-harness"]
tflops = {p: rate(matmul_flops(8192), median(samples), 1e12) for p, samples in products.items()}
for precision, measured in tflops.items():
    peak = limits[f"{precision}_peak_tflops"][0]
    report.publish_all({f"{precision}_tflops": measured, f"{precision}_peak_tflops": peak,
                        f"{precision}_frac": ratio(measured, peak)})
report.publish("mm_size", 8192)
del x, x16, xb

# %% tags=["roofline-harness"]
n = helpers.matrix_size(gpu)  # the chapter's products: 4000 on a GPU
xn = torch.rand(n, n, device=gpu)
t_mm = helpers.measure({"product": lambda: xn @ xn}, gpu, clock="gpu")["product"]
gelu = gelu_times(torch.cuda.get_device_name(gpu))
points = roofline_points(n, median(t_mm), gelu)
bandwidths = {"ceiling_memory": memory_gbps, "ceiling_l2": l2_gbps, "ceiling_link": gbps["h2d_pinned"]}
computes = {p: tflops[p] for p in ("fp32", "tf32", "bf16", "fp8") if p in tflops}
drawn_limits = {k.split("_")[0]: v for k, (v, _) in limits.items()
                if v and k.split("_")[0] in ("memory", "fp32", "bf16")}
report.figure(lambda lang: draw_roofline(bandwidths, computes, drawn_limits, points, n, helpers.name(gpu), lang),
              "roofline")
report.publish_timing("t_mm_chapter", t_mm)
report.publish_all({"size": n, "gelu_recording": gelu["source"] if gelu else None, "roofline_points": points})

# %% tags=["finish"]
figures = report.finish()
