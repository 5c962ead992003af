"""The two downloads of each example: a zip that runs from an empty folder, and its recording.

The zip holds the script, every project module it imports, the notes its helpers cite (MXNet's
MEASUREMENTS.md), the recorded notebook beside them, a README.txt and a requirements.txt; a PyTorch zip
also holds requirements-cpu.txt, which pins torch's CPU build (``+cpu``) from PyTorch's CPU index, so that
an install without that index stops instead of taking PyPI's CUDA build.
requirements.txt pins versions known to work with the script, never the recording machine's own
(numpy 2.5.2 of a Python 3.12 run does not install on Python 3.11): each package that the zip's files
import or that the stamp names, at the version of the book's requirements.txt, with which ``make
test`` runs every zip on Python 3.11; from the Pythons that ``download_pins_since`` names on, its
versions take their place (a pin without a wheel there). The README names those Pythons and gives
the install line without a GPU and the one with an NVIDIA GPU. In a book of another language than
the code's, the zip's Python files and the notebook carry the comments and docstrings that the book's
catalog translates (``code_comments.py``), as its pages show them; the code itself is the same.

The notebook, in the zip and offered alone beside it, starts with a cell that stops it with one line
naming the zip where it finds no helpers beside it: downloaded alone, it cannot run.

The zip's book-figures.json holds the figures that the book shows for the example, under the names and
units that the script's ``--json`` prints, with the run that measured them (machine, versions, date,
options): a reader sets them beside a run of their own with the script's --compare.
"""

from __future__ import annotations

import ast
import importlib.util
import io
import json
import sys
import textwrap
import zipfile
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version
from sphinx.locale import _

from code_comments import translate, translate_notebook
from recordings import FRAMEWORK_TITLES, Example

# Modules that only a Jupyter kernel imports (the recording's glue and figures), and pip names that
# differ from the module's.
KERNEL_ONLY = {"myst_nb", "IPython"}
PIP_NAMES = {"pynvml": "nvidia-ml-py"}
# torch's CPU build comes from PyTorch's own index; PyPI's Linux wheel is the CUDA build.
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# A PyTorch zip's install file for a machine without an NVIDIA GPU.
CPU_REQUIREMENTS = "requirements-cpu.txt"
# The Python that the README's lines make the environment with (download_pythons names the others).
VENV_PYTHON = "python3.12"
README_WIDTH = 88
ZIP_DATE = (2026, 1, 1, 0, 0, 0)  # a fixed date: the same sources give the same archive
# The zip's file of the book's figures and the run that measured them.
BOOK_FIGURES = "book-figures.json"


class DownloadError(Exception):
    """A zip cannot say what to install."""


def download_files(env, recording) -> tuple[Path, Path]:
    """The zip and the notebook of an example, made once per build in the doctree folder, with the code's
    comments in the book's language."""
    example = recording.example
    folder = Path(env.app.doctreedir) / "example-downloads" / example.framework
    folder.mkdir(parents=True, exist_ok=True)
    stem = f"{example.name}-{example.framework}"
    archive, notebook = folder / f"{stem}.zip", folder / f"{stem}.ipynb"
    made = env.app.__dict__.setdefault("_example_downloads", set())
    if stem not in made:
        config = env.config
        files = {p.relative_to(example.examples_dir / example.framework).as_posix()
                 if p.parent == example.script.parent else p.relative_to(example.examples_dir).as_posix():
                 translate(p.read_text(encoding="utf-8"), config.language).encode("utf-8")
                 for p in example.sources()}
        packages = imported_packages(files) | set(recording.stamp["versions"]) - {"python"}
        files.update({p.name: p.read_bytes() for p in sorted(example.script.parent.glob("*.md"))})
        pins = book_pins(Path(config.download_pins_from))
        files["requirements.txt"] = requirements(example.framework, packages, pins, config.download_pins_since).encode()
        if example.framework == "pytorch":
            files[CPU_REQUIREMENTS] = cpu_requirements(pins["torch"]).encode()
        files["README.txt"] = readme(example, config.project, config.download_pythons, recording.stamp["versions"],
                                     config.language).encode()
        files[BOOK_FIGURES] = book_figures(recording)
        files[f"{example.name}.ipynb"] = notebook_bytes(recording.notebook, config.language, f"{stem}.zip",
                                                        f"{example.name}.ipynb")
        write_zip(archive, files)
        write_if_changed(notebook, files[f"{example.name}.ipynb"])
        made.add(stem)
    return archive, notebook


