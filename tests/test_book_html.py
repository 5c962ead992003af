"""What a reader sees in the built books (``make test`` builds them first into _build/html)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from book_facts import tree_facts
from recordings import FRAMEWORK_TITLES, FRAMEWORKS, Example, load_recording

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
LANGUAGES = ("en", "tr")
PAGES = {lang: tree_facts(ROOT / "docs" / lang) for lang in LANGUAGES}


def soup(lang: str, page: str) -> BeautifulSoup:
    path = HTML / lang / page.replace(".rst", ".html")
    if not path.exists():
        pytest.fail(f"{path} is missing: build the books with 'make html' (make test does it first)")
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def normalised(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def cell_outputs(cell: dict) -> tuple[list[str], int]:
    """The text outputs a reader must see for a cell, and how many images it drew."""
    texts, images = [], 0
    for output in cell.get("outputs", []):
        if output["output_type"] == "stream":
            texts.append("".join(output["text"]))
        elif "image/png" in output.get("data", {}):
            images += 1
        elif "text/plain" in output.get("data", {}):
            texts.append("".join(output["data"]["text/plain"]))
    return [normalised(t) for t in texts if t.strip()], images


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_page_is_built_in_its_language_without_unresolved_references(lang: str):
    """Each source page becomes an HTML page in its language, with no broken reference or markup."""
    for page in PAGES[lang]:
        html = soup(lang, page)
        assert html.html["lang"] == lang, page
        assert not html.select(".problematic, .system-message"), f"{lang}/{page} has broken markup"
        assert "??" not in html.get_text(), f"{lang}/{page} has an unresolved numbered reference"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_example_cells_show_code_outputs_images_and_stamp(lang: str):
    """Every example on every page shows, in PyTorch and MXNet tabs, each cell's code and recorded outputs."""
    shown = 0
    for page, facts in PAGES[lang].items():
        if not facts.examples:
            continue
        blocks = soup(lang, page).select("div.example")
        assert len(blocks) == len(facts.examples), f"{lang}/{page}: examples shown vs. written"
        for block, use in zip(blocks, facts.examples):
            labels = [label.get_text(strip=True) for label in block.select(".sd-tab-label")]
            assert labels == [FRAMEWORK_TITLES[f] for f in FRAMEWORKS], f"{lang}/{page} {use.name}"
            panels = block.select(".sd-tab-content")
            for framework, panel in zip(FRAMEWORKS, panels):
                recording = load_recording(Example.parse(ROOT / "examples", f"{framework}/{use.name}"))
                code = [normalised(pre.get_text()) for pre in panel.select(".example-code pre")]
                outputs = [normalised(pre.get_text()) for pre in panel.select(".example-output pre")]
                images = panel.select("img.example-image")
                expected_images = 0
                for tag in use.cells:
                    cell = recording.cell(tag)
                    assert normalised("".join(cell["source"])) in code, f"{lang}/{page}: code of {framework} {tag}"
                    texts, count = cell_outputs(cell)
                    for text in texts:
                        assert text in outputs, f"{lang}/{page}: output of {framework} {tag}"
                    expected_images += count
                assert len(images) == expected_images, f"{lang}/{page}: images of {framework} {use.cells}"
                assert all(img.get("alt", "").strip() for img in images), f"{lang}/{page}: an image has no alt"
                stamp = panel.select_one(".recording-stamp").get_text()
                assert recording.stamp["recorded_at"][:10] in stamp
                used = ast.literal_eval(recording.stamp["glue"]["devices"])
                assert all(device in stamp for device in used), f"{lang}/{page}: stamp misses devices used"
                shown += 1
    assert shown, f"the {lang} book shows no example"


def test_mxnet_outputs_never_claim_a_gpu():
    """MXNet cannot run on the recorded GPU, so its recorded outputs say they ran on the CPU."""
    for example in (e for e in _examples() if e.framework == "mxnet"):
        stamp = load_recording(example).stamp
        used = ast.literal_eval(stamp["glue"]["devices"])
        if stamp["machine"]["gpus"] and not any("gpu" in d.lower() for d in used):
            assert all("cpu" in d.lower() for d in used), f"{example.ident} ran on {used}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_measured_values_are_filled_in(lang: str):
    """Figures quoted in the prose come from the recorded run, and none is empty."""
    values = [span.get_text() for page in PAGES[lang] for span in soup(lang, page).select("span.measured")]
    assert values, f"the {lang} book quotes no measured value"
    assert all(v.strip() for v in values)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_figures_have_numbers_captions_and_alt_text(lang: str):
    """Each drawn figure of the chapter is numbered, captioned and described for screen readers."""
    figures = [fig for page in PAGES[lang] for fig in soup(lang, page).select("figure")]
    assert figures, f"the {lang} book has no figure"
    for fig in figures:
        assert fig.select_one("figcaption .caption-number"), fig
        assert fig.select_one("img").get("alt", "").strip(), fig


@pytest.mark.parametrize("lang", LANGUAGES)
def test_citations_resolve_to_the_bibliography(lang: str):
    """The citation of Hadjis et al. (2016) links to its entry in the bibliography."""
    html = soup(lang, "chapter_computational-performance/auto-parallelism.rst")
    links = [a for a in html.select("a.reference.internal") if a.get_text(strip=True).startswith("Hadjis")]
    assert links, "the page does not cite Hadjis et al."
    for link in links:
        entry = html.find(id=link["href"].lstrip("#"))
        assert entry is not None and "Omnivore" in entry.get_text(), link


def test_root_page_chooses_a_language():
    """The root page sends readers to the Turkish book by default and links both books."""
    page = BeautifulSoup((HTML / "index.html").read_text(encoding="utf-8"), "html.parser")
    assert "url=tr/index.html" in page.select_one('meta[http-equiv="refresh"]')["content"]
    assert {a["href"] for a in page.select("a")} >= {"tr/index.html", "en/index.html"}


def _examples():
    from recordings import all_examples

    return all_examples(ROOT / "examples")


def test_execution_times_table_lists_every_recording():
    """The execution-times page lists each example with its run time and stamp."""
    html = soup("en", "execution-times.rst")
    rows = html.select("table.execution-times tbody tr")
    assert len(rows) == len(_examples())
    for row in rows:
        cells = [td.get_text(strip=True) for td in row.select("td")]
        assert cells[0].endswith(".py") and float(cells[2]) > 0
