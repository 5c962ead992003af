"""What a reader gets in a real browser: Debian's chromium, driven by Playwright, on the built books.

``make test`` builds ``_build/html`` first and installs ``/usr/bin/chromium`` when it is missing. The
books are served over HTTP on 127.0.0.1 from a thread; the browser may reach nothing else. Every page of
both books is opened once as by a first-time reader, with no stored settings (the ``crawl`` fixture);
the other tests drive the pages that show what they check. axe-core (axe-playwright-python, pinned in
requirements.txt) checks every page for accessibility during that crawl.
``test_make_serve_...`` runs ``make serve`` itself and takes about half a minute.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from bs4 import BeautifulSoup
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from pypdf import PdfReader

from browser_support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    HTML,
    LANGUAGES,
    ROOT,
    LinkChecker,
    Visit,
    book_pages,
    crawl as crawl_pages,
    crawl_context,
    fetch,
    free_port,
    new_context,
    serve,
)
from code_comments import translate

OTHER = {"en": "tr", "tr": "en"}
CHAPTER = "chapter_computational-performance/"
FRAMEWORK_LABEL = 'data-sync-group="framework"'
# What axe checks on every page: WCAG 2.1 A and AA, and axe's best practices, as the review
# ran them; a critical or serious violation fails. axe details only the violations (every node of
# each), not the rules that pass, which saves a quarter of its time.
AXE_RULES = {"runOnly": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"], "resultTypes": ["violations"]}
BLOCKING = ("critical", "serious")


# Fixtures
# --------


@pytest.fixture(scope="session")
def site() -> str:
    """The base URL of ``_build/html``, served on 127.0.0.1."""
    missing = [str(HTML / lang / "index.html") for lang in LANGUAGES if not (HTML / lang / "index.html").is_file()]
    if missing or not (HTML / "index.html").is_file():
        pytest.fail(f"the books are not built ({', '.join(missing) or HTML / 'index.html'} missing): "
                    "run 'make html' ('make test' does it first)")
    with serve(HTML) as base:
        yield base


@pytest.fixture(scope="session")
def browser():
    """Debian's headless chromium; a missing browser fails the tests, it never skips them."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing, so the browser tests cannot run: 'make test' installs it "
                    "('apt-get install chromium'); do not run 'playwright install'")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        except Exception as err:  # noqa: BLE001 - say why the browser did not start
            pytest.fail(f"{CHROMIUM} did not start: {err}")
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def crawl(site, browser) -> dict[str, Visit]:
    """Every page of both books and the language chooser, each opened as by a first-time reader, and
    checked by axe-core once it has settled (``Visit.inspected``: its blocking violations)."""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()

    def accessibility(tab) -> list[str]:
        return [f"{violation['impact']} {violation['id']}: "
                + "; ".join(node["html"][:120] for node in violation["nodes"][:3])
                for violation in axe.run(tab, options=AXE_RULES).response["violations"]
                if violation["impact"] in BLOCKING]

    context = crawl_context(browser, site)
    try:
        return crawl_pages(context, site, ["index.html"] + [page for lang in LANGUAGES for page in book_pages(lang)],
                           inspect=accessibility)
    finally:
        context.close()


@pytest.fixture
def reader(site, browser):
    """A fresh browser profile for one test; yields a function that opens a new tab in it."""
    contexts = []

    def open_tab(**options):
        context = new_context(browser, site, **options)
        contexts.append(context)
        tab = context.new_page()
        tab.errors = []
        tab.on("pageerror", lambda error: tab.errors.append(str(error)))
        return tab

    yield open_tab
    for context in contexts:
        context.close()


def pages_with_framework_tabs(lang: str) -> list[tuple[str, int]]:
    """The pages of a book that show framework tabs, with how many tab-sets each has."""
    found = []
    for page in book_pages(lang):
        html = (HTML / page).read_text(encoding="utf-8")
        sets = len(re.findall(r'<div class="sd-tab-set[^"]*"', html)) if FRAMEWORK_LABEL in html else 0
        if sets:
            found.append((page, sets))
    if not found:
        pytest.fail(f"no page of the {lang} book shows PyTorch/MXNet tabs")
    return found


def chapter_page(lang: str) -> str:
    """The page with the most example tabs: the one most of these tests read."""
    return max(pages_with_framework_tabs(lang), key=lambda item: item[1])[0]


