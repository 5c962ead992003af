"""The lesson pages stay short and plain: word budgets for the prose, and shown cells that a reader can follow.

Both checks read the built books (``make test`` builds them first into _build/html), so they see what a
reader sees in each language and each framework tab.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from shown_code import MAX_CELL_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
LANGUAGES = ("en", "tr")
CHAPTER = "chapter_computational-performance"
# Words of prose, code excluded, per page; the Turkish page mirrors the English one within the same budget.
BUDGETS = {"index": 300, "hybridize": 1300, "async-computation": 1050, "auto-parallelism": 1250, "measuring": 1100, "hardware": 1200}
PAGES = sorted(p.stem for p in (ROOT / "docs" / "en" / CHAPTER).glob("*.rst"))
LESSONS = [page for page in PAGES if page not in ("index", "measuring")]
# The glossary, a page of its own outside the chapter: its terms, not every word a reader knows.
GLOSSARY_BUDGET = 1000
# Lines of code in a shown cell, blank lines left out (as the issues count them: the blank lines between
# two small functions are layout, not code); the columns of each line are in shown_code.
MAX_CELL_LINES = 12
# What a reader does not read as prose: example cells and their outputs, code, formulas, the reference list,
# the table of recorded ratios (data, one row per figure the book quotes), and the table of the figures
# on each GPU model with the list of the runs they come from (data too).
NOT_PROSE = ("div.example, pre, math, .math, .headerlink, .citation, .toctree-wrapper, table.reproducibility, "
             "div.gpu-comparison")
WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")
# Calls that only show or pass on values: a cell that calls nothing else measures nothing itself.
REPORTING_CALLS = {
    "print", "str", "repr", "format", "len", "round", "float", "int", "min", "max", "sum", "abs",
    "zip", "range", "enumerate", "list", "dict", "tuple", "sorted", "glue", "seconds", "fraction",
    "overlap",
}


def article(lang: str, page: str, folder: str = CHAPTER) -> BeautifulSoup:
    path = HTML / lang / folder / f"{page}.html"
    if not path.exists():
        pytest.fail(f"{path} is missing: build the books with 'make html' (make test does it first)")
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser").select_one("article")


def prose_words(node: BeautifulSoup) -> int:
    """Words a reader reads as prose: the article without code, cells, outputs, formulas and references."""
    node = BeautifulSoup(str(node), "html.parser")
    for element in node.select(NOT_PROSE):
        element.decompose()
    return len(WORD.findall(node.get_text(" ")))


def shown_cells(node: BeautifulSoup) -> list[str]:
    """The code of every cell shown on a page, in every framework tab."""
    return [pre.get_text() for pre in node.select("div.example .example-code pre")]


def cell_problems(code: str) -> list[str]:
    """Why a shown cell is not a plain demonstration: too long, too wide, or only reading values."""
    lines = [line for line in code.rstrip("\n").splitlines() if line.strip()]
    problems = []
    if len(lines) > MAX_CELL_LINES:
        problems.append(f"{len(lines)} lines (at most {MAX_CELL_LINES})")
    wide = [line for line in lines if len(line) > MAX_CELL_COLUMNS]
    if wide:
        problems.append(f"{len(wide)} lines wider than {MAX_CELL_COLUMNS} columns")
    calls = [node.func for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Call)]
    names = {f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "") for f in calls}
    names_read = {node.id for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Name)} - names
    # A cell of literal text only (a twin's note that its framework lacks the feature) reads nothing.
    if names_read and not {n for n in names if not n.startswith("publish")} - REPORTING_CALLS:
        problems.append("it calls nothing but printing and arithmetic: it only reads values measured elsewhere")
    return problems


def test_every_chapter_page_has_a_word_budget():
    """A new page of the chapter comes with a budget, so that its length is checked too."""
    assert set(PAGES) <= set(BUDGETS), f"pages without a word budget: {sorted(set(PAGES) - set(BUDGETS))}"
    assert {"async-computation", "auto-parallelism"} <= set(LESSONS)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_chapter_pages_keep_their_word_budget(lang: str, page: str):
    """A page's prose, code excluded, stays within its budget in both languages."""
    words = prose_words(article(lang, page))
    assert words <= BUDGETS[page], f"{lang}/{page}: {words} words of prose, budget {BUDGETS[page]}"
    assert words >= BUDGETS[page] // 10, f"{lang}/{page}: {words} words; is the page's prose being counted?"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_glossary_keeps_its_word_budget(lang: str):
    """The glossary's prose, terms and meanings, stays within its budget in both languages."""
    words = prose_words(article(lang, "glossary", folder=""))
    assert GLOSSARY_BUDGET // 2 <= words <= GLOSSARY_BUDGET, f"{lang}/glossary: {words} words, budget {GLOSSARY_BUDGET}"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("page", PAGES)
def test_shown_cells_are_short_plain_demonstrations(lang: str, page: str):
    """Every cell a page shows, in both tabs, is at most 12 lines of 79 columns and does something."""
    cells = shown_cells(article(lang, page))
    assert cells or page not in LESSONS, f"{lang}/{page} shows no cells"
    problems = [f"{code.splitlines()[0]!r}...: {', '.join(p)}" for code in cells if (p := cell_problems(code))]
    assert not problems, f"{lang}/{page}:\n" + "\n".join(problems)


def test_the_checks_notice_long_cells_reading_cells_and_prose():
    """The checks themselves fail on a cell that is too long or only reads values, and count prose, not code."""
    assert cell_problems("t = helpers.benchmark(lambda: run(x))\nprint(t)\n") == []
    assert "lines" in cell_problems("x = run(x)\n" * (MAX_CELL_LINES + 1))[0]
    assert "wider" in cell_problems(f"y = run({'x' * MAX_CELL_COLUMNS})\n")[0]
    assert cell_problems("x = run(x)\n\n" * MAX_CELL_LINES) == [], "blank lines are layout, not code"
    reads_only = (  # a cell that the old page showed: it reads a time measured in the cell before
        't_together = times["together"]\n'
        "overlap_devices = overlap(t_alone, t_together)\n"
        'print(f"together: {seconds(t_together)}")\n'
        'report.publish_all({"t_together": t_together})\n'
    )
    assert "only reads" in cell_problems(reads_only)[0]
    page = BeautifulSoup(
        "<article><p>Three plain words.</p><div class='example'><p>tab words</p></div>"
        "<pre>code words</pre><math><mi>x</mi></math></article>",
        "html.parser",
    )
    assert prose_words(page) == 3


