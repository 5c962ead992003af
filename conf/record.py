"""Execute-mode build: run the example scripts through myst-nb once and refresh their recordings.

    python conf/record.py [--examples IDENT_OR_GLOB ...] [--shard K/N] [--examples-dir DIR]
    python conf/record.py --as-run [--examples ...]
    python conf/record.py --check [--examples ...] [--shard K/N]

All of the work happens in a temporary folder. The recordings in ``examples/recordings/`` are replaced
only after every selected example has run without error, so a failed or interrupted run leaves the
previous recordings exactly as they were. A recording that a run of the same sources replaces joins the
other runs of those sources (``<name>.runs.json``); one of other sources is dropped with them.

``--as-run`` keeps the recordings the book shows and adds this run to their other runs: on a second GPU
model, it records what the book compares across machines. It needs a current recording of each example.

``--shard K/N`` runs the K-th of N parts of the selected examples, split by the run times of their
previous recordings, so that N machines finish at about the same time. Each part writes only its own
recordings, so the parts merge by copying the files. ``--check`` runs nothing: it fails when an example
changed after its recording.
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "ext"))
from recordings import Example, RecordingError, all_examples, default_examples_dir, load_recording, read_runs  # noqa: E402

RECORD_CONF = Path(__file__).resolve().parent / "record"
FRAMEWORK_DISTRIBUTIONS = {"pytorch": "torch", "mxnet": "mxnet"}
# The run time assumed for an example that has no readable recording yet, when splitting into shards.
UNKNOWN_RUNTIME_S = 60.0
# How many of the slowest cells the summary of a record step names.
SLOWEST_CELLS = 8


def select(examples_dir: Path, patterns: list[str]) -> list[Example]:
    examples = all_examples(examples_dir)
    if not patterns:
        return examples
    chosen = [e for e in examples if any(fnmatch.fnmatch(e.ident, p.removesuffix(".py")) for p in patterns)]
    if not chosen:
        known = ", ".join(e.ident for e in examples)
        raise RecordingError(f"no example matches {' '.join(patterns)}; the examples are: {known}")
    return chosen


def recorded_stamp(example: Example) -> dict | None:
    """The stamp of the example's recording, stale or not; None without a readable recording."""
    try:
        stamp = json.loads(example.recording.read_text(encoding="utf-8"))["metadata"]["recording"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return stamp if isinstance(stamp, dict) else None


def previous_runtime(example: Example) -> float | None:
    """How long the example ran in its recording, stale or not; None without a readable recording."""
    try:
        return float(recorded_stamp(example)["runtime_s"])
    except (KeyError, TypeError, ValueError):
        return None


def parse_shard(text: str) -> tuple[int, int]:
    """``"K/N"`` → (K, N), with 1 ≤ K ≤ N."""
    k, slash, n = text.partition("/")
    if not (slash and k.isdigit() and n.isdigit() and 1 <= int(k) <= int(n)):
        raise RecordingError(f"SHARD={text!r} is not K/N with 1 <= K <= N, e.g. SHARD=1/2")
    return int(k), int(n)


def split(examples: list[Example], n: int) -> list[list[Example]]:
    """N parts with about equal total run time: the slowest example first, each to the least loaded part.

    Deterministic: ties go by name and then to the lowest part; every machine computes the same split
    from the same committed recordings.
    """
    cost = {e: previous_runtime(e) or UNKNOWN_RUNTIME_S for e in examples}
    parts: list[list[Example]] = [[] for _ in range(n)]
    loads = [0.0] * n
    for example in sorted(examples, key=lambda e: (-cost[e], e.ident)):
        lightest = min(range(n), key=lambda i: (loads[i], i))
        parts[lightest].append(example)
        loads[lightest] += cost[example]
    return [sorted(part, key=lambda e: e.ident) for part in parts]


def shard(examples: list[Example], text: str) -> list[Example]:
    k, n = parse_shard(text)
    part = split(examples, n)[k - 1]
    if not part:
        raise RecordingError(f"shard {k}/{n} has no examples: there are only {len(examples)} to split")
    return part


def machine() -> dict:
    """The hardware the run had: every GPU the driver lists, and the CPU."""
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        gpus = [line.strip() for line in out.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError):
        gpus = []
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"gpus": gpus, "cpu": cpu, "cpu_threads": os.cpu_count()}