# The header items that stick out of the article's header bar (half hidden under the page's top edge).
HEADER_OVERFLOW_JS = """() => {
  const bar = document.querySelector('.bd-header-article')?.getBoundingClientRect();
  if (!bar) return ['no article header'];
  return [...document.querySelectorAll('.bd-header-article a.language-switch, .bd-header-article .btn')]
    .filter(el => el.getClientRects().length > 0)
    .map(el => [el, el.getBoundingClientRect()])
    .filter(([el, box]) => box.top < bar.top - 1 || box.bottom > bar.bottom + 1)
    .map(([el, box]) => `${el.className} (${Math.round(box.top)}-${Math.round(box.bottom)} px,`
                        + ` bar ${Math.round(bar.top)}-${Math.round(bar.bottom)} px)`);
}"""


# Framework tabs
# --------------

# Tab-sets with both framework tabs (a cell that runs in one framework only has a single tab).
TAB_STATE_JS = """() => [...document.querySelectorAll('.sd-tab-set')]
  .filter(set => set.querySelector('label[data-sync-group="framework"][data-sync-id="mxnet"]'))
  .map(set => {
    const labels = [...set.querySelectorAll(':scope > label.sd-tab-label')];
    const checked = labels.find(label => document.getElementById(label.htmlFor)?.checked);
    const shown = labels.filter(label => {
      const panel = label.nextElementSibling;
      return panel && panel.getClientRects().length > 0;
    });
    return [checked ? checked.dataset.syncId : null, shown.map(label => label.dataset.syncId)];
  })"""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_choosing_mxnet_switches_every_tab_and_holds_on_the_next_page(reader, site, lang):
    """A reader who picks MXNet in one example sees MXNet in every example, on this page and the next."""
    pages = [page for page, _ in pages_with_framework_tabs(lang)
             if 'data-sync-id="mxnet"' in (HTML / page).read_text(encoding="utf-8")]
    first = chapter_page(lang)
    following = [page for page in pages if page != first]
    assert following, f"only {first} has framework tabs, so the choice cannot be seen holding elsewhere"
    tab = reader()
    tab.goto(site + first)
    before = tab.evaluate(TAB_STATE_JS)
    assert len(before) >= 2, f"{first} has {len(before)} framework tab-set(s); the test needs two"
    assert all(state == ["pytorch", ["pytorch"]] for state in before), f"{first} does not open on PyTorch: {before}"

    tab.locator(".sd-tab-set").last.locator('label[data-sync-id="mxnet"]').click()
    after = tab.evaluate(TAB_STATE_JS)
    wrong = [i for i, state in enumerate(after) if state != ["mxnet", ["mxnet"]]]
    assert not wrong, f"{first}: after choosing MXNet in the last example, tab-sets {wrong} still show {after}"

    for page in following:
        tab.goto(site + page)
        states = tab.evaluate(TAB_STATE_JS)
        assert states and all(state == ["mxnet", ["mxnet"]] for state in states), (
            f"the MXNet choice made on {first} does not hold on {page}: {states}")
    assert not tab.errors, tab.errors


# Language links
# --------------


def test_language_link_on_every_page_leads_to_the_same_page_in_the_other_language_and_back(crawl, site):
    """Every page of both books links to itself in the other language, and that page links back."""
    problems = []
    for page, seen in crawl.items():
        lang = page.split("/")[0]
        if lang not in LANGUAGES:
            continue
        if len(seen.language_links) != 1:
            problems.append(f"{page}: {len(seen.language_links)} language links instead of one")
            continue
        target = seen.language_links[0].removeprefix(site)
        expected = f"{OTHER[lang]}/{page.split('/', 1)[1]}"
        if target != expected:
            problems.append(f"{page}: the language link goes to {seen.language_links[0]}, not {site}{expected}")
        elif target not in crawl or fetch(site + target)[0] != 200:
            problems.append(f"{page}: the language link's page {target} does not exist")
        elif crawl[target].lang != OTHER[lang]:
            problems.append(f"{page}: the language link's page {target} has lang={crawl[target].lang!r}")
        elif [link.removeprefix(site) for link in crawl[target].language_links] != [page]:
            problems.append(f"{page}: {target} links back to {crawl[target].language_links}, not to {page}")
    assert not problems, "\n".join(problems)


def test_clicking_the_language_link_switches_the_book_and_back(reader, site):
    """A reader who clicks the language link lands on the same page in Turkish, and clicking again returns."""
    page = chapter_page("en")
    tab = reader()
    tab.goto(site + page)
    assert not tab.evaluate(HEADER_OVERFLOW_JS), "the language link or buttons stick out of the header bar"
    tab.locator("a.language-switch").click()
    tab.wait_for_load_state()
    assert tab.url == site + "tr/" + page.split("/", 1)[1]
    assert tab.evaluate("document.documentElement.lang") == "tr"
    tab.locator("a.language-switch").click()
    tab.wait_for_load_state()
    assert tab.url == site + page
    assert tab.evaluate("document.documentElement.lang") == "en"


