"""Reporting of measured figures, printed text and drawn figures.

Every number the book may quote goes through ``Report.publish(key, value)``,
exactly once: it is kept for ``--json`` and, inside a Jupyter kernel with
myst-nb installed, glued with ``myst_nb.glue(key, value, display=False)`` so
the book can paste it. Values must be plain Python (bool, int, float, str,
None or lists of them); numpy scalars and 0-d tensors are converted with
``.item()``. A timing is published with ``publish_timing(key, samples)``: the
median under ``key`` and [min, max] under ``key_spread``.

With ``--json`` the script prints only one JSON object: ``Report`` sends
everything else written to stdout into a buffer and ``finish()`` writes the
object to the real stdout, with a ``units`` field that names the unit of
every value that has one (``"t_run": "s"``, ``"link_peak_gbps": "GB/s"``). Keys listed in ``keys`` (and their spreads) but
never published are published as None by ``finish()`` (None = not applicable
on this machine). Given the book's figures (``--compare``), ``finish()`` then sets
them beside this run's (common.compare): one table, or with ``--json`` a
``compare`` member of the object.
"""
import base64
import io
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence

from common.i18n import LANGUAGES, number, text
from common.keys import published, spread_key, unit
from common.options import TIMING_LEGEND, in_kernel
from common.stats import median, spread


def _decimals(value: float) -> int:
    """The decimals that show ``value`` with 3 significant digits (at least 1 below 1000)."""
    return 2 if value < 9.995 else 1 if value < 99.95 else 0


def _unit(t: float) -> tuple[float, str, int]:
    """The unit that shows ``t`` (seconds) as 1 to 999 of it, and the decimals for 3 significant digits."""
    scale, unit = next((s, u) for s, u in ((1, "s"), (1e3, "ms"), (1e6, "µs")) if t * s >= 1 or u == "µs")
    return scale, unit, _decimals(t * scale)


# The columns of the sweep table: key of a row (its title is the figure text "sweep_<key>"), and how
# to write its value.
SWEEP_COLUMNS = [("one", "ms"), ("two", "ms"), ("overlap_two", "ratio"), ("copy", "ms"), ("both", "ms"),
                 ("overlap_copy", "ratio")]


def sweep_table(rows: dict, copies: bool, lang: str = "en") -> str:
    """The sweep's rows ({size: row}) as a table in ``lang``, every time in ms with 3 significant digits
    (never a number that reads like thousands, such as 130.975); the copy columns only with ``copies``."""
    columns = [(text(lang, f"sweep_{key}"), key, how) for key, how in SWEEP_COLUMNS
               if copies or key not in ("copy", "both", "overlap_copy")]
    lines = ["  ".join([f"{text(lang, 'sweep_size'):>6}"] + [title for title, _, _ in columns])]
    for size, row in rows.items():
        cells = [number(row[key] * 1e3, lang, f".{_decimals(row[key] * 1e3)}f") if how == "ms"
                 else fraction(row[key], lang) for _, key, how in columns]
        lines.append("  ".join([f"{size:>6}"] + [f"{cell:>{len(title)}}" for cell, (title, _, _) in zip(cells, columns)]))
    return "\n".join(lines)


def duration(seconds: float) -> str:
    """One time with 3 significant digits in s, ms or µs: ``131 ms``."""
    scale, unit, decimals = _unit(seconds)
    return f"{seconds * scale:.{decimals}f} {unit}"


def timing(samples: Optional[Sequence[float]]) -> str:
    """Format a timing as its median with its spread, in the median's unit, every number with 3
    significant digits: ``131 ms [130-133]``, ``9.18 ms [8.36-10.7]``."""
    if not samples:
        return "n/a"
    mid, (low, high) = median(samples), spread(samples)
    scale = _unit(mid)[0]
    low, high = (f"{t * scale:.{_decimals(t * scale)}f}" for t in (low, high))
    return f"{duration(mid)} [{low}-{high}]"


_legend_said = [False]


def print_timings(samples: Dict[str, Sequence[float]]) -> None:
    """Print ``label: 131 ms [130-133]`` for each case; the first time, under a heading that says
    what the numbers are (TIMING_LEGEND), so that a script run on its own explains its brackets once."""
    if not _legend_said[0]:
        print(f"Times: {TIMING_LEGEND}.")
        _legend_said[0] = True
    for label, values in samples.items():
        print(f"{label}: {timing(values)}")


def fraction(x: Optional[float], lang: str = "en") -> str:
    """Format an overlap or a fraction: ``0.97``, in Turkish ``0,97`` (``n/a`` for None)."""
    return "n/a" if x is None else number(x, lang, ".2f")


