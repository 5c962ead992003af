"""What a language tree of the book contains: pages, labels, sections, figures, citations, example cells.

The parity test compares these facts between ``docs/en`` and ``docs/tr``; the HTML tests use them to
know which cells each built page must show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

LABEL = re.compile(r"^\.\. _([\w-]+):\s*$", re.M)
CITE = re.compile(r":cite:[pt]?:`([^`]+)`")
FIGURE = re.compile(r"^\s*\.\. figure:: (\S+)", re.M)
EXAMPLE = re.compile(r"^( *)\.\. example:: (\S+)\n((?:\1 +:[\w-]+:.*\n)+)", re.M)
OPTION = re.compile(r":([\w-]+):\s*(.*)")
SECTION_UNDERLINE = re.compile(r"^(?P<title>[^\s.][^\n]*)\n(?P<line>([=\-~^\"'+*#])\3{2,})\s*$", re.M)


@dataclass
class ExampleUse:
    name: str
    cells: tuple[str, ...]
    alt: str = ""
    hide_code: bool = False  # the :hide-code: flag: outputs shown, code not
    frameworks: tuple[str, ...] = ()  # the :frameworks: option: only these tabs (empty: all)


@dataclass
class PageFacts:
    labels: list[str] = field(default_factory=list)
    citations: list[str] = field(default_factory=list)
    figures: list[str] = field(default_factory=list)
    examples: list[ExampleUse] = field(default_factory=list)
    sections: int = 0


def page_facts(text: str) -> PageFacts:
    facts = PageFacts()
    facts.labels = LABEL.findall(text)
    facts.citations = [key.strip() for keys in CITE.findall(text) for key in keys.split(",")]
    facts.figures = [Path(uri).name for uri in FIGURE.findall(text)]
    for match in EXAMPLE.finditer(text):
        options = dict(OPTION.match(line.strip()).groups() for line in match.group(3).splitlines())
        facts.examples.append(ExampleUse(match.group(2), tuple(options.get("cells", "").split()), options.get("alt", ""),
                                         "hide-code" in options, tuple(options.get("frameworks", "").split())))
    facts.sections = len(SECTION_UNDERLINE.findall(text))
    return facts


def tree_facts(root: Path) -> dict[str, PageFacts]:
    """Facts of every rST page under a language tree, by path relative to it."""
    return {p.relative_to(root).as_posix(): page_facts(p.read_text(encoding="utf-8")) for p in sorted(root.rglob("*.rst"))}


def comparable(facts: PageFacts) -> dict:
    """The facts that must be equal across languages (alt text is prose, so it differs)."""
    return {
        "labels": facts.labels,
        "citations": facts.citations,
        "figures": facts.figures,
        "examples": [(e.name, e.cells, e.hide_code, e.frameworks) for e in facts.examples],
        "sections": facts.sections,
    }


def parity_problems(en: Path, tr: Path) -> list[str]:
    """Every way in which two language trees differ in structure; empty when they match."""
    problems = []
    en_facts, tr_facts = tree_facts(en), tree_facts(tr)
    en_files = {p.relative_to(en).as_posix() for p in en.rglob("*") if p.is_file()}
    tr_files = {p.relative_to(tr).as_posix() for p in tr.rglob("*") if p.is_file()}
    for name in sorted(en_files ^ tr_files):
        problems.append(f"{name}: only in {'en' if name in en_files else 'tr'}")
    for page in sorted(set(en_facts) & set(tr_facts)):
        a, b = comparable(en_facts[page]), comparable(tr_facts[page])
        for key in a:
            if a[key] != b[key]:
                problems.append(f"{page}: {key} differ: en {a[key]} / tr {b[key]}")
    return problems
