"""Two runs of the same code: the tables of ratios in both, and the prose that quotes them.

The measuring page's table holds exactly the ratios that the chapter's pages quote; the page Execution
Times holds every ratio the recordings publish. A ratio that moves more than ±3 % between the previous run
and this recording is noisy. The tables say so, and every paragraph of a lesson page that quotes it must
say so too. Reads the built books (``make test`` builds them first).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from recordings import Example, load_previous, load_recording

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
CHAPTER = "chapter_computational-performance"
LANGUAGES = ("en", "tr")
NOISY_WORD = {"en": "noisy", "tr": "gürültülü"}
# A glued value that is a ratio: overlaps, efficiencies, fractions of a limit, speed-ups and slowdowns.
RATIO = re.compile(r"^(?!t_)(\w+_)?overlap(_\w+)?$|(_eff|_frac)$|_eff_|^speedup|^slowdown")
ROLE = re.compile(r":measured:`(\w+/\w+)::(\w+)[^`]*`")
# The pages with a table of ratios: the quoted ones, and all of them.
TABLES = {"quoted": f"{CHAPTER}/measuring", "all": "execution-times"}


def table_rows(lang: str, table: str = "quoted") -> list[tuple[str, str]]:
    """(label, 'framework/script::key') for each line of a page's reproducibility table."""
    source = (ROOT / "docs" / lang / f"{TABLES[table]}.rst").read_text(encoding="utf-8")
    block = source.split(".. reproducibility::\n\n", 1)[1].split("\n\n", 1)[0]
    return [tuple(part.strip() for part in line.rsplit("|", 1)) for line in block.splitlines()]


def quoted_ratios(lang: str) -> set[str]:
    """'framework/script::key' of each ratio that a page of the chapter quotes as a number."""
    return {f"{ident}::{key}" for page in (ROOT / "docs" / lang / CHAPTER).glob("*.rst")
            for ident, key in ROLE.findall(page.read_text(encoding="utf-8")) if RATIO.search(key)}


def published_ratios() -> set[str]:
    """'framework/script::key' of each single ratio that a recording publishes (lists and values that a
    run without a GPU leaves out, None, aside)."""
    found = set()
    for path in sorted((ROOT / "examples" / "recordings").glob("*/*.ipynb")):
        ident = f"{path.parent.name}/{path.stem}"
        recording = load_recording(Example.parse(ROOT / "examples", ident))
        found |= {f"{ident}::{key}" for key, value in recording.stamp["glue"].items()
                  if RATIO.search(key) and isinstance(ast.literal_eval(value), (int, float))}
    return found


def two_runs(ident_key: str) -> tuple[float | None, float]:
    ident, key = ident_key.split("::")
    recording = load_recording(Example.parse(ROOT / "examples", ident))
    previous = load_previous(recording)
    current = ast.literal_eval(recording.value(key))
    return (ast.literal_eval(previous["glue"][key]) if previous else None), current


def two_runs_at(ident_key: str) -> tuple[str, str] | None:
    """When the previous run and this recording of the value's example were made, to the minute (UTC)."""
    recording = load_recording(Example.parse(ROOT / "examples", ident_key.split("::")[0]))
    previous = load_previous(recording)
    if previous is None:
        return None
    return tuple(at[:16].replace("T", " ") for at in (previous["recorded_at"], recording.stamp["recorded_at"]))


def noisy(previous: float | None, current: float) -> bool:
    return previous is not None and abs(current / previous - 1) > 0.03


def noisy_quotes(pages: dict[str, str], is_noisy) -> list[str]:
    """Each paragraph (blank-line separated) of the rst sources that quotes a noisy ratio as a number."""
    return [f"{name}: {ident}::{key} is noisy, but this paragraph quotes it as a number:\n{paragraph.strip()[:300]}"
            for name, source in pages.items() for paragraph in re.split(r"\n\s*\n", source)
            for ident, key in ROLE.findall(paragraph) if RATIO.search(key) and is_noisy(f"{ident}::{key}")]


def table_problems(quoted: set[str], listed: list[str]) -> list[str]:
    """How a table of the quoted ratios differs from the ratios that the pages quote."""
    return ([f"quoted, but not in the table: {value}" for value in sorted(quoted - set(listed))]
            + [f"in the table, but quoted by no page: {value}" for value in sorted(set(listed) - quoted)]
            + [f"listed twice: {value}" for value in sorted({v for v in listed if listed.count(v) > 1})])


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_measuring_table_holds_exactly_the_quoted_ratios(lang: str):
    """Each ratio that a page of the chapter quotes is a row of the measuring page's table, and each row
    is a ratio that some page quotes: the table does not grow beyond them."""
    problems = table_problems(quoted_ratios(lang), [value for _, value in table_rows(lang)])
    assert not problems, f"{lang}:\n" + "\n".join(problems)
    assert [value for _, value in table_rows(lang)] == [value for _, value in table_rows("en")], "the two books' tables list other ratios"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_execution_times_table_holds_every_published_ratio(lang: str):
    """The page Execution Times lists every single ratio that the recordings publish, so the measuring page
    can keep only the quoted ones."""
    listed = [value for _, value in table_rows(lang, "all")]
    missing = published_ratios() - set(listed)
    assert not missing, f"{lang}: ratios missing from the execution-times table: {sorted(missing)}"
    assert {value for _, value in table_rows(lang)} <= set(listed)
    assert listed == [value for _, value in table_rows("en", "all")], "the two books' tables list other ratios"