# Home pages
# ----------

# The visible search boxes and buttons: the sidebar's field, the header's field or button, the dialog's form.
SEARCH_BOXES_JS = """() => [...document.querySelectorAll(
    '.search-button-field, .search-button, form.bd-search, input[type=search], input[name=q]')]
  .filter(el => el.getClientRects().length > 0 && !el.closest('dialog:not([open])'))
  .map(el => el.className || el.tagName)"""


def chapter_reading_order(lang: str) -> list[str]:
    """The chapter's pages as its index's toctree orders them, the index first."""
    index = (ROOT / "docs" / lang / CHAPTER / "index.rst").read_text(encoding="utf-8")
    toctree = re.search(r"^\.\. toctree::\n((?:[ \t]+.*\n|\n)+)", index, re.M)[1]
    entries = [line.strip() for line in toctree.splitlines() if line.strip() and not line.strip().startswith(":")]
    return [f"{CHAPTER}index.html"] + [f"{CHAPTER}{entry}.html" for entry in entries]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_home_page_lists_every_chapter_page_in_reading_order_with_what_it_teaches(reader, site, lang):
    """The home page links every page of the chapter, in the chapter's reading order, each in a list
    item that says in a line what the page teaches; it links no heading inside a page."""
    tab = reader()
    tab.goto(f"{site}{lang}/index.html")
    items = tab.eval_on_selector_all(
        "article li:has(> p > a.internal, > a.internal)",
        "items => items.map(li => [li.querySelector('a.internal').href, li.querySelector('a.internal').innerText,"
        " li.innerText])")
    linked = [href.removeprefix(f"{site}{lang}/") for href, _, _ in items]
    expected = chapter_reading_order(lang)
    assert [page for page in linked if page.startswith(CHAPTER)] == expected, (
        f"the {lang} home page lists {linked}, not the chapter's pages {expected}")
    for href, title, text in items:
        line = text.removeprefix(title).lstrip(":").strip()
        assert len(line.split()) >= 5, f"{href}: '{line}' does not say what the page teaches"
        assert "#" not in href, f"the home page links a heading inside a page: {href}"
    assert not tab.errors, tab.errors


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("width", [1280, 375])
def test_every_page_shows_exactly_one_search_box(reader, site, lang, width):
    """The home page and a chapter page show one search box, on a wide screen and on a phone."""
    tab = reader(viewport={"width": width, "height": 900})
    for page in (f"{lang}/index.html", chapter_page(lang)):
        tab.goto(site + page)
        tab.wait_for_load_state("load")
        boxes = tab.evaluate(SEARCH_BOXES_JS)
        assert len(boxes) == 1, f"{page} at {width} px shows {len(boxes)} search boxes: {boxes}"


# Search
# ------

SEARCH_SUMMARY = {"en": "Search finished, found", "tr": "Arama bitti: sorguyla eşleşen"}
CHROME_WORDS = {"en": "System Settings", "tr": "Sistem ayarı"}


# Inflected forms whose stem differs from the word: found only when the book's own stemmer (Turkish
# in the Turkish book) reduces them to the stem of the title word ("paralellik"), as the index did.
@pytest.mark.parametrize(("lang", "query", "title_word"), [
    ("tr", "paralelliğin", "paralellik"), ("tr", "paralellikler", "paralellik"),
    ("en", "parallelisms", "parallelism")])
def test_search_finds_the_chapter(reader, site, lang, query, title_word):
    """Typing an inflected word of the chapter into the search box (Ctrl+K) lists the chapter's pages."""
    tab = reader()
    tab.goto(f"{site}{lang}/index.html")
    tab.keyboard.press("Control+k")
    field = tab.locator("#pst-search-dialog input[name=q]")
    field.fill(query)
    field.press("Enter")
    tab.wait_for_url(lambda url: url.startswith(f"{site}{lang}/search.html?q="))
    try:
        tab.wait_for_function("document.querySelector('#search-results .search-summary')?.innerText.length > 0",
                              timeout=15_000)
    except PlaywrightTimeout:
        pytest.fail(f"searching {query!r} showed no summary line within 15 s; the page threw: {tab.errors}")
    summary = tab.inner_text("#search-results .search-summary")
    results = tab.eval_on_selector_all(
        "#search-results ul.search > li",
        "items => items.map(li => [li.querySelector('a').href, li.querySelector('a').innerText,"
        " li.querySelector('.context')?.innerText || ''])")
    hits = [href for href, title, _ in results
            if CHAPTER in href and title_word in title.lower() and href.startswith(f"{site}{lang}/")]
    assert hits, f"searching {query!r} in the {lang} book lists no chapter page titled with it: {results}"
    assert summary.startswith(SEARCH_SUMMARY[lang]), f"the summary line is {summary!r}"
    noisy = [title for _, title, context in results if CHROME_WORDS[lang] in context]
    assert not noisy, f"these results quote the page's buttons instead of its text: {noisy}"
    assert not tab.errors, f"the search page threw: {tab.errors}"


