"""Execute-mode build: run the example scripts through myst-nb once and refresh their recordings.

    python conf/record.py [--examples IDENT_OR_GLOB ...] [--examples-dir DIR]

All of the work happens in a temporary folder. The recordings in ``examples/recordings/`` are replaced
only after every selected example has run without error, so a failed or interrupted run leaves the
previous recordings exactly as they were.
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
from importlib import metadata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "ext"))
from recordings import Example, RecordingError, all_examples, default_examples_dir  # noqa: E402

RECORD_CONF = Path(__file__).resolve().parent / "record"
FRAMEWORK_DISTRIBUTIONS = {"pytorch": "torch", "mxnet": "mxnet"}


def select(examples_dir: Path, patterns: list[str]) -> list[Example]:
    examples = all_examples(examples_dir)
    if not patterns:
        return examples
    chosen = [e for e in examples if any(fnmatch.fnmatch(e.ident, p.removesuffix(".py")) for p in patterns)]
    if not chosen:
        known = ", ".join(e.ident for e in examples)
        raise RecordingError(f"no example matches {' '.join(patterns)}; the examples are: {known}")
    return chosen


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


def execute(examples_dir: Path, examples: list[Example], workdir: Path) -> Path:
    """Run the Sphinx build that executes the examples; return the folder of executed notebooks."""
    outdir = workdir / "out"
    command = [
        sys.executable, "-m", "sphinx", "-b", "dummy", "-q", "-W", "--keep-going",
        "-c", str(RECORD_CONF), "-d", str(workdir / "doctrees"),
        "-D", "include_patterns=" + ",".join(f"{e.ident}.py" for e in examples),
        "-D", f"root_doc={examples[0].ident}",
        str(examples_dir), str(outdir),
    ]
    if subprocess.run(command).returncode != 0:
        data_file = outdir / "execution-data.json"
        runs = json.loads(data_file.read_text()) if data_file.exists() else {}
        failed = [doc for doc, run in runs.items() if run and not run.get("succeeded")]
        which = f" ({', '.join(failed)} failed)" if failed else ""
        raise RecordingError(f"the execute-mode build failed{which}, see above; the recordings are unchanged")
    return outdir


def stamp(example: Example, executed: Path, execution_data: dict, source_hash: str) -> dict:
    glue_file = executed / f"{example.ident}.glue.json"
    glue = json.loads(glue_file.read_text()) if glue_file.exists() else {}
    if "devices" not in glue:
        raise RecordingError(f"{example.ident} did not publish 'devices', the devices it ran on")
    run = execution_data.get(example.ident) or {}
    if not run.get("succeeded"):
        raise RecordingError(f"myst-nb has no successful run of {example.ident}: {run}")
    return {
        "source_sha256": source_hash,
        "recorded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "runtime_s": round(run["runtime"], 2),
        "machine": machine(),
        "versions": versions(example.framework),
        "example_args": os.environ.get("EXAMPLE_ARGS", ""),
        "glue": {key: output["data"]["text/plain"] for key, output in glue.items()},
    }


def record(examples_dir: Path, patterns: list[str]) -> list[Example]:
    examples = select(examples_dir, patterns)
    hashes = {e: e.source_hash() for e in examples}
    with tempfile.TemporaryDirectory(prefix="record-") as tmp:
        workdir = Path(tmp)
        outdir = execute(examples_dir, examples, workdir)
        executed = workdir / "jupyter_execute"
        execution_data = json.loads((outdir / "execution-data.json").read_text())
        staged = []
        for example in examples:
            if example.source_hash() != hashes[example]:
                raise RecordingError(f"{example.script} changed during the run; run again")
            notebook = json.loads((executed / f"{example.ident}.ipynb").read_text())
            notebook["metadata"]["recording"] = stamp(example, executed, execution_data, hashes[example])
            target = workdir / "staged" / f"{example.ident}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            staged.append((target, example.recording))
        # Everything ran: only now touch the recordings, one rename each.
        for source, target in staged:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target.with_suffix(".ipynb.new"))
        for _, target in staged:
            os.replace(target.with_suffix(".ipynb.new"), target)
    return examples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", nargs="*", default=[], metavar="IDENT",
                        help="examples to run, e.g. pytorch/auto_parallelism or 'mxnet/*' (default: all)")
    parser.add_argument("--examples-dir", type=Path, default=default_examples_dir(),
                        help="the examples folder (default: this project's)")
    args = parser.parse_args(argv)
    try:
        done = record(args.examples_dir.resolve(), [p for item in args.examples for p in item.split()])
    except RecordingError as err:
        print(f"record: error: {err}", file=sys.stderr)
        return 1
    for example in done:
        print(f"recorded {example.ident} -> {example.recording}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
