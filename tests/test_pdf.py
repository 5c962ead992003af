"""The books' PDFs, as a reader gets them from the HTML books' download menus (``make test`` runs
``make pdf`` first), read with pypdf and compared with the built HTML that they print.

The HTML is the truth: the toctree as the sidebar shows it, each page's headings, its measured values,
its examples' tabs, its figures and its cross-references. Each PDF is read once (about 3 s).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from urllib.parse import unquote, urljoin

import pytest
from bs4 import BeautifulSoup
from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, DictionaryObject, NameObject

from built_links import broken_links
from pdf_book import anchor
from recordings import all_examples, load_recording, recorded_when

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html"
PDF = ROOT / "_build" / "pdf"
LANGUAGES = ("en", "tr")


def article(path: Path) -> BeautifulSoup:
    page = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
    body = page.select_one("article.bd-article")
    for hidden in body.select("a.headerlink"):
        hidden.decompose()
    return body


def squeezed(text: str) -> str:
    """Text without its whitespace, so that the PDF's wrapped lines compare with the HTML's."""
    return re.sub(r"\s+", "", text)


@dataclass
class Book:
    """One language's HTML book, in toctree order, and the PDF that its download menu links."""

    lang: str
    # (page path relative to the book, its toctree level), in the sidebar's order
    pages: list[tuple[str, int]] = field(default_factory=list)

    @classmethod
    def load(cls, lang: str) -> Book:
        index = HTML / lang / "index.html"
        if not index.is_file():
            pytest.fail(f"{index} is missing: 'make test' builds the books and their PDFs first")
        nav = BeautifulSoup(index.read_text(encoding="utf-8"), "html.parser").select_one("nav.bd-docs-nav")
        pages = [(a["href"], int(re.search(r"toctree-l(\d)", " ".join(a.find_parent("li")["class"]))[1]))
                 for a in nav.select("li > a.reference")]
        return cls(lang, pages)

    @cached_property
    def articles(self) -> dict[str, BeautifulSoup]:
        return {page: article(HTML / self.lang / page) for page, _ in self.pages}

    @cached_property
    def pdf_link(self) -> str:
        """Where the download menu of the book's first page points, relative to the book."""
        menu = BeautifulSoup((HTML / self.lang / self.pages[0][0]).read_text(encoding="utf-8"), "html.parser")
        link = menu.select_one(".dropdown-download-buttons a.btn-download-pdf-button")
        assert link is not None, f"the {self.lang} book's download menu has no PDF entry"
        return unquote(urljoin(self.pages[0][0], link["href"]))

    @cached_property
    def reader(self) -> PdfReader:
        path = PDF / Path(self.pdf_link).name
        if not path.is_file():
            pytest.fail(f"{path} is missing: 'make pdf' prints it ('make test' does it first)")
        return PdfReader(path)

    @cached_property
    def layout_texts(self) -> list[str]:
        """Each PDF page's text in reading order (pypdf's layout mode), as pypdf reads it."""
        return [page.extract_text(extraction_mode="layout").rstrip() for page in self.reader.pages]

    @cached_property
    def page_texts(self) -> list[str]:
        """Each PDF page's lines, stripped, without the page number under them."""
        texts = []
        for number, text in enumerate(self.layout_texts, start=1):
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            if lines and lines[-1] == str(number):
                lines.pop()
            texts.append("\n".join(lines))
        return texts

    @cached_property
    def text(self) -> str:
        return "\n".join(self.page_texts)

    @cached_property
    def drawing_order_text(self) -> str:
        """The PDF's text in the order it is drawn: a table's cells one after another, not line by line
        across its columns as in reading order."""
        return "\n".join(page.extract_text() for page in self.reader.pages)


@functools.cache
def load_book(lang: str) -> Book:
    return Book.load(lang)


@pytest.fixture(params=LANGUAGES)
def book(request) -> Book:
    return load_book(request.param)


@pytest.fixture
def tr_book() -> Book:
    return load_book("tr")


# Where the PDF is, and its pages
# -------------------------------


