"""Theoretical peaks of a GPU, read from the hardware, with the formula of each.

- The host link: PCIe bytes per second per direction = the maximum link
  generation's transfer rate x its line-code efficiency / 8 bits x the maximum
  link width, both read from NVML (the ``nvidia-ml-py`` package, ``pynvml``).
  PCIe 5.0 x16 gives 32 GT/s x 128/130 / 8 x 16 = 63.0 GB/s.
- fp32 compute: SMs x fp32 lanes per SM x 2 (a fused multiply-add is two
  operations) x the maximum SM clock. The SM count and compute capability
  come from the framework, the clock from NVML. An H200 (compute capability
  9.0) has 132 SMs x 128 lanes x 2 x 1.98 GHz = 66.9 TFLOP/s.
- Device memory: the maximum memory clock x 2 (data move on both clock
  edges) x the bus width in bits / 8, both read from NVML. An H200 gives
  3,201 MHz x 2 x 6,144 bits / 8 = 4,917 GB/s (the vendor's sheet: 4.8 TB/s).
- Tensor Cores: SMs x dense FLOP per clock per SM of the precision x the
  maximum SM clock (TENSOR_FLOP_PER_CLOCK). The vendor's own tensor figures
  use a lower clock (1,830 MHz for the H100 SXM5, whose SM the H200 shares);
  the book uses NVML's maximum SM clock for every peak, so its tensor peaks
  are 1,980 / 1,830 = 8 % above the vendor's 494.7 (TF32), 989.4 (fp16,
  bf16) and 1,978.9 (fp8) TFLOP/s.

A peak that cannot be read (no NVML, an unknown GPU generation) is None.
"""
from typing import Any, Dict, Optional, Tuple

