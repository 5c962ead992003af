"""What the tests of the PyTorch and MXNet example scripts share: the contract of the twins (their
tags, published keys and printed timings), running the cases, and the checks of the cells and of
the executed notebook."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from filelock import FileLock

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from common import keys  # noqa: E402
from common.machine import is_cpu, split_label  # noqa: E402
from common.options import CPU_JOB_SECONDS  # noqa: E402

RECORDINGS = ROOT / "examples" / "recordings"

# The PyTorch size that every CPU run of the compiled GELU uses, so that they compile one graph
TINY_COMPILED = "32"


@contextmanager
def compiling_alone() -> Iterator[None]:
    """Hold the one lock of the test processes that run torch.compile on the CPU: the hybridize
    script and the hybridize page program compile the same GELU at TINY_COMPILED, and one after
    the other the second finds it in Inductor's cache (one per user), where at the same time both
    would compile it (about 20 s each on two cores)."""
    with FileLock(Path(tempfile.gettempdir()) / "automatic-parallelism-inductor.lock"):
        yield


# median [min-max], the median with 3 significant digits in s, ms or µs, the spread in its unit
TIME = r"(?:\d\.\d\d|\d\d\.\d|\d{3}) (?:s|ms|µs) \[\d+(?:\.\d+)?-\d+(?:\.\d+)?\]"
UNIT = {"s": 1, "ms": 1e-3, "µs": 1e-6}
PNG = b"\x89PNG"
DOCUMENTED = {name: set(keys.published(getattr(keys, constant))) for name, constant in (
    ("auto_parallelism", "AUTO_PARALLELISM"), ("async_computation", "ASYNC_COMPUTATION"),
    ("parallelism_sweep", "PARALLELISM_SWEEP"))}
# The cells the book shows, with the contract's tags; they must stay short and plain.
SHOWN = {"async_computation": ["setup", "queue", "blockers", "frontend", "frontend-time", "read-once"],
         "auto_parallelism": ["setup", "jobs", "together", "copies", "same-stream", "side-stream",
                              "side-stream-time", "check", "limits-setup", "limits"]}
HIDDEN = {"async_computation": ["harness", "setup-harness", "finish"],
          "auto_parallelism": ["harness", "setup-harness", "timeline-devices", "timeline-copy", "finish"],
          "parallelism_sweep": ["setup", "sweep", "plot", "finish"]}
# Executes a notebook, or a script as the book does (jupytext reads both), in a Jupyter kernel started
# in kernel_folder: python -c NOTEBOOK notebook_or_script kernel_folder executed.ipynb. The kernel listens
# on IPC sockets in a folder of its own: over TCP, kernels that parallel tests start at the same moment
# can pick the same free port, and one of them then dies before it answers ("Address already in use").
NOTEBOOK = """
import shutil, sys, tempfile, nbformat, nbclient, jupytext
from jupyter_client import KernelManager
nb = jupytext.read(sys.argv[1])
sockets = tempfile.mkdtemp(prefix="kernel-")
try:
    kernel = KernelManager(kernel_name="python3", transport="ipc", ip=sockets + "/ipc")
    nbclient.NotebookClient(nb, km=kernel, timeout=180, resources={"metadata": {"path": sys.argv[2]}}).execute()
finally:
    shutil.rmtree(sockets, ignore_errors=True)