# Copy button
# -----------

COPY_TOOLTIPS = {"en": ("Copy", "Copied!"), "tr": ("Kopyala", "Kopyalandı!")}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_copy_button_copies_the_code_without_outputs(reader, site, lang):
    """The copy button of an example cell puts exactly its code on the clipboard; outputs have no button."""
    tab = reader(permissions=["clipboard-read", "clipboard-write"])
    tab.goto(site + chapter_page(lang))
    tab.wait_for_selector(".example-code button.copybtn")
    counts = tab.evaluate("""() => ({
      code: document.querySelectorAll('.example-code pre').length,
      buttons: document.querySelectorAll('.example-code pre + button.copybtn').length,
      onOutputs: document.querySelectorAll('.example-output button.copybtn, .recording-stamp button.copybtn').length,
    })""")
    assert counts["code"] and counts["buttons"] == counts["code"], f"code blocks without a copy button: {counts}"
    assert counts["onOutputs"] == 0, f"outputs or stamps have copy buttons: {counts}"

    # the first example cell whose outputs follow it in the same tab
    cell = tab.locator(".sd-tab-content:visible .example-code:has(+ .example-output)").first
    code = cell.locator("pre").evaluate("pre => pre.textContent").rstrip("\n")
    output = cell.locator("xpath=following-sibling::div[contains(@class, 'example-output')][1]//pre").inner_text()
    button = cell.locator("button.copybtn")
    copy, copied = COPY_TOOLTIPS[lang]
    assert button.get_attribute("data-tooltip") == copy
    cell.hover()
    button.click()
    clipboard = tab.evaluate("navigator.clipboard.readText()")
    assert clipboard == code, f"the clipboard holds\n{clipboard!r}\ninstead of the cell's code\n{code!r}"
    assert output.strip() and output.strip() not in clipboard
    assert not any(line.startswith((">>> ", "... ", "$ ")) for line in clipboard.splitlines())
    assert button.get_attribute("data-tooltip") == copied
    assert not tab.errors, tab.errors


# Downloads
# ---------


DOWNLOADS_JS = """() => [...document.querySelectorAll('.sd-tab-set')]
  .flatMap(set => [...set.querySelectorAll(':scope > label.sd-tab-label')].map(label => [
    label.dataset.syncId,
    [...label.nextElementSibling.querySelectorAll('a.download')].map(a => a.href)]))"""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_tab_downloads_its_own_framework(reader, site, lang):
    """Clicking through the tabs, each framework's zip link serves a zip holding that framework's script."""
    import io
    import zipfile

    tab = reader()
    checked = 0
    for page, _ in pages_with_framework_tabs(lang):
        tab.goto(site + page)
        for framework, links in tab.evaluate(DOWNLOADS_JS):
            for link in (link for link in links if link.endswith(".zip")):
                status, body = fetch(link)
                assert status == 200, f"{page}: {link}: HTTP {status}"
                name = Path(urlsplit(link).path).name.rsplit("-", 1)[0] + ".py"
                script = (ROOT / "examples" / framework / name).read_text(encoding="utf-8")
                with zipfile.ZipFile(io.BytesIO(body)) as archive:  # the book's language in its comments
                    assert archive.read(name).decode("utf-8") == translate(script, lang), (
                        f"{page}: the {framework} tab's {link} does not serve examples/{framework}/{name}")
                checked += 1
    assert checked, f"no tab of the {lang} book offers a zip"