def test_every_html_page_links_its_own_books_pdf_which_make_pdf_wrote(book: Book):
    """Every page's download menu offers this book's PDF, named for the book and the language, in
    place of the theme's print-this-page entry; the file beside the HTML is the one in _build/pdf/."""
    name = Path(book.pdf_link).name
    assert book.pdf_link == name and name.endswith(f"-{book.lang}.pdf"), book.pdf_link
    for page, _level in book.pages:
        html = (HTML / book.lang / page).read_text(encoding="utf-8")
        menu = BeautifulSoup(html, "html.parser").select_one(".dropdown-download-buttons")
        assert "print" not in str(menu), f"{book.lang}/{page}: the download menu still prints the page"
        link = menu.select_one("a.btn-download-pdf-button")
        assert unquote(urljoin(page, link["href"])) == name, f"{book.lang}/{page} links {link['href']}"
    assert (HTML / book.lang / name).read_bytes() == (PDF / name).read_bytes()


def test_a_book_built_before_its_pdf_offers_no_pdf(tmp_path: Path):
    """``make html`` alone (a fresh clone: no _build/pdf/) builds a book whose download menu offers no PDF,
    rather than a link that finds nothing; every link that it has leads somewhere. (The English book,
    from the doctrees that make test left, so that only its pages are written.)"""
    shutil.copytree(ROOT / "_build" / "doctrees" / "en", tmp_path / "doctrees")
    env = {k: v for k, v in os.environ.items() if k not in ("BOOK_PDF_DIR", "BOOK_AT_SITE_ROOT")}
    site = tmp_path / "html"
    subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-c", "conf", "-d", str(tmp_path / "doctrees"),
                    "docs/en", str(site / "en")], cwd=ROOT, env={**env, "BOOK_LANGUAGE": "en"}, check=True)
    shutil.copytree(HTML / "tr", site / "tr")  # where the language links lead
    shutil.copy(HTML / "index.html", site)
    pages = list((site / "en").rglob("*.html"))
    menus = [BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser").select_one(".dropdown-download-buttons")
             for p in pages]
    assert sum(menu is not None for menu in menus) > 5, "the pages have no download menu"
    assert not [p for p, menu in zip(pages, menus) if menu is not None and (
        menu.select_one(".btn-download-pdf-button") or "print" in str(menu))], "a page offers a PDF or prints itself"
    assert not list((site / "en").glob("*.pdf"))
    assert not [problem for problem in broken_links(site) if problem.startswith("en/")]


def test_page_count_is_in_bounds(book: Book):
    """The title page, the contents, and every page of the book at between 1000 and 2500 characters of
    its HTML text a page (blank pages, or each section on a page of its own, move it out)."""
    characters = sum(len(squeezed(a.get_text())) for a in book.articles.values())
    pages = len(book.reader.pages)
    assert 2 + len(book.pages) <= pages
    assert characters / 2500 <= pages - 2 <= characters / 1000, f"{pages} pages for {characters} characters"


def test_pages_are_numbered_from_the_contents_on(book: Book):
    for number, text in enumerate(book.layout_texts, start=1):
        last_line = text.rsplit("\n", 1)[-1].strip()
        assert (last_line == str(number)) == (number > 1), f"page {number} ends with {last_line!r}"


def test_title_page_says_which_run_the_outputs_come_from(book: Book):
    """The first page names the book and, for every recorded run, its date (as the book's language
    writes one), machine and library versions, as the recordings' stamps say."""
    title_page = re.sub(r"\s+", " ", book.page_texts[0])
    index = article(HTML / book.lang / "index.html")
    assert index.h1.get_text(strip=True) in title_page
    stamps = [load_recording(example).stamp for example in all_examples(ROOT / "examples")]
    for stamp in stamps:
        machine = stamp["machine"]
        for fact in [recorded_when(stamp, book.lang), machine["cpu"], *machine["gpus"],
                     *(f"{library} {version}" for library, version in stamp["versions"].items())]:
            assert squeezed(fact) in squeezed(title_page), f"the title page does not say {fact!r}"


# Bookmarks and contents
# ----------------------


def headings(body: BeautifulSoup) -> list[tuple[int, str]]:
    return [(int(h.name[1]), h.get_text(" ", strip=True)) for h in body.select("h1, h2, h3, h4, h5, h6")]