nbformat.write(nb, sys.argv[3])
"""
# The cases that run together must all end this long after they started (healthy, a batch takes about
# 40 s on a 2-core machine, twice that when the machine is shared); a case left running then is killed
# as hung, and the next batch is not held up.
HUNG_AFTER_S = 180
# A case run alone, at a tiny size, takes under 10 s when healthy; one still running after this hung.
ALONE_HUNG_AFTER_S = 30


def median_seconds(timing: str) -> float:
    """The median of a printed timing (``131 ms [130-133]``), in seconds."""
    value, unit = timing.split(" ")[:2]
    return float(value) * UNIT[unit]


def median_interval(timing: str) -> tuple[float, float]:
    """The seconds that a printed median (3 significant digits, ``131 ms``) may stand for: half a unit
    of its last digit either side."""
    value, unit = timing.split(" ")[:2]
    half = 0.5 * 10 ** -len(value.partition(".")[2])
    return (float(value) - half) * UNIT[unit], (float(value) + half) * UNIT[unit]


def overlap_range(alone: list[tuple[float, float]], together: tuple[float, float]) -> tuple[float, float]:
    """The lowest and highest overlap, (sum - together) / (sum - max), that times within these
    intervals give (it is monotone in each time, so its extremes lie at the corners)."""
    from itertools import product

    values = [(sum(a) - t) / (sum(a) - max(a)) for *a, t in product(*alone, together)]
    return min(values), max(values)


def run_cases(names: list[str], timed: list[str], launch: Callable[[str], subprocess.Popen],
              tmp: Path, hang_prone: tuple[str, ...] = ()) -> dict[str, tuple[int, str, str, Path]]:
    """Run every case; return name -> (exit status, stdout, stderr, tmp folder).

    The ``timed`` cases, whose timings are checked, and the ``hang_prone`` ones, which a known bug
    makes hang, run one at a time on a quiet machine, each within ALONE_HUNG_AFTER_S seconds. The
    others, which check what is printed, then run all at once and must all end within HUNG_AFTER_S of
    their start. A case still running at its limit is killed, and its stderr says that it hung.
    """
    done = {}

    def finish(name, proc, deadline, limit):
        try:  # a second at least, to read what a case that ended past the deadline printed
            out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            hung = proc.poll() is None
            if hung:
                proc.kill()
            out, err = proc.communicate()
            err += f"\n(killed after {limit} s: it hung)" if hung else ""
        done[name] = (proc.returncode, out, err, tmp)

    for name in [*timed, *hang_prone]:
        finish(name, launch(name), time.monotonic() + ALONE_HUNG_AFTER_S, ALONE_HUNG_AFTER_S)
    deadline = time.monotonic() + HUNG_AFTER_S
    for name, proc in [(name, launch(name)) for name in names if name not in timed and name not in hang_prone]:
        finish(name, proc, deadline, HUNG_AFTER_S)
    return done


def ok(runs, name: str) -> tuple[str, Path]:
    status, out, err, tmp = runs[name]
    assert status == 0, f"{name} failed:\n{err}"
    return out, tmp


def check_shown_cells(scripts: Path, script: str) -> None:
    """The book shows the tagged cells: each at most 12 lines of at most 79 columns, no publishing."""
    import jupytext

    cells = jupytext.read(scripts / f"{script}.py").cells
    tagged = {t: c.source for c in cells for t in c.metadata.get("tags", [])}
    assert set(SHOWN.get(script, []) + HIDDEN[script]) <= set(tagged)
    for tag in SHOWN.get(script, []):
        lines = tagged[tag].splitlines()
        assert len(lines) <= 12 and max(map(len, lines)) <= 79, (tag, len(lines), max(map(len, lines)))
        assert "report." not in tagged[tag] and "publish" not in tagged[tag], tag


def check_executed_notebook(path: Path) -> dict[str, list]:
    """The executed auto_parallelism notebook: the contract's tags, each value glued once ('size'
    too), the device timeline once per language with its book_language metadata, and no error.
    Returns the outputs by tag."""
    cells = json.loads(path.read_text())["cells"]
    tags = [t for c in cells for t in c.get("metadata", {}).get("tags", [])]
    assert set(SHOWN["auto_parallelism"] + HIDDEN["auto_parallelism"]) <= set(tags)
    outputs = {t: c["outputs"] for c in cells for t in c.get("metadata", {}).get("tags", [])}
    figures = [o for o in outputs["timeline-devices"] if "image/png" in o.get("data", {})]
    assert [o["metadata"]["book_language"] for o in figures] == ["en", "tr"]
    glued = [o["metadata"]["scrapbook"]["name"] for c in cells for o in c["outputs"]
             if "scrapbook" in o.get("metadata", {})]
    assert len(glued) == len(set(glued)), sorted(k for k in glued if glued.count(k) > 1)
    assert set(glued) == DOCUMENTED["auto_parallelism"]
    assert any("50 products of 48×48" in "".join(o.get("text", "")) for o in outputs["jobs"])
    # Without a GPU the copies cell stops the notebook with its one line and no traceback; the cells
    # after it do nothing.
    assert not any(o["output_type"] == "error" for c in cells for o in c["outputs"])
    assert "so the program stops here." in "".join("".join(o.get("text", "")) for o in outputs["copies"])
    after = cells[[c["metadata"].get("tags", [None])[0] for c in cells].index("copies") + 1:]
    assert after and not any(c["outputs"] for c in after)
    return outputs


def auto_size_and_job_time(out):
    """The size that --size auto chose on the CPU, and how long the async example's 50 products took."""
    (size,) = re.findall(rf"^size: (\d+) \(--size auto: one job takes about {CPU_JOB_SECONDS} s on this CPU\)$",
                         out, re.M)
    return int(size), median_seconds(re.search(rf"^the work is done after: ({TIME})$", out, re.M).group(1))