# The header's download menu offers the book's PDF (make pdf writes it beside each book).
PDF_ENTRY = {"en": "The book (.pdf)", "tr": "Kitap (.pdf)"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_download_menu_serves_this_books_pdf(reader, site, lang):
    """A click opens the header's download menu, which offers the whole book as a PDF in the page's
    language; following that entry serves the PDF that make pdf printed for this book."""
    tab = reader()
    tab.goto(site + chapter_page(lang))
    tab.click(".dropdown-download-buttons button.dropdown-toggle")
    entry = tab.locator(".dropdown-download-buttons a.btn-download-pdf-button")
    assert entry.is_visible() and entry.inner_text().strip() == PDF_ENTRY[lang]
    with tab.context.expect_event("response", lambda response: response.url.endswith(".pdf")) as served:
        entry.click()
    response = served.value
    name = Path(urlsplit(response.url).path).name
    assert response.url == f"{site}{lang}/{name}" and response.status == 200, response.url
    assert response.header_value("content-type") == "application/pdf"
    status, body = fetch(response.url)
    assert status == 200 and body == (ROOT / "_build" / "pdf" / name).read_bytes()
    assert PdfReader(io.BytesIO(body)).trailer["/Root"]["/Lang"] == lang


# Images
# ------

@pytest.mark.parametrize("lang", LANGUAGES)
def test_chart_images_load_and_have_alt_text(crawl, lang):
    """Every chart and figure of the book shows (it decodes, naturalWidth > 0) and has alt text."""
    charts, problems = 0, []
    for page, seen in crawl.items():
        if not page.startswith(f"{lang}/"):
            continue
        for image in seen.images:
            charts += image["chart"]
            if image["width"] <= 0:
                problems.append(f"{page}: {image['src']} does not load")
            if not image["alt"].strip():
                problems.append(f"{page}: {image['src']} has no alt text")
    assert charts, f"the {lang} book shows no chart (img.example-image)"
    assert not problems, "\n".join(problems)


# Every page: scripts, links, resources
# -------------------------------------


# Errors whose fix is known: a hint for the failure message.
KNOWN_ERRORS = {
    "Got invalid theme mode": "pydata-sphinx-theme logs this on a first visit unless conf.py sets "
                              "html_context = {'default_mode': 'auto'}",
}


def test_no_page_logs_a_javascript_error(crawl):
    """No page of either book throws or logs an error in the browser console."""
    problems = [f"{page}: {error}" for page, seen in crawl.items() for error in seen.page_errors + seen.console_errors]
    hints = [f"({hint})" for text, hint in KNOWN_ERRORS.items() if any(text in problem for problem in problems)]
    assert not problems, "\n".join(problems + hints)


def test_no_internal_link_or_resource_is_broken(crawl, site):
    """Every link between pages, every #anchor, and every image, script and stylesheet of the books works."""
    checker = LinkChecker()
    problems = [f"{page}: {failure}" for page, seen in crawl.items() for failure in seen.failed]
    for page, seen in crawl.items():
        for url in seen.links + seen.resources:
            if url.startswith(site) and (why := checker.problem(url)):
                problems.append(f"{page}: {url.removeprefix(site)}: {why}")
    assert len(checker.status) > 10, "the crawl found almost nothing to check"
    assert not problems, "\n".join(sorted(set(problems)))


def test_pages_work_offline(crawl):
    """No page loads anything from another site, so the books work on a machine without a network."""
    problems = sorted({f"{page}: {url}" for page, seen in crawl.items() for url in seen.external})
    assert not problems, "pages load resources from other sites:\n" + "\n".join(problems)


# Phone
# -----

OVERFLOW_JS = """() => {
  const width = window.innerWidth;
  const scrolls = el => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
  const culprits = [];
  for (const el of document.querySelectorAll('body *')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.right <= width + 1) continue;
    let parent = el.parentElement, contained = false;
    for (; parent && parent !== document.body; parent = parent.parentElement) {
      if (scrolls(parent) && parent.getBoundingClientRect().right <= width + 1) { contained = true; break; }
    }
    if (!contained) culprits.push(`${el.tagName.toLowerCase()}.${[...el.classList].join('.')} (right edge ${Math.round(box.right)})`);
  }
  return {scrollWidth: document.scrollingElement.scrollWidth, width, culprits: culprits.slice(0, 8)};
}"""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_pages_are_usable_at_phone_width(reader, site, lang):
    """On a 375 px phone no page scrolls sideways (wide code and tables scroll inside themselves), and the
    language link and buttons sit in the header bar."""
    tab = reader(viewport={"width": 375, "height": 812}, device_scale_factor=2, is_mobile=True, has_touch=True)
    problems = []
    for page in book_pages(lang):
        tab.goto(site + page)  # the load event: styles and images are in; the fonts may still come
        tab.evaluate("document.fonts.ready.then(() => true)")
        layout = tab.evaluate(OVERFLOW_JS)
        if layout["scrollWidth"] > layout["width"]:
            problems.append(f"{page}: the page is {layout['scrollWidth']} px wide at {layout['width']} px; "
                            f"too wide: {layout['culprits']}")
        for item in tab.evaluate(HEADER_OVERFLOW_JS):
            problems.append(f"{page}: out of the header bar: {item}")
    assert not problems, "\n".join(problems)


# The language chooser
# --------------------


def test_root_index_offers_both_books_without_javascript(reader, site):
    """With JavaScript off, the root page links to the English and the Turkish book and stays there."""
    tab = reader(java_script_enabled=False)
    tab.goto(site + "index.html")
    links = tab.eval_on_selector_all("a[href]", "links => links.map(a => [a.getAttribute('href'), a.innerText])")
    hrefs = [href for href, _ in links]
    assert "en/index.html" in hrefs and "tr/index.html" in hrefs, f"the chooser's links: {links}"
    assert tab.locator('a[href="en/index.html"]').is_visible() and tab.locator('a[href="tr/index.html"]').is_visible()
    assert not tab.locator('meta[http-equiv="refresh" i]').count(), "the root page redirects on a timer"
    assert tab.url == site + "index.html"


@pytest.mark.parametrize(("languages", "book"), [(["en-US", "en"], "en"), (["tr-TR"], "tr"),
                                                 (["de-DE", "en-GB"], "en"), (["de-DE", "fr"], None)])
def test_root_index_opens_the_readers_language_with_javascript(reader, site, languages, book):
    """With JavaScript, the root page opens the book of the first of the browser's languages that the
    books have; with none of them, it stays the chooser."""
    tab = reader(locale=languages[0])
    tab.add_init_script(f"Object.defineProperty(navigator, 'languages', {{get: () => {languages!r}}})")
    tab.goto(site + "index.html")
    tab.wait_for_load_state("load")
    expected = site + (f"{book}/index.html" if book else "index.html")
    assert tab.url == expected, f"with languages {languages} the root page is at {tab.url}"


# Theme chrome in the book's language
# -----------------------------------

# selector, attribute (None: the visible text), expected text in each language
CHROME = [
    ("#pst-skip-link a", None, {"en": "Skip to main content", "tr": "Ana içeriğe geç"}),
    ("#pst-back-to-top", None, {"en": "Back to top", "tr": "Başa dön"}),
    (".bd-sidebar-secondary .onthispage", None, {"en": "Contents", "tr": "İçindekiler"}),
    ("#pst-search-dialog input[name=q]", "placeholder",
     {"en": "Search...", "tr": "Ara..."}),
    (".article-header-buttons .primary-toggle, .bd-header-article .primary-toggle", "title",
     {"en": "Toggle primary sidebar", "tr": "Kitabın gezintisini göster/gizle"}),
    (".bd-header-article .secondary-toggle", "title",
     {"en": "Toggle secondary sidebar", "tr": "Sayfanın içindekilerini göster/gizle"}),
    (".bd-header-article .theme-switch-button", "aria-label", {"en": "Color mode", "tr": "Renk kipi"}),
    (".bd-header-article .btn-fullscreen-button", "title", {"en": "Fullscreen mode", "tr": "Tam ekran kipi"}),
    (".bd-header-article .theme-change-button[data-mode=auto]", "textContent",
     {"en": "System Settings", "tr": "Sistem ayarı"}),
    (".bd-header-article .theme-change-button[data-mode=light]", "textContent", {"en": "Light", "tr": "Açık"}),
    (".bd-header-article .theme-change-button[data-mode=dark]", "textContent", {"en": "Dark", "tr": "Koyu"}),
    (".prev-next-area a.right-next", "title", {"en": "next page", "tr": "sonraki sayfa"}),
    (".prev-next-area a.left-prev", "title", {"en": "previous page", "tr": "önceki sayfa"}),
    ("nav.bd-docs-nav", "aria-label", {"en": "Main", "tr": "Ana gezinti"}),
    (".example-code button.copybtn", "data-tooltip", {"en": "Copy", "tr": "Kopyala"}),
    (".footer-item .component-author", None,
     {"en": "By The Automatic Parallelism authors", "tr": "Yazarlar: Otomatik Paralellik yazarları"}),
    ("a.language-switch", "title", {"en": "Read this page in Turkish", "tr": "Bu sayfayı İngilizce oku"}),
    ("h2 > a.headerlink", "title", {"en": "Link to this heading", "tr": "Bu başlığa bağlantı"}),
    ("#jb-print-toc nav", "aria-label", {"en": "Page", "tr": "Sayfa"}),
    ("figcaption a.headerlink", "title", {"en": "Link to this image", "tr": "Bu görsele bağlantı"}),
    (".footer-item .copyright", None, {"en": "© Copyright 2026, The Automatic Parallelism authors.",
                                       "tr": "© Telif hakkı 2026, Otomatik Paralellik yazarları."}),
]

# English that the Turkish book's chrome once showed (the list): none of it may appear in the
# Turkish pages' HTML outside the article's prose, with JavaScript off (what the builder wrote).
ENGLISH_IN_TURKISH = ["Link to this", 'aria-label="Page"', "Bu sayfayı English", "English oku", " threads)",
                      "The Automatic Parallelism authors", "et al.", ", and ", "arXiv preprint", "In Advances",
                      "Search...", "–size", " sn ·", "The book (.pdf)", "whole book as one PDF"]


def test_turkish_pages_have_no_english_chrome(reader, site):
    """No Turkish page, read without JavaScript, shows the English strings listed above outside the prose
    (tooltips, labels, stamps, footer, citations, the search field), nor "English" as a table header."""
    tab = reader(java_script_enabled=False)
    problems = []
    for page in book_pages("tr"):
        tab.goto(site + page)
        html = tab.evaluate("""() => {
          const copy = document.documentElement.cloneNode(true);
          // the prose itself is h6's: code and outputs quote English program text on purpose
          copy.querySelectorAll('pre, code, script, style').forEach(el => el.remove());
          return copy.outerHTML;
        }""")
        problems += [f"{page}: {text!r}" for text in ENGLISH_IN_TURKISH if text in html]
        headers = tab.eval_on_selector_all("th", "cells => cells.map(th => th.innerText.trim())")
        problems += [f"{page}: table header {h!r}" for h in headers if h in ("English", "Turkish")]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_theme_chrome_speaks_the_book_language(reader, site, lang):
    """The buttons, tooltips and labels around the text are in the book's language, and <html lang> says so."""
    tab = reader()
    page = chapter_page(lang)
    tab.goto(site + page)
    tab.wait_for_load_state("networkidle")
    assert tab.evaluate("document.documentElement.lang") == lang
    problems = []
    for selector, attribute, expected in CHROME:
        element = tab.locator(selector).first
        if not element.count():
            problems.append(f"{selector}: not on {page}")
            continue
        if attribute is None:
            shown = element.inner_text()
        elif attribute == "textContent":
            shown = element.text_content()
        elif attribute == "title":  # Bootstrap moves a tooltip's title here once it sets the tooltip up
            shown = element.get_attribute("title") or element.get_attribute("data-bs-original-title")
        else:
            shown = element.get_attribute(attribute)
        if (shown or "").strip() != expected[lang]:
            problems.append(f"{selector} {attribute or 'text'}: {shown!r}, expected {expected[lang]!r}")
    assert not problems, f"{page}:\n" + "\n".join(problems)


# make serve
# ----------


LANGUAGE_LINK = re.compile(r'<a class="[^"]*language-switch[^"]*" href="([^"]+)"')


def served_language_link(url: str) -> tuple[str, str]:
    """The <html lang> of a served page and the address its language link leads to."""
    status, body = fetch(url)
    assert status == 200, f"make serve answers {url} with HTTP {status}"
    html = body.decode("utf-8")
    links = LANGUAGE_LINK.findall(html)
    assert len(links) == 1, f"{url} has {len(links)} language links"
    return re.search(r'<html lang="(\w+)"', html)[1], urljoin(url, links[0])


def test_make_serve_previews_the_book_rebuilds_on_a_change_and_stops_with_make(tmp_path):
    """'make serve' serves the English book, as the README says, and rebuilds it when a source changes;
    its language link leads to the same page of the Turkish book and back; when make ends (here it is
    sent SIGTERM alone, not its process group), the server stops too (about half a minute)."""
    port = free_port()
    log_path = tmp_path / "serve.log"
    source = ROOT / "docs" / "en" / "index.rst"
    with log_path.open("wb") as log:
        process = subprocess.Popen(["make", "serve", f"SERVE_PORT={port}"], cwd=ROOT, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})
    site = f"http://127.0.0.1:{port}/"
    page = "chapter_computational-performance/index.html"

    def builds() -> tuple[int, int]:
        """How many builds have succeeded and failed so far, by sphinx-autobuild's log."""
        text = log_path.read_text(errors="replace")
        return text.count("build succeeded"), text.count("Sphinx exited with exit code")

    def wait_for_build(before: tuple[int, int], what: str, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"make serve stopped ({process.returncode}) before it could {what}:\n"
                            f"{log_path.read_text(errors='replace')[-3000:]}")
            succeeded, failed = builds()
            if failed > before[1]:
                pytest.fail(f"make serve could not {what}: the build failed:\n"
                            f"{log_path.read_text(errors='replace')[-3000:]}")
            if succeeded > before[0]:
                return
            time.sleep(0.5)
        pytest.fail(f"make serve did not {what} within {seconds} s:\n{log_path.read_text(errors='replace')[-3000:]}")

    def served_page() -> str:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                status, body = fetch(site + "index.html")
                if status == 200:
                    return body.decode("utf-8")
            except OSError:
                pass  # not listening yet
            time.sleep(0.3)
        pytest.fail(f"make serve built the book but does not serve {site}index.html")

    def group_alive() -> bool:
        try:
            os.killpg(process.pid, 0)
        except ProcessLookupError:
            return False
        return True

    try:
        wait_for_build((0, 0), "build the book", 180)
        html = served_page()
        assert '<html lang="en"' in html, "make serve does not preview the English book by default"
        assert "websocket-reload" in html, "the served page has no live-reload script"
        lang, other = served_language_link(site + page)
        assert (lang, other) == ("en", f"{site}tr/{page}"), f"the English page's language link leads to {other}"
        lang, back = served_language_link(other)
        assert (lang, back) == ("tr", site + page), f"the Turkish page ({lang}) links back to {back}"
        # Every link of both served pages answers, the download menu's PDF (make test printed it) too.
        checker, problems = LinkChecker(), []
        for url in (site + page, other):
            served = BeautifulSoup(fetch(url)[1].decode("utf-8"), "html.parser")
            assert served.select_one("a.btn-download-pdf-button"), f"{url}: the download menu offers no PDF"
            for element in served.select("a[href], link[href], script[src], img[src]"):
                link = urljoin(url, element.get("href") or element.get("src"))
                if link.startswith(site) and (why := checker.problem(link)):
                    problems.append(f"{url}: {link}: {why}")
        assert not problems, "\n".join(problems)
        before = builds()
        os.utime(source)  # a change that leaves the file as it was
        wait_for_build(before, "rebuild after a change", 60)
        assert '<html lang="en"' in served_page(), "after the rebuild make serve no longer serves the English book"

        process.send_signal(signal.SIGTERM)  # make alone, as when the make that runs it ends
        process.wait(timeout=15)
        deadline = time.monotonic() + 15
        while group_alive() and time.monotonic() < deadline:
            time.sleep(0.3)
        left = subprocess.run(["ps", "-o", "pid,args", "-g", str(process.pid)], capture_output=True, text=True).stdout
        assert not group_alive(), f"make ended, but these of its processes still run:\n{left}"
        with pytest.raises(OSError):
            fetch(site + "index.html")
    finally:
        if group_alive():
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()


