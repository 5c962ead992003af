"""The figures each example publishes (fixed by the book; both frameworks publish all).

A key that does not apply on a machine (e.g. a copy time without a GPU) is
published as None. ``--json`` adds "size" and "repeats" (and scripts add
"devices", listed here too).
"""
ASYNC_COMPUTATION = [
    "devices", "t_enqueue", "t_complete", "t_wait_item", "t_wait_numpy", "t_wait_print",
    "t_wait_sync", "t_sync_each_step", "t_sync_once", "speedup_sync_once",
]
AUTO_PARALLELISM = [
    "devices", "mode", "n_gpus", "lanes", "products",
    "t_alone_0", "t_alone_1", "t_alone_max", "t_together", "parallel_eff",
    "t_run", "t_copy_pageable", "t_copy_nonblocking", "t_run_copy_nonblocking", "overlap_eff_seed",
    "t_copy_pinned", "t_run_copy_streams", "overlap_eff", "copy_matches",
    "d2h_gbps", "d2h_peak_gbps", "d2h_frac", "tflops_run", "tflops_peak", "tflops_frac",
]
PARALLELISM_SWEEP = [
    "devices", "sweep_sizes", "small_parallel_eff", "large_parallel_eff",
    "small_overlap_eff", "large_overlap_eff",
]
#: What every --json object holds besides the keys above.
ALWAYS = ["size", "repeats"]
#: The hybridize twins; each timing ``t_x`` has its ``t_x_spread`` ([min, max]).
HYBRIDIZE = [
    "devices", "t_eager", "t_eager_spread", "t_compile", "t_compiled", "t_compiled_spread",
    "speedup_compiled", "breakeven_calls", "export_files", "export_matches",
    "t_loop_eager", "t_loop_eager_spread", "t_loop_graph", "t_loop_graph_spread",
    "t_step_frontend", "t_step_backend", "speedup_graph", "graph_matches",
    "t_ro_compile", "t_loop_reduce_overhead", "t_loop_reduce_overhead_spread",
    "sweep_sizes", "eager_parallel_eff", "graph_parallel_eff", "streams_graph_matches",
]
