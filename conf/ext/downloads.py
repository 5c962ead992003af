"""The two downloads of each example: a zip that runs from an empty folder, and its recording.

The zip holds the script, every project module it imports, a README.txt and a requirements.txt.
requirements.txt pins versions known to work with the script, never the recording machine's own
(numpy 2.5.2 of a Python 3.12 run does not install on Python 3.11): each package that the zip's files
import or that the stamp names, at the version of the book's requirements.txt, with which ``make
test`` runs every zip on Python 3.11; from the Pythons that ``download_pins_since`` names on, its
versions take their place (a pin without a wheel there). The README names those Pythons and gives
the install line without a GPU and the one with an NVIDIA GPU. In a book of another language than
the code's, the zip's Python files and the notebook carry the comments and docstrings that the book's
catalog translates (``code_comments.py``), as its pages show them; the code itself is the same.
"""

from __future__ import annotations

import ast
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
README_WIDTH = 88
ZIP_DATE = (2026, 1, 1, 0, 0, 0)  # a fixed date: the same sources give the same archive


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
        pins = book_pins(Path(config.download_pins_from))
        files["requirements.txt"] = requirements(example.framework, packages, pins, config.download_pins_since).encode()
        files["README.txt"] = readme(example, config.project, config.download_pythons, recording.stamp["versions"]).encode()
        write_zip(archive, files)
        write_if_changed(notebook, notebook_bytes(recording.notebook, config.language))
        made.add(stem)
    return archive, notebook


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


def readme(example: Example, book: str, pythons: list[str], recorded: dict) -> str:
    """README.txt of a zip, in the book's language: which Python, how to install, how to run. Prose is
    wrapped; each command stands alone on an indented line."""
    script = example.script.name
    install = "python -m pip install -r requirements.txt"
    if example.framework == "pytorch":
        install_lines = [
            _("Without an NVIDIA GPU (torch's CPU build):"),
            f"    {install} --extra-index-url {TORCH_CPU_INDEX}",
            _("With an NVIDIA GPU on Linux (torch's CUDA build from PyPI, with NVIDIA's libraries: "
              "several GB):"),
            f"    {install}",
        ]
    else:
        install_lines = [
            _("MXNet's wheel on PyPI is its CPU build, and the book runs MXNet's examples on CPU contexts "
              "(MXNet's GPU builds stop at CUDA 11.7), so one line serves with or without a GPU:"),
            f"    {install}",
        ]
    versions = ", ".join(f"{name} {version}" for name, version in recorded.items())
    paragraphs = [
        _("%(script)s (%(framework)s), an example of the book \"%(book)s\".")
        % {"script": script, "framework": FRAMEWORK_TITLES[example.framework], "book": book},
        _("It needs Python %s.") % _(" or ").join(pythons) + " "
        + _("Unpack this archive into an empty folder; in that folder, make a virtual environment and "
            "activate it:"),
        "    python3 -m venv .venv\n    . .venv/bin/activate",
        _("Then install what the script needs."),
        *install_lines,
        _("Then run, in that folder:"),
        f"    python {script} --help\n    python {script}",
        _("The script prints in English; with --figures DIR it saves each figure in English and in "
          "Turkish (NAME.en.png, NAME.tr.png)."),
        _("requirements.txt pins versions known to work with the script: those that the book's tests "
          "run it with, and, where those do not install on a newer Python, versions that do. The run "
          "recorded in the book used its machine's versions: %s.") % versions,
    ]
    wrapped = [text if text.startswith("    ") else textwrap.fill(text, README_WIDTH, break_on_hyphens=False)
               for text in paragraphs]
    return "\n\n".join(wrapped) + "\n"


def notebook_bytes(notebook: dict, language: str) -> bytes:
    """The recorded notebook with its comments in ``language``, written as nbformat writes it."""
    text = json.dumps(translate_notebook(notebook, language), indent=1, ensure_ascii=False)
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
