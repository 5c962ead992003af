"""Two runs of the same code: the book's table of quoted ratios in both, and the prose that quotes them.

A ratio that moves more than ±3 % between the previous run and this recording is noisy. The table says so,
and every paragraph of a lesson page that quotes it must say so too. Reads the built books
(``make test`` builds them first).
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
# A glued value that is a ratio: efficiencies, fractions of a limit, speed-ups and slowdowns.
RATIO = re.compile(r"(_eff|_frac)$|_eff_|^speedup|^slowdown")
ROLE = re.compile(r":measured:`(\w+/\w+)::(\w+)[^`]*`")


def table_rows(lang: str) -> list[tuple[str, str]]:
    """(label, 'framework/script::key') for each line of the measuring page's reproducibility table."""
    source = (ROOT / "docs" / lang / CHAPTER / "measuring.rst").read_text(encoding="utf-8")
    block = source.split(".. reproducibility::\n\n", 1)[1].split("\n\n", 1)[0]
    return [tuple(part.strip() for part in line.rsplit("|", 1)) for line in block.splitlines()]


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


def paragraphs_quoting(source: str, ident_key: str) -> list[str]:
    """The paragraphs (blank-line separated) of an rst source with a measured role of this value."""
    return [p for p in re.split(r"\n\s*\n", source)
            if any(f"{ident}::{key}" == ident_key for ident, key in ROLE.findall(p))]


def unflagged(source: str, ident_key: str, lang: str) -> list[str]:
    return [p for p in paragraphs_quoting(source, ident_key) if NOISY_WORD[lang] not in p.lower()]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_quoted_ratio_is_in_the_table(lang: str):
    """Each ratio that a page of the chapter quotes is a row of the reproducibility table."""
    quoted = {f"{ident}::{key}" for page in (ROOT / "docs" / lang / CHAPTER).glob("*.rst")
              for ident, key in ROLE.findall(page.read_text(encoding="utf-8")) if RATIO.search(key)}
    listed = {value for _, value in table_rows(lang)}
    assert quoted <= listed, f"{lang}: quoted ratios missing from the table: {sorted(quoted - listed)}"
    assert listed == {value for _, value in table_rows("en")}, "the two books' tables list other ratios"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_table_shows_both_runs_and_marks_what_moved_more_than_3_percent(lang: str):
    page = BeautifulSoup((HTML / lang / CHAPTER / "measuring.html").read_text(encoding="utf-8"), "html.parser")
    rows = [[td.get_text(strip=True) for td in tr.select("td")]
            for tr in page.select("table.reproducibility tbody tr")]
    assert len(rows) == len(table_rows(lang))

    def shown(value):
        text = f"{value:.2f}"
        return text.replace(".", ",") if lang == "tr" else text

    for (label, value), row in zip(table_rows(lang), rows):
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
    pairs = {(two_runs_at(value)) for _, value in table_rows(lang)} - {None}
    note = page.select_one("p.reproducibility-runs").get_text()
    sentences = [s for s in note.split("(UTC).") if s.strip()]
    assert len(sentences) == len(pairs), note
    assert all(before in note and now in note for before, now in pairs), (note, pairs)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_prose_calls_every_noisy_ratio_noisy(lang: str):
    """A paragraph that quotes a ratio which moved more than 3 % between the two runs says that it is noisy."""
    problems = []
    for _, value in table_rows(lang):
        if not noisy(*two_runs(value)):
            continue
        for page in (ROOT / "docs" / lang / CHAPTER).glob("*.rst"):
            if page.stem == "measuring":
                continue  # the table itself
            for paragraph in unflagged(page.read_text(encoding="utf-8"), value, lang):
                problems.append(f"{page.name}: {value} is noisy, but this paragraph does not say so:\n"
                                f"{paragraph.strip()[:300]}")
    assert not problems, f"{lang}:\n" + "\n\n".join(problems)


def test_the_noisy_check_notices_a_paragraph_that_does_not_say_it():
    source = ("Reading once was :measured:`pytorch/a::speedup:.2f` times as fast.\n\n"
              "Two streams reached :measured:`pytorch/b::eff:.2f`, a noisy figure.\n")
    assert len(unflagged(source, "pytorch/a::speedup", "en")) == 1
    assert unflagged(source, "pytorch/b::eff", "en") == []
    assert paragraphs_quoting(source, "pytorch/a::other") == []
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
