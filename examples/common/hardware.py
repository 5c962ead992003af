"""Theoretical peaks of a GPU, read from the hardware.

- The host link: PCIe bytes per second per direction = the maximum link
  generation's transfer rate x its line-code efficiency / 8 bits x the maximum
  link width, both read from NVML (the ``nvidia-ml-py`` package, ``pynvml``).
  PCIe 5.0 x16 gives 32 GT/s x 128/130 / 8 x 16 = 63.0 GB/s.
- fp32 compute: SMs x fp32 lanes per SM x 2 (a fused multiply-add is two
  operations) x the maximum SM clock. The SM count and compute capability
  come from the framework, the clock from NVML. An H200 (compute capability
  9.0) has 132 SMs x 128 lanes x 2 x 1.98 GHz = 66.9 TFLOP/s.

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


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _bare_uuid(uuid: str) -> str:
    return uuid.lower().removeprefix("gpu-")


def gpu_peaks(uuid: str, sm_count: int, capability: Tuple[int, int],
              nvml: Any = None) -> Dict[str, Any]:
    """The GPU's theoretical peaks, read through NVML.

    ``uuid`` names the GPU (with or without NVML's ``GPU-`` prefix), so that the
    GPU is found even when the framework numbers the GPUs differently from
    NVML. Returns the link's generation and width, the max SM clock in MHz,
    ``link_peak_gbps`` and ``fp32_peak_tflops``, and ``problem``: None, or why
    the peaks are None. ``nvml`` is the ``pynvml`` module (a fake in tests).
    """
    found = {"pcie_generation": None, "pcie_width": None, "max_sm_clock_mhz": None,
             "link_peak_gbps": None, "fp32_peak_tflops": None, "problem": None}
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
    finally:
        nvml.nvmlShutdown()
    found["link_peak_gbps"] = pcie_gbps(found["pcie_generation"], found["pcie_width"])
    found["fp32_peak_tflops"] = fp32_tflops(sm_count, capability, found["max_sm_clock_mhz"])
    if found["link_peak_gbps"] is None or found["fp32_peak_tflops"] is None:
        found["problem"] = (f"unknown PCIe generation {found['pcie_generation']} or compute "
                            f"capability {capability}")
    return found