def figures(out: str) -> dict:
    """A script's --json object without its ``units`` field, after checking that field: it names the
    unit of every timing (seconds) and rate, and of nothing that the object lacks."""
    values = json.loads(out)
    units = values.pop("units")
    values.pop("compare", None)  # --compare's member: check_comparison reads it
    assert set(units) <= set(values), sorted(set(units) - set(values))
    assert all(units[k] == "s" for k in values if keys.is_timing(k)), units
    assert all(units[k] in ("GB/s", "GFLOP/s", "TFLOP/s") for k in units if not keys.is_timing(k)), units
    return values


def book_values(framework: str, name: str) -> dict:
    """The figures that the book's recording of framework/name glued, as values."""
    stamp = json.loads((RECORDINGS / framework / f"{name}.ipynb").read_text())["metadata"]["recording"]
    return {key: ast.literal_eval(text) for key, text in stamp["glue"].items()}


def measured(values: dict) -> set:
    """The keys of a run's measured numbers: no setting, spread, rounded copy, limit or fraction of one, name,
    list or flag, and no None."""
    parts = {key for pair in keys.LIMITS.values() for key in pair}
    return {key for key, value in values.items() if isinstance(value, (int, float)) and not isinstance(value, bool)
            and key not in keys.SETTINGS | parts and not keys.is_spread(key) and not keys.is_rounded(key)}


def device_names(values: dict) -> set:
    """The names of a run's devices, without their models."""
    return {split_label(label)[0] for label in values["devices"] or []}


def check_comparison(out: str, framework: str, name: str) -> dict:
    """The ``compare`` member of a ``--json --compare`` run on this machine, which has no GPU: the book's side
    holds the recording's figures and this run's side the run's own; every figure that the book measured is
    a row, with the book's value beside this run's, or is listed once under a reason; no row sets a figure of
    other devices beside the book's (host figures aside), so on this CPU every figure that the book measured
    on a GPU "needs a GPU", and one the book measured on the same devices is a row wherever this run has it;
    every row's unit is given. Returns the member."""
    printed = json.loads(out)
    compared = printed.pop("compare")
    printed.pop("units")
    book, this = compared["book"]["values"], compared["this"]["values"]
    assert book == book_values(framework, name) and this == printed
    rows = {row["key"]: row for row in compared["rows"]}
    grouped = {key: group["reason"] for group in compared["not_compared"] for key in group["keys"]}
    listed = [*rows, *(key for group in compared["not_compared"] for key in group["keys"])]
    assert len(listed) == len(set(listed)) and set(listed) >= measured(book), set(listed) ^ measured(book)
    assert all(row["book"] is not None and row["this"] is not None for row in rows.values()), rows
    assert all(grouped.values()), grouped
    assert all(key in keys.HOST_FIGURES or device_names(book) == device_names(this) for key in rows), rows
    book_gpu = any(not is_cpu(n) for n in device_names(book))
    assert not any(not is_cpu(n) for n in device_names(this)), "this machine has no GPU"
    for key in measured(book) - keys.HOST_FIGURES:
        assert (grouped.get(key) == "needs a GPU") if book_gpu else (key in rows or this.get(key) is None), key
    assert compared["units"] == {key: keys.unit(key) for key in rows if keys.unit(key)}, compared["units"]
    return compared


