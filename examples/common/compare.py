"""``--compare``: the book's figures of an example beside this run's, in one table.

The book's side is the run that the book shows: book-figures.json beside the script in a download's
zip, or, in the book's repository, the stamp of the recording (examples/recordings/<framework>/<name>.ipynb);
both hold what ``keys.book_figures`` writes. This run's side is what it published, the models of its
devices, this machine's CPU and the versions running now.

Like with like only: a figure measured on the run's devices is compared where both runs used the same
devices (their names without models, as a set: {cpu, cuda:0}); one measured on the host CPU whatever the
devices (keys.HOST_FIGURES) always is. Every other figure is listed once, under why it is not compared.
A rate that the hardware limits (keys.LIMITS) carries each machine's fraction of its own limit.
"""
import datetime
import importlib
import json
import platform
import shlex
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List, Optional

from common.keys import (HOST_FIGURES, LIMITS, NOT_MEASURED, SETTINGS, UNMEASURED, book_figures, is_rounded,
                         is_spread, unit)
from common.machine import cpu_count, cpu_model, is_cpu, split_label
from common.options import fail, in_kernel, kernel_argv
from common.report import duration, fraction
from common.stats import ratio

#: The book's figures in a download's zip, beside the script.
BOOK_FIGURES = "book-figures.json"
#: Options that change how a run prints, not what it measures: left out of the options compared.
PRINTING = ("--compare", "--json")
#: The two sides, and how the table names them.
SIDES = {"book": "book", "this": "this run"}
#: The parts of a limited rate (its limit and its fraction of it): on the rate's row, never rows themselves.
LIMIT_PARTS = {key for parts in LIMITS.values() for key in parts}
#: The columns at which the lists of figures not compared wrap.
WIDTH = 100


def book_places(folder: Path, framework: str, name: str) -> List[Path]:
    """Where the book's figures of an example lie: a zip's book-figures.json beside the script, or the
    repository's recording."""
    return [folder / BOOK_FIGURES, folder.parent / "recordings" / framework / f"{name}.ipynb"]


def read_book(folder: Path, framework: str, name: str) -> Dict[str, Any]:
    """The book's figures of ``framework/name`` (keys.book_figures' form, with ``source``: the file read),
    from the first of book_places that exists; without either, stop with one line naming both (exit 2)."""
    zipped, recording = book_places(folder, framework, name)
    if zipped.is_file():
        return {**json.loads(zipped.read_text(encoding="utf-8")), "source": str(zipped)}
    if recording.is_file():
        stamp = json.loads(recording.read_text(encoding="utf-8"))["metadata"]["recording"]
        return {**book_figures(stamp, f"{framework}/{name}"), "source": str(recording)}
    fail(f"--compare: the book's figures of {framework}/{name} are neither in {zipped} nor in {recording}")


def library_name(library: str) -> str:
    """How the table names a library of the versions: ``Python``, ``torch``, ``numpy``."""
    return "Python" if library == "python" else library


def running_version(library: str) -> str:
    """The version of Python (``python``) or of an imported library, as this run uses it."""
    return platform.python_version() if library == "python" else importlib.import_module(library).__version__


def run_options() -> str:
    """This run's options (EXAMPLE_ARGS in a kernel), without those that change only how it prints."""
    argv = kernel_argv() if in_kernel() else sys.argv[1:]
    return shlex.join(arg for arg in argv if arg not in PRINTING)


def book_side(book: Dict[str, Any]) -> Dict[str, Any]:
    """The book's run: where its figures come from, its machine, versions, date, options and values."""
    return {"source": book["source"], "machine": book["machine"], "versions": book["versions"],
            "date": book["recorded_at"][:10], "options": book["example_args"], "values": book["values"]}


