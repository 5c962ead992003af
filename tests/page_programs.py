"""The program a lesson page shows: its visible example cells, in page order, one per framework.

A reader who copies the code of a page's PyTorch (or MXNet) tabs into one file gets this program. It
must run from ``examples/<framework>/`` as shown: the page's first example shows the set-up, every
name a shown cell uses comes from a shown cell before it (or an import there, or a builtin), and no
shown cell tests for a device (the helpers stop a program that needs a GPU with one line).
"""

from __future__ import annotations

import ast
import builtins
import re
import symtable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
FRAMEWORKS = ("pytorch", "mxnet")
LESSONS = ("async-computation", "auto-parallelism", "hybridize", "measuring", "hardware")
DIRECTIVE = re.compile(r"^\.\. example:: (\S+)\n((?:[ \t]+:[^\n]*\n)*)", re.M)
OPTION = re.compile(r"^\s+:([\w-]+):\s*(.*)$")
# A test on a device in a shown cell: the page would show harness instead of the lesson.
DEVICE_WORDS = re.compile(r"\b(gpus?|cuda|device|devices|ctx|on_gpu|is_available|num_gpus|device_type)\b")


@dataclass(frozen=True)
class Cell:
    example: str
    tag: str
    source: str


def page_path(page: str, language: str = "en") -> Path:
    return ROOT / "docs" / language / "chapter_computational-performance" / f"{page}.rst"


def script_cells(framework: str, example: str) -> dict[str, str]:
    """The cells of an example script by tag, read as jupytext reads them for the book."""
    import jupytext

    notebook = jupytext.read(EXAMPLES / framework / f"{example}.py")
    return {tag: cell.source for cell in notebook.cells for tag in cell.metadata.get("tags", [])}


def shown_cells(page: str, framework: str, language: str = "en") -> list[Cell]:
    """The cells whose code the page shows in ``framework``'s tabs, in page order."""
    cells, scripts = [], {}
    for match in DIRECTIVE.finditer(page_path(page, language).read_text(encoding="utf-8")):
        example = match.group(1)
        options = dict(OPTION.match(line).groups() for line in match.group(2).splitlines() if line.strip())
        if "hide-code" in options or framework not in options.get("frameworks", " ".join(FRAMEWORKS)).split():
            continue
        if example not in scripts:
            scripts[example] = script_cells(framework, example)
        cells += [Cell(example, tag, scripts[example][tag]) for tag in options["cells"].split()]
    return cells


def hidden_cells(page: str, language: str = "en") -> list[Cell]:
    """The cells that the page displays with ``:hide-code:`` (their outputs, not their code), for the
    examples whose code the page shows elsewhere; a script that shows no code at all (the sweep) is a
    report, not part of the page's program."""
    directives = [(match.group(1), dict(OPTION.match(line).groups() for line in match.group(2).splitlines()
                                        if line.strip()))
                  for match in DIRECTIVE.finditer(page_path(page, language).read_text(encoding="utf-8"))]
    programs = {example for example, options in directives if "hide-code" not in options}
    return [Cell(example, tag, "") for example, options in directives
            if "hide-code" in options and example in programs for tag in options["cells"].split()]


def program(cells: list[Cell]) -> str:
    """The shown cells as one script."""
    return "\n\n\n".join(cell.source.rstrip("\n") for cell in cells) + "\n"


def _global_uses(table: symtable.SymbolTable) -> set[str]:
    """Names that code in ``table`` or in its nested functions reads from the module's globals."""
    names = set()
    for symbol in table.get_symbols():
        top = table.get_type() == "module"
        free_here = (top and symbol.is_referenced() and not symbol.is_assigned() and not symbol.is_imported()) \
            or (not top and symbol.is_referenced() and symbol.is_global())
        if free_here:
            names.add(symbol.get_name())
    for child in table.get_children():
        names |= _global_uses(child)
    return names


def _bound(table: symtable.SymbolTable) -> set[str]:
    return {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported()}


def undefined_names(cells: list[Cell]) -> list[str]:
    """``tag: name`` for every name a shown cell uses that no shown cell up to it defines."""
    known, problems = set(dir(builtins)), []
    for cell in cells:
        table = symtable.symtable(cell.source, cell.tag, "exec")
        defined = known | _bound(table)
        problems += [f"{cell.example}:{cell.tag}: {name}" for name in sorted(_global_uses(table) - defined)]
        known = defined
    return problems


def device_guards(cells: list[Cell]) -> list[str]:
    """``tag: line`` for every test on a device (``if gpus:``, ``x if on_gpu else y``) in shown cells."""
    problems = []
    for cell in cells:
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)):
                test = ast.get_source_segment(cell.source, node.test)
                if DEVICE_WORDS.search(test):
                    problems.append(f"{cell.example}:{cell.tag}: {test}")
    return problems


def write_program(page: str, framework: str, folder: Path) -> Path:
    """The page's program for ``framework``, saved where it runs: beside the framework's helpers."""
    path = folder / f"page_{page.replace('-', '_')}.py"
    path.write_text(program(shown_cells(page, framework)), encoding="utf-8")
    return path
