"""What the examples ran on, named the same way by every framework.

``device_label("cuda:0", "NVIDIA H200")`` gives ``cuda:0 (NVIDIA H200)``; every
printed time names its device this way, and ``split_label`` takes such a label apart.
``cpu_model()`` reads the CPU's model name (Linux /proc/cpuinfo, else the platform module).
"""
import os
import platform
from functools import lru_cache


@lru_cache(maxsize=None)
def cpu_model() -> str:
    """The CPU's model name, e.g. ``AMD EPYC 9654 96-Core Processor`` (or ``unknown CPU``)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return " ".join(line.split(":", 1)[1].split())
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_count() -> int:
    """Logical CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def host_memory_bytes() -> int:
    """The host's physical memory in bytes, as the operating system reports it (0 if unknown)."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return 0


def device_label(name: str, model: str) -> str:
    """``name (model)``: how every example names a device in its output."""
    return f"{name} ({model})"


def split_label(label: str) -> tuple:
    """A device's name and model from its label: ``cpu(0) (Intel(R) Xeon(R))`` -> ``("cpu(0)", "Intel(R) Xeon(R)")``."""
    name, bracket, model = label.partition(" (")
    if not bracket or not model.endswith(")"):
        raise ValueError(f"{label!r} is not a device label like 'cuda:0 (NVIDIA H200)'")
    return name, model[:-1]


def is_cpu(name: str) -> bool:
    """True for a CPU's device name (``cpu``, ``cpu(1)``, ``cpu job 0``), False for a GPU's."""
    return name.startswith("cpu")