#: PCIe generation -> (transfer rate in GT/s per lane, line-code efficiency).
PCIE_GENERATIONS = {
    1: (2.5, 8 / 10), 2: (5.0, 8 / 10), 3: (8.0, 128 / 130), 4: (16.0, 128 / 130),
    5: (32.0, 128 / 130), 6: (64.0, 242 / 256),
}
#: Compute capability -> fp32 lanes ("CUDA cores") per SM (CUDA C Programming Guide,
#: arithmetic instruction throughput).
FP32_LANES_PER_SM = {
    (6, 0): 64, (6, 1): 128, (7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128,
    (8, 9): 128, (9, 0): 128, (10, 0): 128, (12, 0): 128,
}
#: Compute capability -> dense Tensor Core FLOP per clock per SM (a fused multiply-add is two), by
#: precision, with fp32 accumulation. 8.0 (A100): NVIDIA A100 Tensor Core GPU Architecture whitepaper,
#: 312 TFLOP/s fp16 = 108 SMs x 2,048 x 1.41 GHz. 9.0 (H100, H200): NVIDIA H100 Tensor Core GPU
#: Architecture whitepaper, twice the A100's rate per SM and clock, four times with fp8;
#: 989.4 TFLOP/s fp16 = 132 SMs x 4,096 x 1.83 GHz. Other GPUs are left out rather than guessed.
TENSOR_FLOP_PER_CLOCK = {
    (8, 0): {"tf32": 1024, "bf16": 2048, "fp16": 2048},
    (9, 0): {"tf32": 2048, "bf16": 4096, "fp16": 4096, "fp8": 8192},
}
#: The Tensor Cores' precisions that the book's limits name (a GPU may lack some).
TENSOR_PRECISIONS = ("tf32", "bf16", "fp16", "fp8")
#: The first compute capability whose Tensor Cores multiply fp8 (torch._scaled_mm needs it).
FP8_SINCE = (8, 9)


def pcie_gbps(generation: int, width: int) -> Optional[float]:
    """Theoretical PCIe rate per direction in GB/s (None for an unknown generation)."""
    if generation not in PCIE_GENERATIONS or width < 1:
        return None
    gt_per_s, efficiency = PCIE_GENERATIONS[generation]
    return gt_per_s * efficiency / 8 * width


def fp32_tflops(sm_count: int, capability: Tuple[int, int], max_sm_clock_mhz: float) -> Optional[float]:
    """Theoretical fp32 rate in TFLOP/s (None for an unknown compute capability)."""
    lanes = FP32_LANES_PER_SM.get(tuple(capability))
    if lanes is None or sm_count < 1 or max_sm_clock_mhz <= 0:
        return None
    return sm_count * lanes * 2 * max_sm_clock_mhz * 1e6 / 1e12


def memory_gbps(max_mem_clock_mhz: float, bus_bits: int) -> Optional[float]:
    """Theoretical device-memory rate in GB/s: clock x 2 transfers per clock x bus width / 8."""
    if max_mem_clock_mhz <= 0 or bus_bits < 1:
        return None
    return max_mem_clock_mhz * 1e6 * 2 * bus_bits / 8 / 1e9


def tensor_tflops(sm_count: int, capability: Tuple[int, int], max_sm_clock_mhz: float) -> Dict[str, float]:
    """Theoretical dense Tensor Core rates in TFLOP/s by precision ({} for an unknown capability)."""
    per_clock = TENSOR_FLOP_PER_CLOCK.get(tuple(capability), {})
    return {p: sm_count * flop * max_sm_clock_mhz * 1e6 / 1e12 for p, flop in per_clock.items()}


def has_fp8(capability: Tuple[int, int]) -> bool:
    """True where the Tensor Cores multiply fp8 (compute capability 8.9 or newer)."""
    return tuple(capability) >= FP8_SINCE


def formulas(found: Dict[str, Any], sm_count: int, capability: Tuple[int, int]) -> Dict[str, str]:
    """How each peak of ``found`` (from gpu_peaks) is computed, with this GPU's numbers, by peak key."""
    out = {}
    if found.get("link_peak_gbps"):
        gt, code = PCIE_GENERATIONS[found["pcie_generation"]]
        payload, sent = next((p, t) for p, t in ((8, 10), (128, 130), (242, 256)) if abs(code - p / t) < 1e-9)
        out["link_peak_gbps"] = (f"PCIe {found['pcie_generation']}.0 x{found['pcie_width']}: {gt:g} GT/s "
                                 f"× {payload}/{sent} / 8 bits × {found['pcie_width']} lanes")
    if found.get("memory_peak_gbps"):
        out["memory_peak_gbps"] = (f"{found['max_mem_clock_mhz']} MHz × 2 × {found['memory_bus_bits']} bits "
                                   "/ 8 bits")
    clock = found.get("max_sm_clock_mhz")
    if found.get("fp32_peak_tflops"):
        lanes = FP32_LANES_PER_SM[tuple(capability)]
        out["fp32_peak_tflops"] = f"{sm_count} SMs × {lanes} lanes × 2 × {clock} MHz"
    for precision, flop in TENSOR_FLOP_PER_CLOCK.get(tuple(capability), {}).items():
        if found.get("tensor_peak_tflops", {}).get(precision):
            out[f"{precision}_peak_tflops"] = f"{sm_count} SMs × {flop} FLOP/clock × {clock} MHz"
    return out


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _bare_uuid(uuid: str) -> str:
    return uuid.lower().removeprefix("gpu-")


def gpu_peaks(uuid: str, sm_count: int, capability: Tuple[int, int],
              nvml: Any = None) -> Dict[str, Any]:
    """The GPU's theoretical peaks, read through NVML.

    ``uuid`` names the GPU (with or without NVML's ``GPU-`` prefix), so that the
    GPU is found even when the framework numbers the GPUs differently from
    NVML. Returns the link's generation and width, the max SM and memory
    clocks in MHz, the memory bus width in bits, ``link_peak_gbps``,
    ``fp32_peak_tflops``, ``memory_peak_gbps``, ``tensor_peak_tflops`` (by
    precision), and ``problem``: None, or why the link or fp32 peak is None.
    ``nvml`` is the ``pynvml`` module (a fake in tests).
    """
    found = {"pcie_generation": None, "pcie_width": None, "max_sm_clock_mhz": None,
             "max_mem_clock_mhz": None, "memory_bus_bits": None, "link_peak_gbps": None,
             "fp32_peak_tflops": None, "memory_peak_gbps": None, "tensor_peak_tflops": {}, "problem": None}
    if nvml is None:
        try:
            import pynvml as nvml
        except ImportError:
            found["problem"] = "nvidia-ml-py (pynvml) is not installed"
            return found
    try:
        nvml.nvmlInit()
    except Exception as exc:  # no driver, no permission
        found["problem"] = f"NVML: {exc}"
        return found
    try:
        handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
        mine = [h for h in handles if _bare_uuid(_text(nvml.nvmlDeviceGetUUID(h))) == _bare_uuid(uuid)]
        if not mine:
            found["problem"] = f"NVML lists no GPU with the UUID {uuid}"
            return found
        handle = mine[0]
        found["pcie_generation"] = int(nvml.nvmlDeviceGetMaxPcieLinkGeneration(handle))
        found["pcie_width"] = int(nvml.nvmlDeviceGetMaxPcieLinkWidth(handle))
        found["max_sm_clock_mhz"] = int(nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_SM))
        found["max_mem_clock_mhz"] = int(nvml.nvmlDeviceGetMaxClockInfo(handle, nvml.NVML_CLOCK_MEM))
        found["memory_bus_bits"] = int(nvml.nvmlDeviceGetMemoryBusWidth(handle))
    finally:
        nvml.nvmlShutdown()
    found["link_peak_gbps"] = pcie_gbps(found["pcie_generation"], found["pcie_width"])
    found["fp32_peak_tflops"] = fp32_tflops(sm_count, capability, found["max_sm_clock_mhz"])
    found["memory_peak_gbps"] = memory_gbps(found["max_mem_clock_mhz"], found["memory_bus_bits"])
    found["tensor_peak_tflops"] = tensor_tflops(sm_count, capability, found["max_sm_clock_mhz"])
    if found["link_peak_gbps"] is None or found["fp32_peak_tflops"] is None:
        found["problem"] = (f"unknown PCIe generation {found['pcie_generation']} or compute "
                            f"capability {capability}")
    return found