def expected_outline(book: Book) -> list:
    """The bookmarks that the toctree gives, as [title, [children]]: each page's headings nested by
    their level, and a page's own pages after its sections, under its title."""
    outline: list = []
    under_page = {0: outline}  # by toctree level: where the latest page of that level takes children
    for page, level in book.pages:
        under_heading = {0: under_page[level - 1]}  # by heading level: where the next heading goes
        for heading_level, title in headings(book.articles[page]):
            entry = [title, []]
            under_heading[heading_level - 1].append(entry)
            under_heading[heading_level] = entry[1]
        under_page[level] = under_heading[1]
    return outline


def pdf_outline(book: Book, items=None) -> list:
    items = book.reader.outline if items is None else items
    entries: list = []
    for item in items:
        if isinstance(item, list):
            entries[-1][1].extend(pdf_outline(book, item))
        else:
            entries.append([item.title, []])
    return entries


def test_bookmarks_follow_the_toctree_and_every_pages_sections(book: Book):
    assert pdf_outline(book) == expected_outline(book)


def test_bookmarks_land_on_their_headings(book: Book):
    def walk(items):
        for item in items:
            if isinstance(item, list):
                yield from walk(item)
            else:
                yield item

    last = 0
    for item in walk(book.reader.outline):
        page = book.reader.get_destination_page_number(item)
        assert page >= last, f"{item.title!r} comes before the bookmark above it"
        assert squeezed(item.title) in squeezed(book.page_texts[page]), f"{item.title!r} is not on page {page + 1}"
        last = page


def test_contents_list_the_chapters_and_their_pages_with_the_pages_they_start_on(book: Book):
    """The contents (page 2): the bookmarks of the first two levels, in order, each with the number of
    the page its bookmark lands on."""
    expected = []
    for item in book.reader.outline:
        for entry in item if isinstance(item, list) else [item]:
            if not isinstance(entry, list):
                expected.append(f"{entry.title} {book.reader.get_destination_page_number(entry) + 1}")
    first_levels = [title for title, children in pdf_outline(book) for title in [title, *(c for c, _ in children)]]
    assert [line.rsplit(" ", 1)[0] for line in expected] == first_levels
    assert [" ".join(line.split()) for line in book.page_texts[1].splitlines()[1:]] == expected


# What the HTML shows is in the PDF
# ---------------------------------


def test_every_measured_value_of_the_html_is_in_the_pdf(book: Book):
    """Each value quoted in the prose, as the HTML shows it, at least as often as the HTML shows it."""
    values = [span.get_text() for a in book.articles.values() for span in a.select("span.measured")]
    assert values, f"the {book.lang} book quotes no measured value"
    pdf = squeezed(book.text)
    for value in set(values):
        assert pdf.count(squeezed(value)) >= values.count(value), f"{value!r} is missing from the PDF"


def tab_sets(book: Book) -> list[list[tuple[str, str]]]:
    """Every example's tabs in the HTML, in order: (label, what the tab shows), without its downloads."""
    sets = []
    for body in book.articles.values():
        for tabs in body.select("div.sd-tab-set"):
            for download in tabs.select("p.example-download"):
                download.decompose()
            labels = [label.get_text(strip=True) for label in tabs.find_all("label", recursive=False)]
            contents = [c.get_text() for c in tabs.find_all("div", class_="sd-tab-content", recursive=False)]
            sets.append(list(zip(labels, contents)))
    return sets


def test_every_example_shows_both_frameworks_one_after_the_other(book: Book):
    """Each tab of each example, in order: its label ("PyTorch", "MXNet"), then its code, outputs and
    stamp, exactly as the HTML tab holds them."""
    pdf, position = squeezed(book.text), 0
    for tabs in tab_sets(book):
        for label, content in tabs:
            found = pdf.find(squeezed(label + content), position)
            assert found >= 0, f"the {label} tab that shows {content.strip()[:80]!r} is missing or out of order"
            position = found


def test_every_mxnet_example_has_its_code(book: Book):
    code = [pre.get_text() for body in book.articles.values() for tab_set in body.select("div.sd-tab-set")
            for label in tab_set.find_all("label", recursive=False) if label.get_text(strip=True) == "MXNet"
            for pre in label.find_next_sibling("div", class_="sd-tab-content").select("div.example-code pre")]
    assert code, "the book shows no MXNet code"
    pdf = squeezed(book.text)
    for block in code:
        assert squeezed(block) in pdf, f"MXNet code missing from the PDF: {block[:80]!r}"


