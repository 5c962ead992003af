"""The figures each example publishes (fixed by the book; both frameworks publish all).

A key that does not apply on a machine (e.g. a copy time without a GPU) is
published as None. Every timing key (a name that starts with ``t_``) has a
companion ``<key>_spread``, the [min, max] of its samples, which
``Report.publish_timing`` publishes next to the median. Every ``--json``
object also holds the keys in ALWAYS. EXAMPLES names each example's keys;
the sets at the end tell ``--compare`` (common.compare) what each figure is.
"""
import ast
ASYNC_COMPUTATION = [
    "devices", "steps", "t_queue", "t_done", "t_item", "t_numpy", "t_str",
    "step_size", "t_step_issue", "t_step_gpu", "t_read_each_step", "t_read_once",
    "speedup_read_once", "run_ahead", "run_ahead_calls",
]
AUTO_PARALLELISM = [
    "mode", "n_gpus", "devices", "products", "cpu_threads", "job_sizes",
    "t_alone_0", "t_alone_1", "t_together", "overlap_devices", "speedup_together",
    "t_copy_fresh", "t_copy_pageable", "t_copy_pinned", "copy_gbps",
    "t_run", "t_run_copy_same_stream", "overlap_same_stream",
    "t_run_copy_streams", "overlap_side_stream", "copies_correct", "copies_correct_no_wait",
    "link_peak_gbps", "link_best_gbps", "link_achieved_gbps", "link_best_frac", "link_achieved_frac",
    "fp32_peak_tflops", "fp32_best_tflops", "fp32_achieved_tflops", "fp32_best_frac",
    "fp32_achieved_frac",
]
PARALLELISM_SWEEP = [
    "devices", "sweep_sizes", "small_overlap_streams", "large_overlap_streams",
    "small_overlap_copies", "large_overlap_copies", "cpu_small_overlap", "cpu_large_overlap",
]
#: What every --json object holds besides the keys above.
ALWAYS = ["size", "repeats"]


def is_timing(key: str) -> bool:
    """True for a timing key, which is published with its spread."""
    return key.startswith("t_")


def spread_key(key: str) -> str:
    """The key of a timing's [min, max]: ``t_run`` -> ``t_run_spread``."""
    return f"{key}_spread"


#: The unit of a key, by how its name ends (every other key is a count, a ratio, a name or a flag).
UNITS = {"_gbps": "GB/s", "_gflops": "GFLOP/s", "_tflops": "TFLOP/s"}


def is_spread(key: str) -> bool:
    """True for a timing's [min, max] (``t_run_spread``)."""
    return key.endswith(spread_key(""))


def unit(key: str):
    """The unit of a published value: seconds for timings and their spreads; None without one."""
    if is_timing(key):
        return "s"
    return next((u for end, u in UNITS.items() if key.endswith(end)), None)


def published(keys) -> list:
    """Every key a script with these keys publishes: them, their spreads, and ALWAYS."""
    keys = list(keys)
    return keys + [spread_key(k) for k in keys if is_timing(k)] + ALWAYS

