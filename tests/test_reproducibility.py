"""Every kept run of the same code: the tables of ratios across them, and the prose that quotes them.

The measuring page's table holds exactly the ratios that the chapter's pages quote; the page Execution
Times holds every ratio the recordings publish. Each row's verdict comes from the kept runs
(conf/ext/stability.py): stable only with three runs on two GPU models within 3 %; noisy when two runs
differ by more; host-bound when conf.py names it so. No page quotes a noisy or host-bound ratio as a
number. Reads the built books (``make test`` builds them first).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from recordings import Example, Recording, RecordingError, load_recording, load_runs, recorded_when
from stability import HOST_BOUND, HOST_BOUND_RATIOS, NOISY, RATIO, STABLE, TOO_FEW, Runs, ratio_runs

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
CHAPTER = "chapter_computational-performance"
LANGUAGES = ("en", "tr")
VERDICT_WORDS = {"en": {STABLE: "stable", NOISY: "noisy", HOST_BOUND: "host-bound", TOO_FEW: "too few runs"},
                 "tr": {STABLE: "kararlı", NOISY: "gürültülü", HOST_BOUND: "ana makinenin sınırladığı",
                        TOO_FEW: "çalıştırma sayısı yetersiz"}}
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


def kept_runs(ident_key: str) -> Runs:
    ident, key = ident_key.split("::")
    return ratio_runs(load_recording(Example.parse(ROOT / "examples", ident)), key)


def verdict(ident_key: str) -> str:
    return kept_runs(ident_key).verdict()


def unquotable(pages: dict[str, str], verdict_of) -> list[str]:
    """Each paragraph (blank-line separated) of the rst sources that quotes as a number a ratio whose
    verdict is noisy or host-bound."""
    return [f"{name}: {ident}::{key} is {found}, but this paragraph quotes it as a number:\n{paragraph.strip()[:300]}"
            for name, source in pages.items() for paragraph in re.split(r"\n\s*\n", source)
            for ident, key in ROLE.findall(paragraph)
            if (RATIO.search(key) or f"{ident}::{key}" in HOST_BOUND_RATIOS)
            and (found := verdict_of(f"{ident}::{key}")) in (NOISY, HOST_BOUND)]


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
def test_table_shows_every_kept_run_and_its_verdict(lang: str, table: str):
    """Each row: the label, how many runs hold the ratio, their lowest and highest value, this recording's,
    and the verdict those runs give (with the spread when noisy). Under the table, each run once: when,
    and on which GPU."""
    page = BeautifulSoup((HTML / lang / f"{TABLES[table]}.html").read_text(encoding="utf-8"), "html.parser")
    rows = [[td.get_text(strip=True) for td in tr.select("td")]
            for tr in page.select("table.reproducibility tbody tr")]
    assert len(rows) == len(table_rows(lang, table))

    def shown(value):
        """As the table writes a value: 3 significant digits, 2 decimals at most (10.75 as 10.8), a real
        minus sign (U+2212), Turkish decimal comma."""
        decimals = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
        text = f"{value:.{decimals}f}".replace("-", "\N{MINUS SIGN}")
        return text.replace(".", ",") if lang == "tr" else text

    stamps = []
    for (label, value), row in zip(table_rows(lang, table), rows):
        runs = kept_runs(value)
        stamps += runs.stamps
        assert row[0] == label.replace("'", "\N{RIGHT SINGLE QUOTATION MARK}"), (row, value)  # smart quotes: ’
        assert row[1] == str(len(runs.values)) and row[3] == shown(runs.values[-1]), (row, value)
        dash = " – " if min(runs.values) < 0 else "–"  # spaced where a minus sign would meet the dash
        span = "—" if len(runs.values) == 1 else f"{shown(min(runs.values))}{dash}{shown(max(runs.values))}"
        assert row[2] == span, (row, value)
        assert row[4].startswith(VERDICT_WORDS[lang][verdict(value)]), (row, value, runs.values)
        assert "-" not in row[2] + row[3], f"a hyphen-minus in a number, not a minus sign (U+2212): {row}"
        assert "∞" not in row[4], f"a spread only where it is finite: {row}"
    note = page.select_one("p.reproducibility-runs").get_text()
    for stamp in stamps:
        when = recorded_when(stamp, lang, minute=True)
        assert f"{when}, {stamp['machine']['gpus'][0]}" in note, (note, when)
    one_model = {"en": "All these runs come from one GPU model", "tr": "hepsi tek bir GPU modelinden"}[lang]
    assert (one_model in note) == (len({stamp["machine"]["gpus"][0] for stamp in stamps}) < 2), note


def test_verdicts_need_three_runs_on_two_gpu_models_and_agreement_within_3_percent():
    """The rule the measuring page states, on made-up runs: each way to miss "stable" is caught."""
    h100, h200 = ({"machine": {"gpus": [gpu]}} for gpu in ("NVIDIA H100 80GB HBM3", "NVIDIA H200"))
    assert Runs([0.90, 0.91, 0.90], [h100, h100, h200]).verdict() == STABLE
    assert Runs([0.90, 0.91], [h100, h200]).verdict() == TOO_FEW
    assert Runs([0.90, 0.91, 0.90], [h100, h100, h100]).verdict() == TOO_FEW
    assert Runs([0.90, 0.95, 0.90], [h100, h100, h200]).verdict() == NOISY
    assert Runs([0.90, 0.95], [h100, h100]).verdict() == NOISY
    assert Runs([0.01, -0.01, 0.01], [h100, h100, h200]).verdict() == NOISY
    assert Runs([0.90, 0.91, 0.90], [h100, h100, h200], host_bound=True).verdict() == HOST_BOUND
    assert kept_runs("pytorch/hybridize::speedup_graph").host_bound, "a ratio named host-bound read as not"


def test_every_host_bound_ratio_is_in_the_full_table_with_a_reason():
    listed = [value for _, value in table_rows("en", "all")]
    assert HOST_BOUND_RATIOS and all(key in listed and reason for key, reason in HOST_BOUND_RATIOS.items())


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_page_quotes_a_noisy_or_host_bound_ratio_as_a_number(lang: str):
    """A ratio that two kept runs disagree on by more than 3 %, or that the host sets, is never quoted as a
    number (the measuring page says so): the pages say only what every run agrees on."""
    pages = {page.name: page.read_text(encoding="utf-8") for page in (ROOT / "docs" / lang / CHAPTER).glob("*.rst")}
    problems = unquotable(pages, verdict)
    assert not problems, f"{lang}:\n" + "\n\n".join(problems)


def test_the_quote_check_notices_a_paragraph_that_quotes_a_noisy_or_host_bound_ratio():
    source = ("Reading once was :measured:`pytorch/a::speedup:.2f` times as fast.\n\n"
              "Two streams reached :measured:`pytorch/b::small_overlap_streams:.2f`, a noisy figure.\n\n"
              "It took :measured:`pytorch/a::t_once:.2f s`.\n")
    verdicts = {"pytorch/a::speedup": HOST_BOUND, "pytorch/b::small_overlap_streams": NOISY}
    found = unquotable({"page.rst": source}, lambda value: verdicts.get(value, STABLE))
    assert [line.split(" is ")[0] for line in found] == ["page.rst: pytorch/a::speedup",
                                                         "page.rst: pytorch/b::small_overlap_streams"]
    assert unquotable({"page.rst": source}, lambda value: TOO_FEW) == []


def test_kept_runs_are_stamps_of_the_same_code():
    """Each kept run is a stamp of the recording's own sources; a run of other sources fails to load."""
    for path in sorted((ROOT / "examples" / "recordings").glob("*/*.runs.json")):
        framework, name = path.parent.name, path.name.removesuffix(".runs.json")
        recording = load_recording(Example.parse(ROOT / "examples", f"{framework}/{name}"))
        kept = json.loads(path.read_text(encoding="utf-8"))
        assert load_runs(recording) == sorted(kept, key=lambda run: run["recorded_at"]) and kept


def test_a_kept_run_of_other_sources_fails_to_load(tmp_path: Path):
    """A run of code other than the recording's would be compared with code it did not run: it is refused,
    and the message says what to do."""
    example = Example(tmp_path, "pytorch", "tiny")
    example.runs.parent.mkdir(parents=True)
    recording = Recording(example, {"metadata": {"recording": {"source_sha256": "new"}}})
    example.runs.write_text(json.dumps([{"source_sha256": "new", "recorded_at": "2026-12-06T20:00:00+00:00"}]))
    assert len(load_runs(recording)) == 1
    example.runs.write_text(json.dumps([{"source_sha256": "old", "recorded_at": "2026-12-06T20:00:00+00:00"}]))
    with pytest.raises(RecordingError, match="keeps a run of other sources"):
        load_runs(recording)
