"""Every link of a built book, checked on disk: each ``href`` and ``src`` of every HTML page that stays
inside the site must name a file that exists, and its ``#fragment`` an element of that page. The
browser crawl (test_browser.py) checks what a reader's clicks reach; this reads every page as written,
the download menu's entries included, without a server."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlsplit

from bs4 import BeautifulSoup

LINKING = {"a": "href", "link": "href", "img": "src", "script": "src", "source": "src", "iframe": "src"}


def page_ids(soup: BeautifulSoup) -> set[str]:
    return {el["id"] for el in soup.find_all(id=True)} | {el["name"] for el in soup.find_all("a", attrs={"name": True})}


def broken_links(site: Path) -> list[str]:
    """``page: link: why`` for every link under ``site`` that leads nowhere."""
    pages = {path: BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser") for path in sorted(site.rglob("*.html"))
             if "_static" not in path.relative_to(site).parts}  # the theme's templates there are no pages
    ids = {path.resolve(): page_ids(soup) for path, soup in pages.items()}
    problems = []
    for path, soup in pages.items():
        for tag, attribute in LINKING.items():
            for element in soup.find_all(tag, attrs={attribute: True}):
                link = element[attribute]
                parts = urlsplit(link)
                if parts.scheme or parts.netloc or link.startswith("data:"):
                    continue  # another site (test_browser checks that none is loaded) or inline data
                target = (path.parent / unquote(parts.path)).resolve() if parts.path else path.resolve()
                if target.is_dir():
                    target = target / "index.html"
                where = f"{path.relative_to(site)}: {link}"
                if not target.is_file():
                    problems.append(f"{where}: no file {target.relative_to(site.resolve()) if target.is_relative_to(site.resolve()) else target}")
                elif parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in ids.get(target, set()):
                    problems.append(f"{where}: no element with id {unquote(parts.fragment)!r}")
    return problems