def plain(value: Any) -> Any:
    """Convert a value to plain JSON-able Python, or raise TypeError."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):  # numpy scalar, 0-d tensor
        return plain(value.item())
    raise TypeError(f"cannot publish a {type(value).__name__}; use plain Python values")


class Report:
    """Collects published figures; handles --json, --figures and myst-nb glue."""

    def __init__(self, options: Any = None, keys: Iterable[str] = (), book: Optional[Dict[str, Any]] = None):
        self.json = bool(getattr(options, "json", False))
        self.book = book  # the book's figures (common.compare.read_book) with --compare, else None
        figures = getattr(options, "figures", None)
        self.figures_dir = Path(figures) if figures else None
        self.keys = published(keys)
        self.values: Dict[str, Any] = {}
        self.saved: List[Path] = []  # the figures saved with --figures
        self._stdout = None
        if self.json:  # keep stdout clean for the one JSON object
            self._stdout, sys.stdout = sys.stdout, io.StringIO()
        if hasattr(options, "repeats"):
            self.publish("repeats", options.repeats)

    def publish(self, key: str, value: Any) -> None:
        """Record ``value`` under ``key`` (and glue it in a kernel).

        A key is published once: a second value for it is a bug (the book
        would quote one of two figures), so it raises ValueError. Returns None,
        so that a publish at the end of a notebook cell shows nothing.
        """
        if key in self.values:
            raise ValueError(f"{key!r} is published twice")
        value = plain(value)
        self.values[key] = value
        if in_kernel():
            try:
                from myst_nb import glue
            except ImportError:
                pass
            else:
                glue(key, value, display=False)

    def publish_timing(self, key: str, samples: Optional[Sequence[float]]) -> None:
        """Publish a timing's median as ``key`` and its [min, max] as ``key_spread``."""
        self.publish(key, median(samples) if samples else None)
        self.publish(spread_key(key), spread(samples) if samples else None)

    def publish_all(self, values: Dict[str, Any]) -> None:
        """Publish every key/value of a mapping (e.g. ``{"mode": mode, ...}``)."""
        for key, value in values.items():
            self.publish(key, value)

    def figure(self, draw: Callable[[str], Any], name: str) -> None:
        """Draw a figure in every book language and show it.

        ``draw(lang)`` returns a matplotlib Figure with the texts of ``lang``.
        With --figures DIR each is saved as DIR/name.LANG.png (listed in
        ``saved``). In a kernel each is shown as a PNG output whose metadata
        ``book_language`` says which book shows it. Returns None, so that a
        notebook cell that ends with it shows nothing more.
        """
        import matplotlib.pyplot as plt
        for lang in LANGUAGES:
            fig = draw(lang)
            png = io.BytesIO()
            fig.savefig(png, format="png", dpi=120, bbox_inches="tight")
            plt.close(fig)
            if self.figures_dir is not None:
                self.figures_dir.mkdir(parents=True, exist_ok=True)
                path = self.figures_dir / f"{name}.{lang}.png"
                path.write_bytes(png.getvalue())
                self.saved.append(path)
            if in_kernel():
                from IPython.display import display
                display({"image/png": base64.b64encode(png.getvalue()).decode("ascii"),
                         "text/plain": f"<figure {name} ({lang})>"},
                        raw=True, metadata={"book_language": lang})

    def text(self, write: Callable[[str], str]) -> None:
        """Print a text in every book language, like a figure: ``write(lang)`` returns it in ``lang``.
        A script prints the English one; in a kernel each is an output whose metadata ``book_language``
        says which book shows it."""
        if not in_kernel():
            print(write("en"))
            return
        from IPython.display import display
        for lang in LANGUAGES:
            display({"text/plain": write(lang)}, raw=True, metadata={"book_language": lang})

    def finish(self) -> Dict[str, Any]:
        """Publish None for keys never published; return every value in the order of the keys
        (then any others); with --json print them as the one JSON object. With the book's figures,
        set them beside this run's: a table, or with --json the object's ``compare`` member."""
        for key in self.keys:
            if key not in self.values:
                self.publish(key, None)
        # The contract's order, whatever order the script published in, so the twins' objects match.
        ordered = {key: self.values[key] for key in self.keys}
        ordered.update((key, value) for key, value in self.values.items() if key not in ordered)
        compared = {}
        if self.book is not None:
            from common import compare  # here, not above: compare formats with this module's functions
            compared = {"compare": compare.comparison(self.book, ordered)}
            if not self.json:
                print(compare.table(compared["compare"]))
        if self.json and self._stdout is not None:
            sys.stdout, self._stdout = self._stdout, None  # drop what was printed meanwhile
            units = {key: unit(key) for key in ordered if unit(key)}
            print(json.dumps({**ordered, "units": units, **compared}))
            sys.stdout.flush()
        return ordered
