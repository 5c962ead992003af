"""Helpers of the browser tests: serve the built books on 127.0.0.1, drive Debian's chromium, crawl.

The tests read ``_build/html`` (``make test`` builds it first); ``BOOK_HTML=<dir>`` points them at
another build, e.g. one made by hand while the real one cannot build yet.
"""

from __future__ import annotations

import functools
import http.server
import os
import socket
import threading
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlsplit

ROOT = Path(__file__).resolve().parents[1]
HTML = Path(os.environ.get("BOOK_HTML", ROOT / "_build" / "html")).resolve()
LANGUAGES = ("en", "tr")
CHROMIUM = Path("/usr/bin/chromium")
# As verified in shared/RESEARCH.md: headless chromium in a container, with nothing phoning home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


class QuietServer(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass  # a browser that hangs up early (a closed tab) is no failure of the books


@contextmanager
def serve(directory: Path):
    """Serve a folder over HTTP on 127.0.0.1 (a free port) from a thread; yield its base URL."""
    handler = functools.partial(QuietHandler, directory=str(directory))
    server = QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()


def book_pages(lang: str) -> list[str]:
    """Every HTML page of one book, relative to the HTML root, e.g. ``en/glossary.html``."""
    book = HTML / lang
    return sorted(
        p.relative_to(HTML).as_posix()
        for p in book.rglob("*.html")
        if not any(part.startswith("_") for part in p.relative_to(book).parts)
    )


def fetch(url: str) -> tuple[int, bytes]:
    """GET a URL of the local server: its status and body (never raises for an HTTP error)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as err:
        return err.code, b""


def anchors(html: str) -> set[str]:
    """The ``#fragments`` that an HTML page can scroll to: its ids and named anchors."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    return {el["id"] for el in soup.find_all(id=True)} | {el["name"] for el in soup.find_all("a", attrs={"name": True})}


# What the page tells the test about itself, in one round trip.
PAGE_FACTS_JS = """async () => {
  return {
    lang: document.documentElement.lang,
    links: [...document.querySelectorAll("a[href]")].map(a => a.href),
    resources: [
      ...[...document.querySelectorAll("img[src]")].map(i => i.src),
      ...[...document.querySelectorAll("script[src]")].map(s => s.src),
      ...[...document.querySelectorAll("link[href]")].map(l => l.href),
    ],
    languageLinks: [...document.querySelectorAll("a.language-switch")].map(a => a.href),
    downloads: [...document.querySelectorAll("a.download, a[download]")].map(a => a.href),
    images: await Promise.all([...document.querySelectorAll("article img")].map(async img => {
      await img.decode().catch(() => null);
      return {src: img.getAttribute("src").slice(0, 60), alt: img.alt, width: img.naturalWidth,
              chart: img.classList.contains("example-image")};
    })),
  };
}"""


@dataclass(repr=False)
class Visit:
    """What one page did when a reader opened it with no stored settings."""

    page: str
    lang: str = ""
    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # same-origin requests that failed or were not 2xx/3xx
    external: list[str] = field(default_factory=list)  # requests to other sites (blocked)
    links: list[str] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    language_links: list[str] = field(default_factory=list)
    downloads: list[str] = field(default_factory=list)
    images: list[dict] = field(default_factory=list)  # article images: src, alt, naturalWidth, chart
    url: str = ""  # where the tab was when the page had settled
    inspected: object = None  # what the crawl's ``inspect`` found on the settled page

    def __repr__(self) -> str:  # short, for pytest's failure reports
        return f"Visit({self.page!r})"


def new_context(browser, base: str, **options):
    """A fresh browser profile that may only reach the local server; requests to other sites are
    blocked (the crawl notes them for each page)."""
    context = browser.new_context(**options)
    context.route(lambda url: not url.startswith(base) and not url.startswith("data:"), lambda route: route.abort())
    return context


def crawl_context(browser, base: str):
    """A browser profile for visiting many pages, each as a first-time reader (no stored settings)."""
    context = new_context(browser, base)
    context.add_init_script("try { localStorage.clear(); sessionStorage.clear(); } catch (e) {}")
    # A reader whose languages the site does not have: the root page stays on its language chooser
    # (an English or Turkish browser is sent on to its book, which the crawl opens anyway).
    context.add_init_script("Object.defineProperty(navigator, 'languages', {get: () => ['de']})")
    return context


def crawl(context, base: str, pages: list[str], inspect=None) -> dict[str, Visit]:
    """Open every page in a tab of its own, wait until it settles, and note what happened.

    The next page starts loading while the current one is read and inspected, which saves a third of
    the crawl's time; every tab notes only its own page's events. ``inspect``, when given, is called
    with each settled tab, and what it returns is kept as ``Visit.inspected`` (the crawl runs axe this
    way, so that every page loads once for all the checks).
    """
    visits = {}
    opening = _open(context, base, pages[0]) if pages else None
    for following_page in [*pages[1:], None]:
        following = _open(context, base, following_page) if following_page else None
        visit = _settle(*opening, inspect)
        visits[visit.page] = visit
        opening = following
    return visits


def _open(context, base: str, page: str):
    """A new tab that starts loading ``page``, with the listeners that note what the page does."""
    result = Visit(page)
    tab = context.new_page()

    def on_console(message):
        if message.type != "error":
            return
        where = (message.location or {}).get("url", "")
        # A blocked request to another site shows up here too; test_pages_work_offline names those.
        if message.text.startswith("Failed to load resource") and where and not where.startswith(base):
            return
        result.console_errors.append(f"{message.text} ({where})" if where else message.text)

    def on_request(request):  # the context blocks it; this tab notes it
        if not request.url.startswith(base) and not request.url.startswith("data:"):
            result.external.append(request.url)

    def on_response(response):
        if response.url.startswith(base) and response.status >= 400:
            result.failed.append(f"{response.status} {response.url}")

    def on_failed(request):
        if request.url.startswith(base):
            result.failed.append(f"{request.failure} {request.url}")

    listeners = {"console": on_console, "request": on_request, "response": on_response, "requestfailed": on_failed}
    for event, listener in listeners.items():
        tab.on(event, listener)
    tab.on("pageerror", lambda error: result.page_errors.append(str(error)))
    tab.goto(base + page, wait_until="commit")
    return tab, result, listeners


def _settle(tab, result: Visit, listeners: dict, inspect) -> Visit:
    """Wait until the tab's page has loaded and its network is quiet, read it, inspect it, close it."""
    try:
        tab.wait_for_load_state("load")
        tab.wait_for_load_state("networkidle")
        facts = tab.evaluate(PAGE_FACTS_JS)
        result.url = tab.url
        if inspect is not None:
            # What the inspection itself requests (axe fetches style sheets again, resolving their
            # imports against the page) is not the page's doing.
            for event, listener in listeners.items():
                tab.remove_listener(event, listener)
            result.inspected = inspect(tab)
    finally:
        tab.close()
    result.lang = facts["lang"]
    result.links = facts["links"]
    result.resources = facts["resources"]
    result.language_links = facts["languageLinks"]
    result.downloads = facts["downloads"]
    result.images = facts["images"]
    return result


class LinkChecker:
    """Checks same-origin addresses against the local server, each once; external ones are not fetched."""

    def __init__(self):
        self.status: dict[str, int] = {}
        self.anchors: dict[str, set[str]] = {}

    def problem(self, url: str) -> str | None:
        """Why a same-origin address is broken, or None when it works."""
        address, fragment = urldefrag(url)
        if address not in self.status:
            status, body = fetch(address)
            self.status[address] = status
            if status == 200 and urlsplit(address).path.endswith((".html", "/")):
                self.anchors[address] = anchors(body.decode("utf-8", "replace"))
        if self.status[address] != 200:
            return f"HTTP {self.status[address]}"
        if fragment and address in self.anchors and unquote(fragment) not in self.anchors[address]:
            return f"no element with id {unquote(fragment)!r}"
        return None