def test_the_table_checks_notice_a_row_too_many_a_ratio_left_out_and_a_list():
    """The checks above fail on an unquoted row, a quoted ratio left out and a row listed twice; a ratio is
    any of the book's names for one, and a list of ratios (one per size) is not a row."""
    assert table_problems({"a", "b"}, ["a", "b"]) == []
    assert table_problems({"a"}, ["a", "b"]) == ["in the table, but quoted by no page: b"]
    assert table_problems({"a", "b"}, ["a"]) == ["quoted, but not in the table: b"]
    assert table_problems({"a"}, ["a", "a"]) == ["listed twice: a"]
    assert RATIO.search("small_overlap_streams") and RATIO.search("overlap_devices")
    assert RATIO.search("speedup_together") and not RATIO.search("t_overlap") and not RATIO.search("size")
    assert "pytorch/hardware::memory_frac" in published_ratios()
    assert "pytorch/hybridize::eager_overlap" not in published_ratios(), "a list counted as one ratio"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("table", TABLES)
def test_table_shows_both_runs_and_marks_what_moved_more_than_3_percent(lang: str, table: str):
    page = BeautifulSoup((HTML / lang / f"{TABLES[table]}.html").read_text(encoding="utf-8"), "html.parser")
    rows = [[td.get_text(strip=True) for td in tr.select("td")]
            for tr in page.select("table.reproducibility tbody tr")]
    assert len(rows) == len(table_rows(lang, table))

    def shown(value):
        text = f"{value:.2f}"
        return text.replace(".", ",") if lang == "tr" else text

    for (label, value), row in zip(table_rows(lang, table), rows):
        previous, current = two_runs(value)
        assert row[0] == label.replace("'", "\N{RIGHT SINGLE QUOTATION MARK}") and row[2] == shown(current), (row, value)  # smart quotes: ’
        if previous is None:
            assert row[1] == "—" and row[3] == {"en": "no earlier run of this code",
                                                "tr": "bu kodun önceki çalıştırması yok"}[lang]
            continue
        assert row[1] == shown(previous), (row, value)
        percent = f"{abs(current / previous - 1) * 100:.1f}"
        shown_percent = f"%{percent.replace('.', ',')}" if lang == "tr" else f"{percent}\N{NO-BREAK SPACE}%"
        assert shown_percent in row[3], (row, value)
        assert (NOISY_WORD[lang] in row[3]) == noisy(previous, current), (row, value, previous, current)
    # Under the table, each pair of runs once: the times of both runs, to the minute.
    pairs = {(two_runs_at(value)) for _, value in table_rows(lang, table)} - {None}
    note = page.select_one("p.reproducibility-runs").get_text()
    sentences = [s for s in note.split("(UTC).") if s.strip()]
    assert len(sentences) == len(pairs), note
    assert all(before in note and now in note for before, now in pairs), (note, pairs)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_page_quotes_a_noisy_ratio_as_a_number(lang: str):
    """A ratio that moved more than 3 % between the two runs is never quoted as a number (the measuring page
    says so): the pages say only what both runs agree on."""
    pages = {page.name: page.read_text(encoding="utf-8") for page in (ROOT / "docs" / lang / CHAPTER).glob("*.rst")}
    problems = noisy_quotes(pages, lambda value: noisy(*two_runs(value)))
    assert not problems, f"{lang}:\n" + "\n\n".join(problems)


def test_the_noisy_check_notices_a_paragraph_that_quotes_a_noisy_ratio():
    source = ("Reading once was :measured:`pytorch/a::speedup:.2f` times as fast.\n\n"
              "Two streams reached :measured:`pytorch/b::small_overlap_streams:.2f`, a noisy figure.\n\n"
              "It took :measured:`pytorch/a::t_once:.2f s`.\n")
    found = noisy_quotes({"page.rst": source}, lambda value: value != "pytorch/a::other")
    assert [line.split(" is noisy")[0] for line in found] == ["page.rst: pytorch/a::speedup",
                                                              "page.rst: pytorch/b::small_overlap_streams"]
    assert noisy_quotes({"page.rst": source}, lambda value: False) == []
    assert noisy(1.00, 1.04) and not noisy(1.00, 0.98) and not noisy(None, 1.0)


def test_previous_runs_are_stamps_of_the_same_code():
    """Each kept previous run is a stamp of the recording's own sources, recorded before it."""
    for path in sorted((ROOT / "examples" / "recordings").glob("*/*.previous.json")):
        framework, name = path.parent.name, path.name.removesuffix(".previous.json")
        recording = load_recording(Example.parse(ROOT / "examples", f"{framework}/{name}"))
        previous = json.loads(path.read_text(encoding="utf-8"))
        assert load_previous(recording) == previous, f"{path.name} was made from other sources"
        assert previous["recorded_at"] < recording.stamp["recorded_at"]


def test_one_record_step_is_one_pair_of_runs_even_when_its_examples_end_seconds_apart():
    """Two examples of the same pair of record steps, stamped seconds apart, make one sentence under the table."""
    from reproducibility import run_pair
    first = run_pair({"recorded_at": "2026-12-03T13:22:18+00:00"}, {"recorded_at": "2026-12-03T13:24:16+00:00"})
    second = run_pair({"recorded_at": "2026-12-03T13:22:19+00:00"}, {"recorded_at": "2026-12-03T13:24:17+00:00"})
    assert first == second == ("2026-12-03 13:22", "2026-12-03 13:24")
    assert run_pair({"recorded_at": "2026-12-03T13:36:04+00:00"}, {"recorded_at": "2026-12-03T13:36:44+00:00"}) != first
