"""What a drawn roofline shows, read back from its matplotlib lines (test_hardware.py on the CPU,
test_gpu.py on the GPU)."""

from __future__ import annotations


def dashed_roofs(fig) -> list[tuple[float, float]]:
    """Each dashed line of a roofline as (the bandwidth in GB/s of its slanted part, its flat top in
    TFLOP/s): the hardware's limits, as draw_roofline draws them."""
    roofs = []
    for line in fig.axes[0].lines:
        x, y = list(line.get_xdata()), list(line.get_ydata())
        if line.get_linestyle() == "--" and x:  # the legend's sample has no data
            roofs.append((y[0] / x[0] * 1e3, max(y)))
    return roofs