def versions(framework: str) -> dict:
    found = {"python": platform.python_version()}
    for dist in (FRAMEWORK_DISTRIBUTIONS[framework], "numpy"):
        found[dist] = metadata.version(dist)
    return found


def execute(examples_dir: Path, examples: list[Example], workdir: Path, started: float) -> Path:
    """Run the Sphinx build that executes the examples; return the folder of executed notebooks.

    The build prints each example's progress (conf/record/conf.py) from a plan: the examples in the
    order Sphinx reads them, with their previous run times as estimates.
    """
    outdir = workdir / "out"
    plan = workdir / "plan.json"
    plan.write_text(json.dumps({
        "started": started,
        "examples": {e.ident: previous_runtime(e) for e in sorted(examples, key=lambda e: e.ident)},
    }))
    command = [
        sys.executable, "-m", "sphinx", "-b", "dummy", "-q", "-W", "--keep-going",
        "-c", str(RECORD_CONF), "-d", str(workdir / "doctrees"),
        "-D", "include_patterns=" + ",".join(f"{e.ident}.py" for e in examples),
        "-D", f"root_doc={examples[0].ident}",
        str(examples_dir), str(outdir),
    ]
    if subprocess.run(command, env=dict(os.environ, RECORD_PLAN=str(plan))).returncode != 0:
        data_file = outdir / "execution-data.json"
        runs = json.loads(data_file.read_text()) if data_file.exists() else {}
        failed = [doc for doc, run in runs.items() if run and not run.get("succeeded")]
        which = f" ({', '.join(failed)} failed)" if failed else ""
        raise RecordingError(f"the execute-mode build failed{which}, see above; the recordings are unchanged")
    return outdir


def cell_times(notebook: dict) -> dict:
    """Each code cell's run time in seconds, by its first tag ("cell N" without one), taken out of the cells.

    nbclient writes when each cell started and ended into its metadata (conf/record/conf.py asks for it).
    """
    times = {}
    for number, cell in enumerate(c for c in notebook["cells"] if c["cell_type"] == "code"):
        timing = cell.get("metadata", {}).pop("execution", {})
        name = (cell["metadata"].get("tags") or [f"cell {number}"])[0]
        if {"iopub.execute_input", "shell.execute_reply"} <= set(timing):
            began, ended = (datetime.datetime.fromisoformat(timing[k].replace("Z", "+00:00"))
                            for k in ("iopub.execute_input", "shell.execute_reply"))
            times[name] = round((ended - began).total_seconds(), 2)
    return times


def stamp(example: Example, executed: Path, execution_data: dict, source_hash: str, step: dict,
          cells: dict, recorded_at: str) -> dict:
    glue_file = executed / f"{example.ident}.glue.json"
    glue = json.loads(glue_file.read_text()) if glue_file.exists() else {}
    if "devices" not in glue:
        raise RecordingError(f"{example.ident} did not publish 'devices', the devices it ran on")
    run = execution_data.get(example.ident) or {}
    if not run.get("succeeded"):
        raise RecordingError(f"myst-nb has no successful run of {example.ident}: {run}")
    return {
        "source_sha256": source_hash,
        "recorded_at": recorded_at,
        "runtime_s": round(run["runtime"], 2),
        "cell_runtime_s": cells,
        "record_step": step,
        "machine": machine(),
        "versions": versions(example.framework),
        "example_args": os.environ.get("EXAMPLE_ARGS", ""),
        "glue": {key: output["data"]["text/plain"] for key, output in glue.items()},
    }


def summary(examples: list[Example], previous: dict, stamps: dict, step: dict) -> str:
    """The table printed at the end of a record step: each example's run time, then the step's."""
    width = max(len(e.ident) for e in examples)
    lines = [f"{'example':<{width}}  run (s)  previous (s)", f"{'-' * width}  -------  ------------"]
    for example in sorted(examples, key=lambda e: -stamps[e]["runtime_s"]):
        before = previous[example]
        lines.append(f"{example.ident:<{width}}  {stamps[example]['runtime_s']:7.1f}  "
                     + (f"{before:12.1f}" if before is not None else f"{'-':>12}"))
    slowest = sorted(((t, f"{e.ident} [{cell}]") for e in examples
                      for cell, t in stamps[e].get("cell_runtime_s", {}).items()), reverse=True)[:SLOWEST_CELLS]
    if slowest:
        lines.append("slowest cells: " + ", ".join(f"{name} {t:.1f} s" for t, name in slowest))
    where = f" (shard {step['shard']})" if step["shard"] else ""
    plural = "s" if len(examples) != 1 else ""
    lines.append(f"Record step{where}: {len(examples)} example{plural} in {step['wall_s']:.1f} s wall, "
                 f"Sphinx and kernel start-up included")
    return "\n".join(lines)