def this_side(values: Dict[str, Any], libraries: List[str]) -> Dict[str, Any]:
    """This run: the GPU models of its published devices, this CPU, the versions of ``libraries`` running
    now, today's date (UTC, as the book's), its options and its values."""
    gpus = [model for name, model in map(split_label, values.get("devices") or []) if not is_cpu(name)]
    return {"machine": {"gpus": gpus, "cpu": cpu_model(), "cpu_threads": cpu_count()},
            "versions": {library: running_version(library) for library in libraries},
            "date": datetime.datetime.now(datetime.timezone.utc).date().isoformat(), "options": run_options(),
            "values": values}


def device_names(values: Dict[str, Any]) -> set:
    """The names of a run's devices without their models: {"cpu", "cuda:0"}."""
    return {split_label(label)[0] for label in values.get("devices") or []}


def is_figure(key: str, pair: List[Any]) -> bool:
    """True for a measured number on either side: not a setting, spread, rounded copy, limit or fraction of
    one, nor a name, list or flag."""
    if key in SETTINGS or key in LIMIT_PARTS or is_spread(key) or is_rounded(key):
        return False
    known = [v for v in pair if v is not None]
    return bool(known) and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in known)


def other_devices(book: set, this: set) -> str:
    """Why a figure measured on the run's devices is not compared, when the runs used other devices."""
    if any(not is_cpu(name) for name in book) and all(is_cpu(name) for name in this):
        return "needs a GPU"
    book, this = (", ".join(sorted(names)) or "none" for names in (book, this))
    return f"ran on other devices (book: {book}; this: {this})"


def reason(key: str, sides: Dict[str, Dict[str, Any]]) -> Optional[str]:
    """Why ``key`` is not compared (None where it is): other devices, or a side without it."""
    book, this = (sides[side]["values"].get(key) for side in SIDES)
    devices = [device_names(sides[side]["values"]) for side in SIDES]
    if key not in HOST_FIGURES and devices[0] != devices[1]:
        return other_devices(*devices)
    if book is None:
        return "not in the book's run"
    if this is None:
        return next((why for start, why in UNMEASURED.items() if key.startswith(start)), NOT_MEASURED)
    return None


def row(key: str, sides: Dict[str, Dict[str, Any]]) -> Dict[str, Any]:
    """One compared figure: both values and this / book; for a limited rate, each side's limit and
    fraction of it."""
    book, this = (sides[side]["values"][key] for side in SIDES)
    out = {"key": key, "book": book, "this": this, "ratio": ratio(this, book)}
    if key in LIMITS:
        limit, frac = LIMITS[key]
        for side in SIDES:
            values = sides[side]["values"]
            out.update({f"{side}_limit": values.get(limit), f"{side}_frac": values.get(frac)})
    return out


def setting_text(key: str, value: Any) -> str:
    """A setting as the differs line writes it: devices by name, lists with commas, None as none."""
    if key == "devices":
        return ", ".join(sorted(device_names({"devices": value}))) or "none"
    if isinstance(value, list):
        return ",".join(map(str, value))
    return "none" if value is None else str(value)


def differences(sides: Dict[str, Dict[str, Any]]) -> List[str]:
    """What differs between the runs: the GPU models, CPU, CPU threads, each version, the options, and
    each setting with both values."""
    book, this = (sides[side] for side in SIDES)
    machines = [book["machine"], this["machine"]]
    same = {"GPU model": set(machines[0]["gpus"]) == set(machines[1]["gpus"]),
            "CPU": machines[0]["cpu"] == machines[1]["cpu"],
            "CPU threads": machines[0]["cpu_threads"] == machines[1]["cpu_threads"]}
    found = [what for what, alike in same.items() if not alike]
    found += [library_name(library) for library, version in book["versions"].items()
              if this["versions"][library] != version]
    found += ["options"] if book["options"] != this["options"] else []
    settings = [k for k in [*this["values"], *book["values"]] if k in SETTINGS]
    for key in dict.fromkeys(settings):
        shown = [setting_text(key, side["values"].get(key)) for side in (book, this)]
        if shown[0] != shown[1]:
            found.append(f"{key} (book: {shown[0]}; this: {shown[1]})")
    return found


