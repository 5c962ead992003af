"""Framework-agnostic helpers shared by the PyTorch and MXNet example scripts.

- options:  the command-line options every script takes (also read from
            EXAMPLE_ARGS inside a Jupyter kernel), one-line failures, and a
            hook that turns out-of-memory errors into a one-line message.
- stats:    medians, parallel and overlap efficiencies, rates, size choice.
- report:   publish measured figures (for --json and for myst-nb glue),
            format seconds, save and show figures.
- timeline: draw Gantt charts of measured start/end times.
- machine:  name the CPU and label devices as ``cuda:0 (NVIDIA H200)``.
- keys:     the published keys of each example (the same for both frameworks).
- plots:    efficiency-against-size curves (parallelism_sweep).

The framework helpers (examples/<framework>/helpers.py) put examples/ on
sys.path so that ``import common.stats`` works from a script and a notebook.
"""
