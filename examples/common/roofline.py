"""The roofline of a GPU: measured ceilings, the hardware's peaks, and the chapter's workloads.

A workload's arithmetic intensity is its FLOPs over the bytes it moves to and
from device memory; its attainable rate is at most min(compute ceiling,
bandwidth x intensity). A copy does no arithmetic, so it has no point on the
chart: its bandwidth is a slanted ceiling. The points:

- an n x n fp32 product: 2 n^3 FLOPs over 3 n^2 x 4 bytes (two inputs read,
  one result written), intensity n / 6;
- the hybridize page's GELU (tanh form), GELU_FLOPS per number. Eager, each
  of its nine operations reads its inputs and writes its result: 88 bytes per
  number (GELU_EAGER_BYTES); compiled into one kernel, it reads x and writes
  the result: 8 bytes.

The GELU times come from the hybridize example's recording, read by
:func:`gelu_times` (the same GPU model only): measuring them here would compile
the function again, seconds of the record step for two points.
``roofline_points`` lists every point as ``[key, intensity, TFLOP/s]``, the
form the script publishes and ``draw_roofline`` draws.
"""
import ast
import json
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from common.i18n import localize_axis, number, text

GELU_FLOPS = 9  # per number: 4 multiplications, 2 additions, 2 scalings and a tanh counted as one
GELU_EAGER_BYTES = 88  # per number: 9 operations, 3 reading two tensors, each writing one (4 bytes each)
GELU_FUSED_BYTES = 8  # per number: read x, write the result
RECORDINGS = Path(__file__).resolve().parents[1] / "recordings"
# How the legend writes a precision: TF32 is NVIDIA's name for a format, the others are type names
PRECISION_NAMES = {"tf32": "TF32"}


def product_intensity(n: int, bytes_per_number: int = 4) -> float:
    """FLOPs per byte of an n x n product: 2 n^3 / (3 n^2 x bytes)."""
    return 2.0 * n / (3 * bytes_per_number)


def gelu_times(gpu_name: str, recordings: Path = RECORDINGS) -> Optional[dict]:
    """The eager and compiled GELU's device times from the PyTorch hybridize recording, if it ran on a
    GPU of the model ``gpu_name`` (e.g. ``NVIDIA H200``): ``{"size", "eager", "compiled", "source"}``;
    None without such a recording."""
    try:
        stamp = json.loads((recordings / "pytorch" / "hybridize.ipynb").read_text())["metadata"]["recording"]
        glue = {key: ast.literal_eval(value) for key, value in stamp["glue"].items()}
        devices = glue["devices"]
    except (OSError, ValueError, KeyError, SyntaxError):
        return None
    if not any(device.endswith(f"({gpu_name})") for device in devices) \
            or None in (glue.get("t_eager_device"), glue.get("t_compiled_device")):
        return None
    return {"size": glue["size"], "eager": glue["t_eager_device"], "compiled": glue["t_compiled_device"],
            "source": f"pytorch/hybridize, recorded {stamp['recorded_at'][:10]} on {devices[0]}"}


def roofline_points(size: int, t_product: float, gelu: Optional[dict]) -> List[list]:
    """``[key, intensity, TFLOP/s]`` of the chapter's workloads: the size x size fp32 product, and the
    two GELUs when ``gelu`` (from :func:`gelu_times`) has them."""
    points = [["point_product", product_intensity(size), 2.0 * size ** 3 / t_product / 1e12]]
    if gelu:
        numbers = gelu["size"] ** 2
        for key, bytes_per_number in (("eager", GELU_EAGER_BYTES), ("compiled", GELU_FUSED_BYTES)):
            points.append([f"point_gelu_{key}", GELU_FLOPS / bytes_per_number,
                           GELU_FLOPS * numbers / gelu[key] / 1e12])
    return points


def flat_from(tflops: float, gbps: Optional[float], x: Sequence[float]) -> tuple:
    """The flat part of a compute ceiling of ``tflops``: from the intensity where a memory ceiling of ``gbps``
    reaches it (the ridge point) to the end of ``x``; all of ``x`` without a memory ceiling."""
    ridge = tflops * 1e3 / gbps if gbps else x[0]
    xs = [max(ridge, x[0])] + [i for i in x if i > ridge]
    return xs, [tflops] * len(xs)


def draw_roofline(bandwidths: Dict[str, float], computes: Dict[str, float], peaks: Dict[str, float],
                  points: Sequence[list], size: int, device: str, lang: str = "en"):
    """The roofline, log-log: ``bandwidths`` ({"ceiling_memory": GB/s, ...}) as slanted lines,
    ``computes`` ({"fp32": TFLOP/s, ...}) as flat ones, ``peaks`` ({"memory": GB/s, "fp32": TFLOP/s,
    ...}) dashed, and ``points`` (from :func:`roofline_points`) as markers; returns the Figure."""
    import matplotlib.pyplot as plt

    x = [2.0 ** e for e in range(-5, 13)]
    fig, ax = plt.subplots(figsize=(8.0, 5.0))
    top = max(computes.values())
    for (key, gbps), style in zip(bandwidths.items(), ("-", "-.", ":")):
        ax.plot(x, [min(top, gbps * i / 1e3) for i in x], color="tab:blue", linestyle=style,
                label=text(lang, key, value=number(gbps, lang, ".0f")))
    # A compute ceiling is flat from where the memory ceiling meets it, so that it hides no slanted line.
    for (precision, tflops), color in zip(computes.items(), ("tab:orange", "tab:green", "tab:red", "tab:purple")):
        ax.plot(*flat_from(tflops, bandwidths["ceiling_memory"], x), color=color,
                label=text(lang, "ceiling_compute", precision=PRECISION_NAMES.get(precision, precision),
                           value=number(tflops, lang, ".0f")))
    memory_peak = peaks.get("memory", float("inf"))  # read, never taken out: each language draws it
    for key, tflops in peaks.items():
        if key != "memory":
            ax.plot(x, [min(tflops, memory_peak * i / 1e3) for i in x], color="gray", linestyle="--",
                    linewidth=0.8)
    ax.plot([], [], color="gray", linestyle="--", linewidth=0.8, label=text(lang, "peak_line"))
    for (key, intensity, tflops), marker in zip(points, "osD"):
        ax.plot([intensity], [tflops], marker=marker, color="black", linestyle="none",
                label=text(lang, key, n=size))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(text(lang, "intensity"))
    ax.set_ylabel(text(lang, "attainable"))
    ax.set_title(text(lang, "roofline_title", device=device), fontsize=10)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="lower right")
    localize_axis(ax.xaxis, lang)
    localize_axis(ax.yaxis, lang)
    fig.tight_layout()
    return fig