# Keys of further examples follow below.
HYBRIDIZE = [
    "devices", "t_eager", "t_compile", "t_compiled", "speedup_compiled", "breakeven_calls",
    "t_eager_device", "t_compiled_device", "speedup_compiled_device", "compile_cache_warm",
    "export_files", "export_matches", "t_loop_eager", "t_loop_graph",
    "t_step_backend", "t_step_backend_graph", "speedup_graph", "graph_matches",
    "sweep_sizes", "eager_overlap", "graph_overlap", "small_size", "small_eager_overlap",
    "small_graph_overlap", "large_size", "large_eager_overlap", "large_graph_overlap",
    "figure_graph_overlap", "streams_graph_matches",
]
HARDWARE = [
    "devices", "host_threads", "t_host_copy", "host_copy_gbps", "t_read_order", "t_read_random",
    "slowdown_random_read", "cpu_mm_size", "t_cpu_mm_one", "t_cpu_mm_all", "cpu_one_gflops",
    "cpu_all_gflops", "speedup_cpu_threads", "t_cpu_op_issue", "t_cpu_op_done",
    "t_gpu_op_issue", "t_gpu_op_gpu", "t_sync", "t_item", "t_h2d_small",
    "t_memory_copy", "memory_copy_gbps", "memory_peak_gbps", "memory_frac",
    "l2_mib", "t_l2_copy", "l2_copy_gbps", "speedup_l2_copy",
    "t_h2d_pageable", "t_h2d_pinned", "t_d2h_pageable", "t_d2h_pinned", "h2d_pageable_gbps",
    "h2d_pinned_gbps", "d2h_pageable_gbps", "d2h_pinned_gbps", "link_peak_gbps", "h2d_pinned_frac",
    "d2h_pinned_frac", "slowdown_pageable_h2d", "slowdown_pageable_d2h",
    "mm_size", "fp32_tflops", "tf32_tflops", "bf16_tflops", "fp16_tflops", "fp8_tflops",
    "fp32_peak_tflops", "tf32_peak_tflops", "bf16_peak_tflops", "fp16_peak_tflops", "fp8_peak_tflops",
    "fp32_frac", "tf32_frac", "bf16_frac", "fp16_frac", "fp8_frac",
    "t_mm_chapter", "gelu_recording", "roofline_points",
    # The latencies in µs to one significant digit: what the prose may quote of one run.
    "cpu_op_issue_us", "cpu_op_done_us", "gpu_op_issue_us", "gpu_op_gpu_us",
]

#: Each example's keys, by its name (the script's, without .py).
EXAMPLES = {"async_computation": ASYNC_COMPUTATION, "auto_parallelism": AUTO_PARALLELISM,
            "parallelism_sweep": PARALLELISM_SWEEP, "hybridize": HYBRIDIZE, "hardware": HARDWARE}
#: What sets a run up rather than measures it: --compare names those that differ above its table.
SETTINGS = {"size", "repeats", "devices", "mode", "n_gpus", "products", "cpu_threads", "job_sizes", "steps",
            "step_size", "run_ahead_calls", "sweep_sizes", "small_size", "large_size", "host_threads",
            "cpu_mm_size", "mm_size", "l2_mib"}
#: Figures measured on the host CPU whatever devices the run used: --compare always compares them.
HOST_FIGURES = {"t_host_copy", "host_copy_gbps", "t_read_order", "t_read_random", "slowdown_random_read",
                "t_cpu_mm_one", "t_cpu_mm_all", "cpu_one_gflops", "cpu_all_gflops", "speedup_cpu_threads",
                "t_cpu_op_issue", "t_cpu_op_done", "cpu_small_overlap", "cpu_large_overlap"}
#: A rate that the hardware limits: rate -> (its limit, rate / limit), each a key of the same example.
LIMITS = {"memory_copy_gbps": ("memory_peak_gbps", "memory_frac"),
          "h2d_pinned_gbps": ("link_peak_gbps", "h2d_pinned_frac"),
          "d2h_pinned_gbps": ("link_peak_gbps", "d2h_pinned_frac"),
          **{f"{p}_tflops": (f"{p}_peak_tflops", f"{p}_frac") for p in ("fp32", "tf32", "bf16", "fp16", "fp8")},
          **{f"link_{how}_gbps": ("link_peak_gbps", f"link_{how}_frac") for how in ("best", "achieved")},
          **{f"fp32_{how}_tflops": ("fp32_peak_tflops", f"fp32_{how}_frac") for how in ("best", "achieved")}}
#: Why a run leaves a figure None, by the start of its key (any other: NOT_MEASURED).
UNMEASURED = {"fp8_": "fp8 needs compute capability 8.9 or newer"}
NOT_MEASURED = "not measured on this run"


def is_rounded(key: str) -> bool:
    """True for a copy of a figure rounded for the prose (``cpu_op_issue_us``)."""
    return key.endswith("_us")


def book_figures(stamp: dict, example: str) -> dict:
    """What a recording's stamp says of its run, as a zip's book-figures.json holds it: the example
    (``pytorch/hardware``), its machine, versions, date and options, every glued value and its unit."""
    values = {key: ast.literal_eval(text) for key, text in stamp["glue"].items()}
    return {"example": example, "recorded_at": stamp["recorded_at"], "machine": stamp["machine"],
            "versions": stamp["versions"], "example_args": stamp["example_args"], "values": values,
            "units": {key: unit(key) for key in values if unit(key)}}