# What each script says, run without a GPU, about what it leaves out and why: every line that starts with
# its reason ("--device cpu", "No GPU...", "CPU...") and MXNet's note on its CPU threads. ``{why}`` is the
# reason the run gives (its --device), ``{n}`` any whole number. A note added to a script without a line
# here fails the test, as a note removed from it does.
CPU_NOTE = re.compile(r"^(?:(?:--device cpu|No GPU[^:\n]*|CPU[^:\n]*): |One thread per CPU product).*$", re.M)
CPU_NOTES = {
    "pytorch": {
        "auto_parallelism": [
            "{why}: two CPU jobs ({n} threads each). Eager PyTorch runs a CPU operation before its call returns, "
            "so from one thread they run one after the other; all figures are CPU figures.",
            "{why}: what follows needs an NVIDIA GPU, so the program stops here."],
        "async_computation": [
            "CPU: eager PyTorch runs each operation before the call returns, so nothing is queued and the "
            "blockers below have nothing to wait for.",
            "CPU: the work was done when the calls returned, so every case took as long as the work itself.",
            "CPU: Python runs each step itself, so issuing a step takes as long as running it.",
            "CPU: nothing is queued; each call ran its operation before it returned."],
        "parallelism_sweep": [
            "{why}: sweeping the CPU only (two jobs = two threads); the copy overlap needs a GPU."],
        "hybridize": ["{why}: what follows needs an NVIDIA GPU, so the program stops here."],
        "hardware": [
            "CPU: eager PyTorch runs each operation before the call returns, so issuing one is running it.",
            "{why}: what follows needs an NVIDIA GPU, so the program stops here."],
    },
    "mxnet": {
        "auto_parallelism": [
            "{why}: two jobs on the CPU contexts cpu(0) and cpu(1), two names for the same processor; all "
            "figures are CPU figures.",
            "One thread per CPU product (OMP_NUM_THREADS=1). MXNet's OpenBLAS 0.3.13 serves",
            "{why}: what follows needs a GPU that MXNet can use, so the program stops here."],
        "async_computation": [
            "{why}: running on the CPU, where MXNet's engine queues the work just as it would on a GPU.",
            "One thread per CPU product (OMP_NUM_THREADS=1). MXNet's OpenBLAS 0.3.13 serves"],
        "parallelism_sweep": [
            "{why}: sweeping the CPU only (two jobs = the contexts cpu(0) and cpu(1)); the copy overlap needs a "
            "GPU.",
            "One thread per CPU product (OMP_NUM_THREADS=1). MXNet's OpenBLAS 0.3.13 serves"],
        "hybridize": [
            "{why}: running on CPU contexts."],
        "hardware": [
            "One thread per CPU product (OMP_NUM_THREADS=1). MXNet's OpenBLAS 0.3.13 serves"],
    },
}


def check_cpu_notes(out: str, framework: str, script: str, why: str) -> None:
    """The notes of a run without a GPU are exactly the script's CPU_NOTES, in order, with ``why``."""
    expected = [re.escape(note.format(why=why, n="NUMBER")).replace("NUMBER", r"\d+")
                for note in CPU_NOTES[framework][script]]
    shown = CPU_NOTE.findall(out)
    assert len(shown) == len(expected) and all(re.fullmatch(e, s) for e, s in zip(expected, shown)), (
        f"{framework}/{script} without a GPU ({why}) says:\n  " + "\n  ".join(shown)
        + "\ninstead of:\n  " + "\n  ".join(n.format(why=why, n="N") for n in CPU_NOTES[framework][script]))
