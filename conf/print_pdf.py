"""Print the books' one-page HTML (the pdfhtml builder's index.html) to PDF with Debian's chromium.

    python conf/print_pdf.py --out _build/pdf _build/pdfhtml/en/index.html ...

Each PDF takes the name that its page gives (the "book-pdf" meta tag, conf.py's pdf_file) and goes
into --out; the HTML book built after it copies it beside itself and links it (ext/pdf_book.py). Chromium makes
the outline (the bookmarks) from the headings, tags the PDF, embeds the fonts, and turns the page's
cross-references into links. The table of contents gets its page numbers in two printings: the first
tells on which page every link target lies (the PDF's named destinations), the second shows them.

A book whose files (the page, its images, styles and fonts) and this printer are those of the last
printing is not printed again: ``--out`` keeps a hash of them beside the PDFs (``.printed.json``).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import sys
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
# Root in a container needs --no-sandbox; printing needs no GPU, and the book no network.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]
PDF_OPTIONS = {"outline": True, "tagged": True, "prefer_css_page_size": True, "print_background": True}
# Writes each table-of-contents entry's page number (by its link's target) into its data-page.
NUMBER_THE_CONTENTS = """pages => {
  for (const link of document.querySelectorAll(".pdf-contents a[href^='#']")) {
    link.dataset.page = pages[decodeURIComponent(link.hash.slice(1))] ?? "";
  }
}"""
CONTENTS_LINKS = """() => [...document.querySelectorAll(".pdf-contents a[href^='#']")].map(
  link => [decodeURIComponent(link.hash.slice(1)), link.dataset.page])"""


# Where --out keeps, for each printed page, the hash of what it was printed from and the PDF's name.
PRINTED = ".printed.json"


class PrintError(Exception):
    """The PDF could not be printed as the page asks; the message says why."""


def destination_pages(pdf: bytes) -> dict[str, int]:
    """The page number (from 1) of every named destination of a PDF: the ids its links point to."""
    from pypdf import PdfReader

    reader = PdfReader(io.BytesIO(pdf))
    return {name.removeprefix("/"): reader.get_destination_page_number(dest) + 1
            for name, dest in reader.named_destinations.items()}


def print_book(browser, page_file: Path) -> tuple[str, bytes]:
    """The PDF file name and the PDF of one book's page."""
    context = browser.new_context()
    outside: list[str] = []

    def block(route) -> None:  # the book prints from its own files only
        outside.append(route.request.url)
        route.abort()

    context.route(lambda url: not url.startswith("file:"), block)
    page = context.new_page()
    page.emulate_media(media="print")  # the layout that is measured is the printed one
    page.goto(page_file.resolve().as_uri(), wait_until="load")
    page.evaluate("document.fonts.ready.then(() => true)")
    if outside:
        raise PrintError(f"{page_file} loads {outside[0]} from outside the book; the PDF is printed offline")
    name = page.evaluate("document.querySelector(\"meta[name='book-pdf']\")?.content")
    if not name:
        raise PrintError(f"{page_file} does not name its PDF (meta book-pdf): build it with 'sphinx -b pdfhtml'")
    page.evaluate(NUMBER_THE_CONTENTS, destination_pages(page.pdf(**PDF_OPTIONS)))
    pdf = page.pdf(**PDF_OPTIONS)
    final = destination_pages(pdf)
    moved = [(target, shown) for target, shown in page.evaluate(CONTENTS_LINKS) if str(final.get(target)) != shown]
    if moved:
        raise PrintError(f"{page_file}: the contents say page {moved[0][1] or '(none)'} for {moved[0][0]}, "
                         f"which the PDF puts on page {final.get(moved[0][0])}")
    context.close()
    return name, pdf


def source_digest(page_file: Path) -> str:
    """A hash of this printer and of every file of the page's folder: the same hash prints the same PDF."""
    digest = hashlib.sha256(Path(__file__).read_bytes())
    folder = page_file.parent
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="+", type=Path, help="the pdfhtml builder's index.html of each book")
    parser.add_argument("--out", type=Path, required=True, help="the folder for the PDFs")
    args = parser.parse_args(argv)
    if not CHROMIUM.is_file():
        print(f"Printing the PDF needs Debian's chromium at {CHROMIUM}: install it with 'apt-get install chromium'",
              file=sys.stderr)
        return 1
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    stamp_file = args.out / PRINTED
    printed = json.loads(stamp_file.read_text(encoding="utf-8")) if stamp_file.is_file() else {}
    digests = {page_file: source_digest(page_file) for page_file in args.pages}
    pending = []
    for page_file in args.pages:
        last = printed.get(str(page_file.resolve()), {})
        if last.get("sha256") == digests[page_file] and (args.out / last.get("pdf", "")).is_file():
            print(f"{args.out / last['pdf']}: up to date")
        else:
            pending.append(page_file)
    if not pending:
        return 0
    with sync_playwright() as playwright:
        try:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        except PlaywrightError as err:
            print(f"{CHROMIUM} did not start ({str(err).splitlines()[0]}); reinstall it with "
                  "'apt-get install --reinstall chromium'", file=sys.stderr)
            return 1
        try:
            for page_file in pending:
                name, pdf = print_book(browser, page_file)
                target = args.out / name
                target.write_bytes(pdf)
                printed[str(page_file.resolve())] = {"sha256": digests[page_file], "pdf": name}
                stamp_file.write_text(json.dumps(printed, indent=1) + "\n", encoding="utf-8")
                print(f"{target}: {len(pdf) // 1024} KiB")
        except PrintError as err:
            print(err, file=sys.stderr)
            return 1
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
