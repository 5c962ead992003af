"""Reporting of measured figures, printed text and drawn figures.

Every number the book may quote goes through ``Report.publish(key, value)``:
it is kept for ``--json`` and, inside a Jupyter kernel with myst-nb installed,
glued with ``myst_nb.glue(key, value, display=False)`` so the book can paste it.
Values must be plain Python (bool, int, float, str, None or lists of them);
numpy scalars and 0-d tensors are converted with ``.item()``.

With ``--json`` the script prints only one JSON object: ``Report`` sends
everything else written to stdout into a buffer and ``finish()`` writes the
object to the real stdout. Keys listed in ``keys`` but never published are
published as None by ``finish()`` (None = not applicable on this machine).
"""
import io
import json
import math
import sys
from pathlib import Path
from typing import Any, Dict, Iterable, Optional

from common.options import in_kernel


def seconds(t: Optional[float]) -> str:
    """Format a time the way every example prints it: ``0.1310 s`` (``n/a`` for None)."""
    return "n/a" if t is None else f"{t:.4f} s"


def fraction(x: Optional[float]) -> str:
    """Format an efficiency or a fraction: ``0.97`` (``n/a`` for None)."""
    return "n/a" if x is None else f"{x:.2f}"


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

    def __init__(self, options: Any = None, keys: Iterable[str] = ()):
        self.json = bool(getattr(options, "json", False))
        figures = getattr(options, "figures", None)
        self.figures_dir = Path(figures) if figures else None
        self.keys = list(keys)
        self.values: Dict[str, Any] = {}
        self._stdout = None
        if self.json:  # keep stdout clean for the one JSON object
            self._stdout, sys.stdout = sys.stdout, io.StringIO()
        for name in ("size", "repeats"):
            if hasattr(options, name):
                self.publish(name, getattr(options, name))

    def publish(self, key: str, value: Any) -> None:
        """Record ``value`` under ``key`` (and glue it in a kernel).

        Returns None, so that a publish at the end of a notebook cell shows nothing.
        """
        value = plain(value)
        self.values[key] = value
        if in_kernel():
            try:
                from myst_nb import glue
            except ImportError:
                pass
            else:
                glue(key, value, display=False)

    def publish_all(self, values: Dict[str, Any]) -> None:
        """Publish every key/value of a mapping (e.g. ``{"t_run": t_run, ...}``)."""
        for key, value in values.items():
            self.publish(key, value)

    def figure(self, fig: Any, name: str) -> Optional[Path]:
        """Save ``fig`` as DIR/name.png when --figures DIR was given, then show it.

        In a kernel this calls plt.show() so the notebook keeps a PNG; as a
        script with a non-interactive backend (Agg) it only closes the figure.
        """
        import matplotlib
        import matplotlib.pyplot as plt
        path = None
        if self.figures_dir is not None:
            self.figures_dir.mkdir(parents=True, exist_ok=True)
            path = self.figures_dir / f"{name}.png"
            fig.savefig(path, dpi=120, bbox_inches="tight")
        if in_kernel() or matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "ps", "cairo", "template"):
            plt.show()
        plt.close(fig)
        return path

    def finish(self) -> Dict[str, Any]:
        """Publish None for keys never published; with --json print the one JSON object."""
        for key in self.keys:
            if key not in self.values:
                self.publish(key, None)
        if self.json and self._stdout is not None:
            sys.stdout, self._stdout = self._stdout, None  # drop what was printed meanwhile
            print(json.dumps(self.values))
            sys.stdout.flush()
        return dict(self.values)