def structure_figures(reader: PdfReader) -> list[str]:
    """The alt texts of the PDF's tagged figures, in reading order."""
    found = []

    def walk(element) -> None:
        element = element.get_object()
        if isinstance(element, DictionaryObject):
            if element.get("/S") == "/Figure":
                found.append(str(element.get("/Alt", "")))
            kids = element.get("/K")
            for kid in kids if isinstance(kids, ArrayObject) else [kids] if kids is not None else []:
                walk(kid)

    walk(reader.trailer["/Root"]["/StructTreeRoot"])
    return found


def resources(reader: PdfReader):
    """Every object that the PDF's pages draw, and the forms inside them (the SVG figures), draw."""
    def walk(holder):
        held = holder.get_object().get("/Resources") if holder is not None else None
        if held is None:
            return
        held = held.get_object()
        for kind in ("/Font", "/XObject"):
            for ref in held[kind].get_object().values() if kind in held else []:
                yield ref
                if ref.get_object().get("/Subtype") == "/Form":
                    yield from walk(ref.get_object())

    for page in reader.pages:
        yield from walk(page)


def test_every_figure_is_in_the_pdf_and_vector_figures_stay_vectors(book: Book):
    """Every image of the HTML book is a tagged figure of the PDF with its alt text, in order; only the
    PNGs are pixels in the PDF, so the SVG figures stayed vectors."""
    images = [img for body in book.articles.values() for img in body.select("img")]
    assert any(".svg" in img["src"] for img in images), "no SVG figure to check"
    # Chromium tags each <figure> too, as a figure without alt text, around its <img>.
    tagged = [" ".join(alt.split()) for alt in structure_figures(book.reader) if alt]
    assert tagged == [" ".join(img["alt"].split()) for img in images]
    pixels = {ref.idnum for ref in resources(book.reader) if ref.get_object().get("/Subtype") == "/Image"}
    assert len(pixels) == len({img["src"] for img in images if img["src"].startswith("data:image/png")})


def unembedded_fonts(reader: PdfReader) -> set[str]:
    """The fonts that the PDF uses but does not carry (a Type 3 font's glyphs are drawings in the PDF)."""
    missing = set()
    for ref in resources(reader):
        font = ref.get_object()
        if font.get("/Type") != "/Font" or font["/Subtype"] == "/Type3":
            continue
        described = font["/DescendantFonts"][0].get_object() if font["/Subtype"] == "/Type0" else font
        descriptor = described.get("/FontDescriptor")
        if descriptor is None or not {"/FontFile", "/FontFile2", "/FontFile3"} & set(descriptor.get_object()):
            missing.add(str(font.get("/BaseFont")))
    return missing


def test_every_font_is_embedded(book: Book):
    assert not unembedded_fonts(book.reader)


def test_the_font_check_finds_a_font_that_is_not_embedded(tmp_path: Path):
    """A PDF that names Helvetica without carrying it, as a PDF printed without embedding would."""
    writer = PdfWriter()
    page = writer.add_blank_page(100, 100)
    font = writer._add_object(DictionaryObject({NameObject("/Type"): NameObject("/Font"),
                                                NameObject("/Subtype"): NameObject("/Type1"),
                                                NameObject("/BaseFont"): NameObject("/Helvetica")}))
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    writer.write(tmp_path / "plain.pdf")
    assert unembedded_fonts(PdfReader(tmp_path / "plain.pdf")) == {"/Helvetica"}


# Links
# -----


def expected_destinations(book: Book) -> set[str]:
    """Where the HTML's cross-references and citations point, as the PDF names its destinations."""
    docnames = {page: page.removesuffix(".html") for page, _ in book.pages}
    first_sections = {page: body.select_one("section")["id"] for page, body in book.articles.items()}
    targets = set()
    for page, body in book.articles.items():
        for link in body.select("a.reference.internal[href]"):
            if link.find_parent(class_="toctree-wrapper") or "download" in link["class"]:
                continue  # the PDF's own contents replace the toctrees; the downloads stay online
            address, _, fragment = urljoin(page, link["href"]).partition("#")
            address = address or page
            targets.add(anchor(docnames[address], unquote(fragment) or first_sections[address]))
    return targets


def link_destinations(reader: PdfReader) -> list[str]:
    names = []
    for page in reader.pages:
        for ref in page.get("/Annots", []) or []:
            annotation = ref.get_object()
            if annotation.get("/Subtype") == "/Link" and "/Dest" in annotation:
                names.append(str(annotation["/Dest"]).removeprefix("/"))
    return names