def example_keys(examples_dir: Path):
    """The examples' own module of figure names and units (examples/common/keys.py), loaded by its path: it
    also writes what book-figures.json holds, which a script's --compare reads."""
    path = examples_dir / "common" / "keys.py"
    if not path.is_file():
        raise DownloadError(f"{path} is missing: the zips' book-figures.json takes its units from it")
    spec = importlib.util.spec_from_file_location("example_keys", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def book_figures(recording) -> bytes:
    """The figures the book shows for the example (every glued value), with their units and the run that
    measured them, as JSON: the names and units are those that the script's ``--json`` prints."""
    figures = example_keys(recording.example.examples_dir).book_figures(recording.stamp, recording.example.ident)
    return (json.dumps(figures, indent=1, ensure_ascii=False) + "\n").encode()


def imported_packages(files: dict[str, bytes]) -> set[str]:
    """The pip names of the third-party top-level modules that these Python files import, anywhere."""
    local = {name.split("/")[0].removesuffix(".py") for name in files}
    found = set()
    for name, data in files.items():
        if name.endswith(".py"):
            for node in ast.walk(ast.parse(data)):
                if isinstance(node, ast.Import):
                    found.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
    modules = found - local - set(sys.stdlib_module_names) - KERNEL_ONLY - {"__future__"}
    return {PIP_NAMES.get(module, module) for module in modules}


def book_pins(path: Path) -> dict[str, str]:
    """The version that a requirements file pins for each package (``name==version``, with a local tag
    such as ``+cpu``); option lines and comments are skipped."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        try:
            requirement = Requirement(line)
        except InvalidRequirement as err:
            raise DownloadError(f"{path}: {err}") from None
        versions = [s.version for s in requirement.specifier if s.operator == "=="]
        if versions:
            pins[canonicalize_name(requirement.name)] = versions[0]
    return pins


def requirements(framework: str, packages: set[str], pins: dict[str, str],
                 pins_since: dict[str, dict[str, dict[str, str]]]) -> str:
    """requirements.txt of a zip: each package at its pin, and, from each Python of ``pins_since`` on,
    at the version given there (with an environment marker); a package pinned there only is added."""
    steps = sorted(pins_since, key=Version)
    later = {python: {canonicalize_name(n): v for n, v in pins_since[python].get(framework, {}).items()}
             for python in steps}
    pins = {name: Version(version).public for name, version in pins.items()}  # torch==2.13.0, not +cpu
    names = {canonicalize_name(p) for p in packages} | {n for versions in later.values() for n in versions}
    lines = []
    for name in sorted(names):
        # (from this Python on, the version): None for the book's pin, which holds from the start
        spans = [(None, pins.get(name))] + [(python, later[python][name]) for python in steps if name in later[python]]
        if spans[0][1] is None and len(spans) == 1:
            raise DownloadError(f"the downloads need {name}, which requirements.txt does not pin: pin it there")
        for (start, version), (end, _next) in zip(spans, spans[1:] + [(None, None)]):
            if version is None:
                continue
            markers = [f'python_version >= "{start}"' if start else "", f'python_version < "{end}"' if end else ""]
            marker = " and ".join(m for m in markers if m)
            lines.append(f"{name}=={version}" + (f"; {marker}" if marker else ""))
    return "\n".join(lines) + "\n"


def cpu_requirements(torch_pin: str) -> str:
    """requirements-cpu.txt of a PyTorch zip: requirements.txt with torch's CPU build, which only PyTorch's
    CPU index has: where pip cannot reach it, the install stops with "No matching distribution found for
    torch==...+cpu" instead of taking PyPI's CUDA build (several GB) without a word."""
    comment = _("torch's CPU build, from PyTorch's CPU index: pip stops where it cannot reach it")
    return (f"# {comment}\n--extra-index-url {TORCH_CPU_INDEX}\n"
            f"torch=={Version(torch_pin).public}+cpu\n-r requirements.txt\n")


def readme(example: Example, book: str, pythons: list[str], recorded: dict, language: str) -> str:
    """README.txt of a zip, in the book's language: which Python, how to install, how to run. Prose is
    wrapped; each command stands alone on an indented line."""
    script = example.script.name
    install = "python -m pip install -r"
    if example.framework == "pytorch":
        install_lines = [
            _("Without an NVIDIA GPU (torch's CPU build, about 1 GB, from PyTorch's CPU index: where pip "
              "cannot reach that index, it stops with \"No matching distribution found for torch==...+cpu\", "
              "and installs nothing else in its place):"),
            f"    {install} {CPU_REQUIREMENTS}",
            _("With an NVIDIA GPU on Linux (torch's CUDA build from PyPI, with NVIDIA's libraries: "
              "several GB):"),
            f"    {install} requirements.txt",
        ]
    else:
        install_lines = [
            _("MXNet's wheel on PyPI is its CPU build, and the book runs MXNet's examples on CPU contexts "
              "(MXNet's GPU builds stop at CUDA 11.7), so one line serves with or without a GPU:"),
            f"    {install} requirements.txt",
        ]
    versions = ", ".join(f"{name} {version}" for name, version in recorded.items())
    notebook = f"{example.name}.ipynb"
    paragraphs = [
        _("%(script)s (%(framework)s), an example of the book \"%(book)s\".")
        % {"script": script, "framework": FRAMEWORK_TITLES[example.framework], "book": book},
        _("It needs Python %s.") % _(" or ").join(pythons) + " "
        + _("Unpack this archive into an empty folder; in that folder, make a virtual environment with "
            "%(python)s (or %(other)s) and activate it:")
        % {"python": VENV_PYTHON, "other": _(" or ").join(f"python{p}" for p in pythons if f"python{p}" != VENV_PYTHON)},
        f"    {VENV_PYTHON} -m venv .venv\n    . .venv/bin/activate",
        _("Then install what the script needs."),
        *install_lines,
        _("Then run, in that folder:"),
        f"    python {script} --help\n    python {script}",
        _("%(notebook)s, beside the script and its helpers, is the run recorded in the book, as a notebook: "
          "open it in Jupyter from this folder (Jupyter is not in requirements.txt), where it finds the "
          "helpers. On its own, without this folder, it stops at its first cell.") % {"notebook": notebook},
        _("%(figures)s holds the figures that the book shows for this example, under the names and units "
          "that --json prints, with the machine, versions, date and options of the run that measured them: "
          "run python %(script)s --compare to see them beside your own run's, in one table.")
        % {"figures": BOOK_FIGURES, "script": script},
        _("In the notebook, the script's options (those of --help) come from the environment variable "
          "EXAMPLE_ARGS: start Jupyter with, for example, EXAMPLE_ARGS='--repeats 10' jupyter lab."),
        _("The script prints in English; with --figures DIR it saves each figure in English and in "
          "Turkish (NAME.en.png, NAME.tr.png)."),
        *([_("The code of the script, its helpers and the notebook is English, as are its docstrings that "
             "the pages do not show; the comments and docstrings that the pages show are translated.")]
          if language != "en" else []),
        _("requirements.txt pins versions known to work with the script: those that the book's tests "
          "run it with, and, where those do not install on a newer Python, versions that do. The run "
          "recorded in the book used its machine's versions: %s.") % versions,
    ]
    wrapped = [text if text.startswith("    ") else textwrap.fill(text, README_WIDTH, break_on_hyphens=False)
               for text in paragraphs]
    return "\n\n".join(wrapped) + "\n"


def zip_guard(archive: str, notebook: str) -> dict:
    """The notebook's first cell: where no helpers.py lies beside the notebook (it was downloaded alone),
    one line that names the zip, and the notebook stops there; its later cells then do nothing, as after
    helpers.gpu() on a machine without a GPU. In the zip's folder it does nothing."""
    message = _("This notebook needs the helpers in %(archive)s: download that zip from the book's page, "
                "unpack it, and open %(notebook)s in its folder.") % {"archive": archive, "notebook": notebook}
    comment = _("Without the helpers of the zip beside this notebook, stop here with one line.")
    source = f"""# {comment}
import pathlib

if not pathlib.Path("helpers.py").is_file():
    from IPython import get_ipython

    class ZipNeeded(Exception):
        pass

    print({message!r})
    shell = get_ipython()
    shell.set_custom_exc((ZipNeeded,), lambda *args, **kwargs: [])
    shell.input_transformers_cleanup.append(lambda lines: [])
    raise ZipNeeded"""
    return {"cell_type": "code", "execution_count": None, "id": "zip-guard",
            "metadata": {"tags": ["zip-guard", "raises-exception"]}, "outputs": [],
            "source": source.splitlines(keepends=True)}


def notebook_bytes(notebook: dict, language: str, archive: str, name: str) -> bytes:
    """The recorded notebook with its comments in ``language`` and the zip's guard as its first cell,
    written as nbformat writes it."""
    translated = translate_notebook(notebook, language)
    translated["cells"] = [zip_guard(archive, name), *translated["cells"]]
    text = json.dumps(translated, indent=1, ensure_ascii=False)
    return (text + "\n").encode("utf-8")


def write_zip(path: Path, files: dict[str, bytes]) -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(name, ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, files[name])
    write_if_changed(path, buffer.getvalue())


def write_if_changed(path: Path, data: bytes) -> None:
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)