def comparison(book: Dict[str, Any], values: Dict[str, Any]) -> Dict[str, Any]:
    """The book's run (``read_book``) and this one (its published ``values``): both sides, what differs,
    the units, a row per compared figure and the figures not compared, grouped by reason."""
    sides = {"book": book_side(book), "this": this_side(values, list(book["versions"]))}
    rows, skipped = [], {}
    for key in dict.fromkeys([*values, *book["values"]]):
        if not is_figure(key, [sides[side]["values"].get(key) for side in SIDES]):
            continue
        why = reason(key, sides)
        if why is None:
            rows.append(row(key, sides))
        else:
            skipped.setdefault(why, []).append(key)
    units = {found["key"]: unit(found["key"]) for found in rows if unit(found["key"])}
    return {**sides, "differs": differences(sides), "units": units, "rows": rows,
            "not_compared": [{"reason": why, "keys": keys} for why, keys in skipped.items()]}


def significant(value: float) -> str:
    """A number with 3 significant digits and no exponent: 3030, 68.3, 1.00, 0.00245."""
    rounded = float(f"{value:.3g}")
    return f"{rounded:.0f}" if abs(rounded) >= 1000 else f"{rounded:#.3g}".rstrip(".")


def value_text(key: str, value: Any) -> str:
    """A figure as the table writes it: a time in s, ms or µs; a count whole; a rate or ratio with 3
    significant digits."""
    if value is None:
        return "n/a"
    if unit(key) == "s":
        return duration(value)
    return str(value) if isinstance(value, int) else significant(value)


def side_line(side: Dict[str, Any], label: str) -> str:
    """One run in one line: GPU models, CPU and threads, versions, date and options."""
    machine = side["machine"]
    gpus = f"GPU {', '.join(machine['gpus'])}" if machine["gpus"] else "no GPU"
    versions = ", ".join(f"{library_name(library)} {v}" for library, v in side["versions"].items())
    return (f"{label + ':':<10}{gpus}; CPU {machine['cpu']}, {machine['cpu_threads']} threads; {versions}; "
            f"{side['date']}; options: {side['options'] or 'none'}")


def row_cells(found: Dict[str, Any], units: Dict[str, str]) -> List[str]:
    """A row's cells: figure, unit, book, this run, this/book, and each side's fraction of its limit."""
    key = found["key"]
    fracs = [fraction(found[f"{side}_frac"]) if f"{side}_frac" in found else "" for side in SIDES]
    return [key, units.get(key, ""), value_text(key, found["book"]), value_text(key, found["this"]),
            "n/a" if found["ratio"] is None else significant(found["ratio"]), *fracs]


def table(compared: Dict[str, Any]) -> str:
    """The comparison as text: the book's source, both runs, what differs, one row per compared figure,
    then the figures not compared, once each, under their reason."""
    titles = ["figure", "unit", "book", "this run", "this/book", "book/limit", "this/limit"]
    cells = [titles, *(row_cells(found, compared["units"]) for found in compared["rows"])]
    widths = [max(len(line[i]) for line in cells) for i in range(len(titles))]
    lines = [f"--compare: the book's figures ({compared['book']['source']}) beside this run's",
             *(side_line(compared[side], label) for side, label in SIDES.items()),
             f"{'differs:':<10}{', '.join(compared['differs']) or 'nothing'}", ""]
    lines += ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))).rstrip()
              for line in cells]
    if compared["not_compared"]:
        lines += ["", "not compared:"]
        lines += [textwrap.fill(f"{group['reason']}: {', '.join(group['keys'])}", WIDTH, initial_indent="  ",
                                subsequent_indent="    ", break_on_hyphens=False) for group in compared["not_compared"]]
    return "\n".join(lines)