def test_cross_references_and_citations_are_links_that_land(book: Book):
    """Every cross-reference and citation of the HTML is a link in the PDF, and every link of the PDF
    lands on a destination that exists."""
    links = link_destinations(book.reader)
    known = {name.removeprefix("/") for name in book.reader.named_destinations}
    assert not set(links) - known, f"links that point nowhere: {set(links) - known}"
    assert expected_destinations(book) <= set(links), expected_destinations(book) - set(links)


# The website's chrome stays out
# ------------------------------


def test_no_screen_chrome_in_the_pdf(book: Book):
    """Nothing of the website's header, search, buttons, downloads, page links or footer."""
    page = BeautifulSoup((HTML / book.lang / book.pages[1][0]).read_text(encoding="utf-8"), "html.parser")
    chrome = {page.select_one("#pst-search-dialog input")["placeholder"], "Ctrl+K"}
    chrome |= {link["title"] for link in page.select(".prev-next-area a[title]")}
    for selector in ("#pst-skip-link", "#pst-back-to-top", ".footer-item .component-author",
                     ".footer-item .copyright", "p.example-download a", ".dropdown-download-buttons a"):
        chrome |= {element.get_text(" ", strip=True) for element in page.select(selector)}
    chrome.discard("")
    shown = [text for text in chrome if squeezed(text) in squeezed(book.text)]
    assert not shown, f"the PDF shows the website's {shown}"


# Turkish
# -------

TURKISH_LETTERS = set("çğıöşüÇĞİÖŞÜ")


def test_turkish_letters_are_in_the_turkish_pdf(tr_book: Book):
    """Every Turkish letter of the HTML book is in the PDF's text (with its own glyph, not a fallback)."""
    in_html = TURKISH_LETTERS & set("".join(a.get_text() for a in tr_book.articles.values()))
    assert set("çğıöşü") <= in_html
    assert in_html <= set(tr_book.text), in_html - set(tr_book.text)


# A word broken at a line's end: letters, a hyphen that no word of the text holds there (U+2010, which
# Chromium draws where it breaks a line inside a word; a hyphen-minus of the text is U+002D) or a soft
# hyphen, then letters on the next line.
SPLIT_WORD = re.compile(r"[^\W\d_]+[ \N{SOFT HYPHEN}]*[\N{HYPHEN}\N{SOFT HYPHEN}]\s*\n\s*[^\W\d_]+")


def split_words(text: str) -> list[str]:
    """The words of a PDF's extracted text that a soft hyphen or a line-end hyphen cuts."""
    return SPLIT_WORD.findall(text) + re.findall(r"\S*\N{SOFT HYPHEN}\S*", text)


def test_the_word_check_finds_a_hyphenated_line_end_and_a_soft_hyphen():
    """Chromium's two forms of a word broken at a line's end, as pypdf extracts them; a hyphen-minus
    of the text (a code line that wraps after "--size") is no broken word."""
    assert split_words("bir çalıştırma\N{SOFT HYPHEN}\N{HYPHEN}\nsından gelir") == [
        "çalıştırma\N{SOFT HYPHEN}\N{HYPHEN}\nsından", "çalıştırma\N{SOFT HYPHEN}\N{HYPHEN}"]
    assert split_words("bir çalıştırma     \N{HYPHEN}\n      sından") == ["çalıştırma     \N{HYPHEN}\n      sından"]
    assert not split_words("python x.py --\nsize 256; ortanca [en az-en çok]\nsonra")


def test_the_pdf_keeps_every_word_whole(book: Book):
    """Search and copy find every word of the PDF: its text holds no soft hyphen and no word broken at a
    line's end, in reading order and in drawing order; every word of the prose of 8 letters or more is
    in the PDF's text, whole. The check reads words, whatever block a line's next text belongs to."""
    for text in (book.text, book.drawing_order_text):
        assert not split_words(text), f"words cut in the {book.lang} PDF: {split_words(text)[:5]}"
    pdf_words = set(re.findall(r"[^\W\d_]+", book.text))
    prose = {w for body in book.articles.values() for p in body.select("p:not(.example-download)")
             for w in re.findall(r"[^\W\d_]{8,}", p.get_text(" "))}
    assert prose <= pdf_words, f"words missing from the {book.lang} PDF: {sorted(prose - pdf_words)[:10]}"