# Accessibility
# -------------


def test_axe_finds_no_critical_or_serious_violation_on_any_page(crawl, site):
    """axe-core (pinned with axe-playwright-python) reports no critical or serious violation on the root
    page nor on any page of either book (the crawl runs it on each page it opens)."""
    moved = [f"{page} moved to {seen.url}" for page, seen in crawl.items() if seen.url != site + page]
    assert not moved, f"axe checked other pages than those opened: {moved}"
    assert len(crawl) > 10, f"axe checked only {list(crawl)}"
    problems = [f"{page}: {problem}" for page, seen in crawl.items() for problem in seen.inspected]
    assert not problems, "\n".join(problems)


# Reading width
# -------------

READING_WIDTH_JS = """() => ({
  code: [...document.querySelectorAll('.example-code pre')]
    .filter(pre => pre.getClientRects().length > 0 && pre.scrollWidth > pre.clientWidth + 1)
    .map(pre => `${pre.textContent.split('\\n').reduce((a, b) => a.length >= b.length ? a : b).trim()}`
                + ` (${pre.scrollWidth} px in ${pre.clientWidth} px)`),
  shown: document.querySelectorAll('.example-code pre').length,
  svg: [...document.querySelectorAll('img.example-svg')]
    .filter(img => img.getClientRects().length > 0)
    .map(img => img.getBoundingClientRect().width)
    .filter(width => width > 28 * parseFloat(getComputedStyle(document.documentElement).fontSize) + 1),
})"""


@pytest.mark.parametrize("lang", LANGUAGES)
def test_example_code_fits_the_column_at_1280_px(reader, site, lang):
    """At 1280 px no example cell (79 columns at most) scrolls sideways, in either tab, and SVG charts stay at a
    readable size (28rem at most)."""
    tab = reader(viewport={"width": 1280, "height": 900})
    problems, shown = [], 0
    for page, _ in pages_with_framework_tabs(lang):
        tab.goto(site + page)
        for framework in ("pytorch", "mxnet"):
            label = tab.locator(f'label[data-sync-id="{framework}"]')
            if not label.count():  # a page whose cells run in one framework only
                continue
            label.first.click()
            found = tab.evaluate(READING_WIDTH_JS)
            shown += found["shown"]
            problems += [f"{page} {framework}: scrolls sideways: {line}" for line in found["code"]]
            problems += [f"{page} {framework}: an SVG chart is {width:.0f} px wide" for width in found["svg"]]
    assert shown, f"the {lang} book shows no example code"
    assert not problems, "\n".join(problems)
