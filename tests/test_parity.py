"""The English and Turkish trees have the same structure: files, labels, sections, figures, citations, cells."""

from __future__ import annotations

import shutil
from pathlib import Path

from book_facts import parity_problems, tree_facts

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_english_and_turkish_trees_match():
    """A reader switching language finds the same pages, sections, figures, citations and example cells."""
    assert tree_facts(DOCS / "en"), "docs/en has no pages"
    problems = parity_problems(DOCS / "en", DOCS / "tr")
    assert not problems, "the language trees differ:\n" + "\n".join(problems)


def test_parity_check_notices_a_difference(tmp_path: Path):
    """The check itself fails when one language loses a label, a cell, a section or a file."""
    en, tr = tmp_path / "en", tmp_path / "tr"
    shutil.copytree(DOCS / "en", en)
    shutil.copytree(DOCS / "en", tr)
    assert parity_problems(en, tr) == []
    page = tr / "chapter_computational-performance" / "auto-parallelism.rst"
    text = page.read_text()
    planted = text.replace(".. _sec_auto_para:", "", 1).replace("   :cells: ", "   :cells: extra-cell ", 1)
    assert planted.count("extra-cell") == 1 and "_sec_auto_para:" not in planted, "the planted changes missed"
    page.write_text(planted + "\nExtra\n-----\n")
    (tr / "glossary.rst").unlink()
    problems = parity_problems(en, tr)
    found = "\n".join(problems)
    assert "glossary.rst: only in en" in found
    changed = [p for p in problems if p.startswith("chapter_computational-performance/auto-parallelism.rst")]
    assert {p.split(": ")[1] for p in changed} == {"labels differ", "examples differ", "sections differ"}, found


def test_parity_check_notices_code_hidden_in_one_language(tmp_path: Path):
    """Showing a cell's code in one language and hiding it in the other is a difference too."""
    en, tr = tmp_path / "en", tmp_path / "tr"
    shutil.copytree(DOCS / "en", en)
    shutil.copytree(DOCS / "en", tr)
    page = tr / "chapter_computational-performance" / "auto-parallelism.rst"
    text = page.read_text()
    assert text.count("   :hide-code:\n") > 1, "the page hides no harness cell"
    page.write_text(text.replace("   :hide-code:\n", "", 1))
    assert [p.split(": ")[1] for p in parity_problems(en, tr)] == ["examples differ"]