# make pdf
# --------


def test_make_pdf_stops_with_one_line_when_a_tool_cannot_be_installed(tmp_path: Path):
    """Without chromium, and with an apt-get that cannot install it, make pdf says in one line what to
    install, before it builds anything."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "apt-get").write_text("#!/bin/sh\necho 'E: Could not open lock file' >&2\nexit 100\n")
    (fake / "apt-get").chmod(0o755)
    result = subprocess.run(["make", "pdf", f"CHROMIUM={tmp_path}/chromium", f"BUILDDIR={tmp_path}/build"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60,
                            env={"PATH": f"{fake}:/usr/bin:/bin"})
    assert result.returncode != 0
    ours = [line for line in result.stderr.splitlines() if not line.startswith("make:")]
    assert ours == ["The PDF and the browser tests need Debian's chromium: run 'apt-get install chromium' "
                    "as root"], result.stderr
    assert "Building" not in result.stdout and not (tmp_path / "build").exists()


def test_make_html_needs_nothing_of_the_pdf():
    result = subprocess.run(["make", "-n", "html", "CHROMIUM=/nonexistent"], cwd=ROOT, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert not re.search(r"apt-get|chromium|pdfhtml|print_pdf", result.stdout), result.stdout


def test_make_pdf_builds_the_html_books_before_the_pdfs_page():
    """The PDF's page shares the HTML books' doctrees, so make pdf builds the HTML books first: a page
    that the PDF's build had read again (its comment catalog or recording changed) would otherwise stay
    stale in the HTML book, which writes only the pages it reads again or whose source is newer."""
    result = subprocess.run(["make", "-n", "pdf"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    builders = re.findall(r"-m sphinx -b (html|pdfhtml) ", result.stdout)
    assert builders == ["html", "pdfhtml", "html"], result.stdout


@pytest.mark.parametrize(("head", "error"), [
    ('<meta name="book-pdf" content="a.pdf"><link rel="stylesheet" href="http://127.0.0.1:9/x.css">',
     "loads http://127.0.0.1:9/x.css from outside the book; the PDF is printed offline"),
    ("", "does not name its PDF (meta book-pdf): build it with 'sphinx -b pdfhtml'")])
def test_the_printer_stops_with_one_line_on_a_page_it_cannot_print(tmp_path: Path, head: str, error: str):
    """A page that reaches outside the book, or that names no PDF, is not printed: one line says why."""
    page = tmp_path / "index.html"
    page.write_text(f"<!DOCTYPE html><html lang=en><head>{head}</head><body><p>Text</p></body></html>")
    result = subprocess.run([sys.executable, str(ROOT / "conf" / "print_pdf.py"), "--out", str(tmp_path / "pdf"),
                             str(page)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and result.stderr == f"{page} {error}\n", result.stderr
    assert not list((tmp_path / "pdf").iterdir())


def test_the_printer_skips_a_book_whose_files_it_printed_last_time(tmp_path: Path):
    """A book whose files hash as at its last printing is not printed again (`make test` runs `make pdf`
    each time); a changed file prints it again. The page names no PDF, so a printing fails at once."""
    sys.path.insert(0, str(ROOT / "conf"))
    from print_pdf import PRINTED, source_digest

    page = tmp_path / "book" / "index.html"
    page.parent.mkdir()
    page.write_text("<!DOCTYPE html><html lang=en><head></head><body><p>Text</p></body></html>")
    out = tmp_path / "pdf"
    out.mkdir()
    (out / "book.pdf").write_bytes(b"%PDF-1.7")
    (out / PRINTED).write_text(json.dumps({str(page.resolve()): {"sha256": source_digest(page), "pdf": "book.pdf"}}))

    def run():
        return subprocess.run([sys.executable, str(ROOT / "conf" / "print_pdf.py"), "--out", str(out), str(page)],
                              capture_output=True, text=True, timeout=120)

    skipped = run()
    assert skipped.returncode == 0 and skipped.stdout == f"{out / 'book.pdf'}: up to date\n", skipped
    (page.parent / "style.css").write_text("p { color: black }")
    printed = run()
    assert printed.returncode == 1 and "does not name its PDF" in printed.stderr, printed