def replace(examples: list[Example], staged: list[tuple[Path, Path]], hashes: dict) -> None:
    """Only now that everything ran, touch the recordings, one rename each. A replaced run of the same
    sources joins their other runs; one of other sources is not comparable and goes, with them."""
    replaced = {e: old for e in examples if (old := recorded_stamp(e)) and old.get("source_sha256") == hashes[e]}
    for source, target in staged:
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target.with_suffix(".ipynb.new"))
    for example, (_, target) in zip(examples, staged):
        if example in replaced:
            add_run(example, replaced[example])
        else:
            example.runs.unlink(missing_ok=True)
        os.replace(target.with_suffix(".ipynb.new"), target)


def add_run(example: Example, stamp: dict) -> None:
    """Keep ``stamp`` as another run of the recording's sources; the recording stays."""
    runs = [*read_runs(example), stamp]
    example.runs.write_text(json.dumps(runs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def record(examples_dir: Path, examples: list[Example], started: float, shard_text: str,
           as_run: bool = False) -> list[Example]:
    if as_run:  # a run kept beside a recording must have run that recording's sources
        for example in examples:
            load_recording(example)
    hashes = {e: e.source_hash() for e in examples}
    previous = {e: previous_runtime(e) for e in examples}
    with tempfile.TemporaryDirectory(prefix="record-") as tmp:
        workdir = Path(tmp)
        outdir = execute(examples_dir, examples, workdir, started)
        step = {"wall_s": round(time.time() - started, 1), "shard": shard_text,
                "examples": [e.ident for e in examples]}
        # One time for the whole step: the reproducibility note pairs the runs of a step by it.
        recorded_at = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        executed = workdir / "jupyter_execute"
        execution_data = json.loads((outdir / "execution-data.json").read_text())
        staged, stamps = [], {}
        for example in examples:
            if example.source_hash() != hashes[example]:
                raise RecordingError(f"{example.script} changed during the run; run again")
            notebook = json.loads((executed / f"{example.ident}.ipynb").read_text())
            stamps[example] = stamp(example, executed, execution_data, hashes[example], step,
                                    cell_times(notebook), recorded_at)
            notebook["metadata"]["recording"] = stamps[example]
            target = workdir / "staged" / f"{example.ident}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            staged.append((target, example.recording))
        if as_run:
            for example in examples:
                add_run(example, stamps[example])
        else:
            replace(examples, staged, hashes)
    print(summary(examples, previous, stamps, step))
    return examples


def check(examples: list[Example]) -> None:
    """Fail, naming each one, when an example has no recording or changed after its recording."""
    problems = []
    for example in examples:
        try:
            load_recording(example)
        except RecordingError as err:
            problems.append(str(err))
    if problems:
        raise RecordingError("\n".join(["these recordings do not match their examples:", *problems]))


def main(argv: list[str] | None = None) -> int:
    started = time.time()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", nargs="*", default=[], metavar="IDENT",
                        help="examples to run, e.g. pytorch/auto_parallelism or 'mxnet/*' (default: all)")
    parser.add_argument("--shard", default="", metavar="K/N",
                        help="run only the K-th of N parts of the examples, split by their previous run times")
    parser.add_argument("--as-run", action="store_true",
                        help="keep the recordings and add this run to their other runs (a second GPU model)")
    parser.add_argument("--check", action="store_true",
                        help="run nothing; fail if an example has no recording or changed after it")
    parser.add_argument("--examples-dir", type=Path, default=default_examples_dir(),
                        help="the examples folder (default: this project's)")
    args = parser.parse_args(argv)
    examples_dir = args.examples_dir.resolve()
    try:
        examples = select(examples_dir, [p for item in args.examples for p in item.split()])
        if args.shard:
            examples = shard(examples, args.shard)
        if args.check:
            check(examples)
            print(f"{len(examples)} recordings match their examples: {', '.join(e.ident for e in examples)}")
            return 0
        done = record(examples_dir, examples, started, args.shard, args.as_run)
    except RecordingError as err:
        print(f"record: error: {err}", file=sys.stderr)
        return 1
    for example in done:
        print(f"recorded {example.ident} -> {example.runs if args.as_run else example.recording}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
