"""Framework-agnostic helpers shared by the PyTorch and MXNet example scripts.

- options:  the command-line options every script takes (also read from
            EXAMPLE_ARGS inside a Jupyter kernel), ``--size N|auto``, one-line
            failures, and a hook that turns out-of-memory errors into one line.
- stats:    medians, spreads, timing in turns, efficiencies, rates,
            size choice, counting equal pairs (the copy check).
- report:   publish measured figures once each (for --json and for myst-nb
            glue), timings with their spread, format times, draw each figure
            in every book language.
- i18n:     the words of the figures in English and Turkish.
- hardware: the theoretical link and fp32 peaks of a GPU, read through NVML.
- timeline: draw Gantt charts of measured start/end times.
- machine:  name the CPU and label devices as ``cuda:0 (NVIDIA H200)``.
- keys:     the published keys of each example (the same for both frameworks),
            and what --compare needs to know of each figure.
- compare:  --compare: the book's figures beside this run's, like with like.
- plots:    overlap-against-size curves (parallelism_sweep).

The framework helpers (examples/<framework>/helpers.py) put examples/ on
sys.path so that ``import common.stats`` works from a script and a notebook.
"""
