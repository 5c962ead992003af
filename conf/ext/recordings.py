"""Recorded runs of the example scripts: where they live, what they hold, and whether they are current.

An example is a jupytext percent script under ``examples/<framework>/``. Its recording is the notebook
that myst-nb executed in the last execute-mode build, kept in ``examples/recordings/<framework>/``,
with a stamp in ``metadata["recording"]``: the machine, the library versions, the date, the run time,
the values the script glued, and a hash of every source file the run depended on.

Every other run of the same sources is kept beside it, as a list of stamps in ``<name>.runs.json``,
oldest first: a run that a new recording replaces, and a run recorded to be kept as a run only (on a
second GPU model, ``make record AS_RUN=1``). From them the book shows how much its figures move from run
to run and from machine to machine. A run of other sources is not comparable: a new recording of changed
sources drops the list.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from babel.dates import format_datetime

FRAMEWORKS = ("pytorch", "mxnet")
FRAMEWORK_TITLES = {"pytorch": "PyTorch", "mxnet": "MXNet"}
JUPYTEXT_HEADER = "# ---\n# jupyter:\n"


class RecordingError(Exception):
    """A recording is missing, unreadable or older than its source."""


# How each book writes a run's day and minute (UTC): ISO dates in English; in Turkish the day, the
# month's name and the year (a colon in the time, which a dot would make look like a decimal number).
DATE_PATTERNS = {"en": ("yyyy-MM-dd", "yyyy-MM-dd HH:mm"), "tr": ("d MMMM y", "d MMMM y HH:mm")}


def recorded_when(stamp: dict, language: str = "en", minute: bool = False) -> str:
    """The day a stamp's run was recorded (``minute``: to the minute), as ``language`` writes dates:
    ``2026-12-06 20:42`` in English, ``6 Aralık 2026 20:42`` in Turkish. The examples of one record
    step share its time (conf/record.py)."""
    when = datetime.fromisoformat(stamp["recorded_at"]).astimezone(timezone.utc)
    return format_datetime(when, DATE_PATTERNS[language][minute], tzinfo=timezone.utc, locale=language)


def default_examples_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "examples"


def is_example(path: Path) -> bool:
    """An example script opens with a jupytext header; helper modules do not."""
    return path.suffix == ".py" and path.read_text(encoding="utf-8").startswith(JUPYTEXT_HEADER)


@dataclass(frozen=True)
class Example:
    """One example script of one framework, e.g. ``pytorch/auto_parallelism``."""

    examples_dir: Path
    framework: str
    name: str

    @classmethod
    def parse(cls, examples_dir: Path, ident: str) -> Example:
        framework, _, name = ident.removesuffix(".py").partition("/")
        if framework not in FRAMEWORKS or not name or "/" in name:
            raise RecordingError(f"{ident!r} is not an example name like 'pytorch/auto_parallelism'")
        example = cls(examples_dir, framework, name)
        if not example.script.is_file():
            raise RecordingError(f"there is no example script {example.script}")
        return example

    @property
    def ident(self) -> str:
        return f"{self.framework}/{self.name}"

    @property
    def script(self) -> Path:
        return self.examples_dir / self.framework / f"{self.name}.py"

    @property
    def recording(self) -> Path:
        return self.examples_dir / "recordings" / self.framework / f"{self.name}.ipynb"

    def sources(self) -> list[Path]:
        """The script, the helper modules beside it, and the framework-agnostic helpers."""
        helpers = [p for p in sorted(self.script.parent.glob("*.py")) if not is_example(p)]
        common = sorted((self.examples_dir / "common").glob("*.py"))
        return [self.script, *helpers, *common]

    @property
    def runs(self) -> Path:
        """The stamps of the other runs of the recording's sources, oldest first."""
        return self.recording.with_suffix(".runs.json")

    def source_hash(self) -> str:
        digest = hashlib.sha256()
        for path in self.sources():
            digest.update(path.relative_to(self.examples_dir).as_posix().encode() + b"\0")
            digest.update(path.read_bytes() + b"\0")
        return digest.hexdigest()

    def refresh_command(self) -> str:
        return f"make record EXAMPLES={self.ident}"


def all_examples(examples_dir: Path) -> list[Example]:
    return [
        Example(examples_dir, framework, path.stem)
        for framework in FRAMEWORKS
        for path in sorted((examples_dir / framework).glob("*.py"))
        if is_example(path)
    ]


@dataclass(frozen=True)
class Recording:
    """A loaded recording: its cells by tag, its stamp and its glued values."""

    example: Example
    notebook: dict

    @property
    def stamp(self) -> dict:
        return self.notebook["metadata"]["recording"]

    def cell(self, tag: str) -> dict:
        for cell in self.notebook["cells"]:
            if tag in cell.get("metadata", {}).get("tags", []):
                return cell
        tags = [t for c in self.notebook["cells"] for t in c.get("metadata", {}).get("tags", [])]
        raise RecordingError(
            f"{self.example.ident} has no cell tagged {tag!r}; its tagged cells are: {', '.join(tags)}"
        )

    def value(self, key: str) -> str:
        """The text form of a value the script glued (``myst_nb.glue``)."""
        glue = self.stamp.get("glue", {})
        if key not in glue:
            raise RecordingError(
                f"{self.example.ident} glued no value {key!r}; it glued: {', '.join(sorted(glue))}"
            )
        return glue[key]


def load_recording(example: Example) -> Recording:
    """Load the recording of an example and check that it was made from the current source."""
    refresh = f"Record it on a GPU machine with: {example.refresh_command()}"
    if not example.recording.is_file():
        raise RecordingError(f"{example.ident} has no recording ({example.recording}). {refresh}")
    try:
        notebook = json.loads(example.recording.read_text(encoding="utf-8"))
        recorded_hash = notebook["metadata"]["recording"]["source_sha256"]
    except (ValueError, KeyError) as err:
        raise RecordingError(f"{example.recording} is not a recording ({err!r}). {refresh}") from err
    if recorded_hash != example.source_hash():
        raise RecordingError(
            f"{example.ident} is stale: {example.script.name} or its helpers changed since the recording "
            f"{example.recording.name} was made. {refresh}"
        )
    return Recording(example, notebook)


def read_runs(example: Example) -> list[dict]:
    """The example's other kept runs, as stored ([] without any); only their form is checked."""
    path = example.runs
    try:
        runs = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except ValueError as err:
        raise RecordingError(f"{path} is not a list of stamps ({err!r})") from err
    if not isinstance(runs, list) or not all(isinstance(run, dict) for run in runs):
        raise RecordingError(f"{path} is not a list of stamps")
    return runs


def load_runs(recording: Recording) -> list[dict]:
    """The stamps of the other kept runs of the recording's sources, oldest first ([] without any). A
    kept run of other sources is an error: it would be compared with code it did not run."""
    path = recording.example.runs
    runs = read_runs(recording.example)
    for run in runs:
        if run.get("source_sha256") != recording.stamp["source_sha256"]:
            raise RecordingError(f"{path} keeps a run of other sources ({run.get('recorded_at')}); "
                                 f"record {recording.example.ident} again, or delete it")
    return sorted(runs, key=lambda run: run["recorded_at"])
