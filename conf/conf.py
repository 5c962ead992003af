"""Sphinx configuration of the book, shared by its English and Turkish source trees.

The Makefile builds each language from its own tree, ``docs/<language>``, with
``BOOK_LANGUAGE=<language> sphinx-build -c conf ...``. Nothing is executed here: the pages show the
recordings that the execute-mode build (``conf/record.py``) made on a GPU machine.
"""

import hashlib
import os
import sys
from pathlib import Path

from sphinx.util.i18n import CatalogRepository

CONF_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(CONF_DIR / "ext"))  # our own extensions
# Their code and the Turkish catalogs, hashed: a setting that Sphinx compares between builds, so that an
# edited extension or catalog makes it read every page again rather than keep pages that the old one
# wrote (registered in ext/example_cells.py).
CONF_SOURCES = sorted([*(CONF_DIR / "ext").glob("*.py"), *(CONF_DIR / "locale").rglob("*.po")])
conf_sources_sha256 = hashlib.sha256(b"".join(path.read_bytes() for path in CONF_SOURCES)).hexdigest()

# Language
# --------

TITLES = {
    "en": "Automatic Parallelism: an executable book",
    "tr": "Otomatik Paralellik: çalıştırılabilir bir kitap",
}
language = os.environ.get("BOOK_LANGUAGE", "en")
if language not in TITLES:
    raise ValueError(f"BOOK_LANGUAGE must be one of {', '.join(TITLES)}, not {language!r}")
# The other language's book, which every page links to (see ext/language_switch.py).
book_languages = {"en": "English", "tr": "Türkçe"}
# Where each book lies under the site's root: _build/html/en/ and _build/html/tr/, except that `make
# serve` previews one book at the root and puts the other in its language's folder beside it.
site_root_language = os.environ.get("BOOK_AT_SITE_ROOT", "")
book_folders = {code: "" if code == site_root_language else f"{code}/" for code in book_languages}
# Turkish strings for the theme's and our extensions' text (compiled to .mo at build time).
locale_dirs = [str(CONF_DIR / "locale")]

# General configuration
# ---------------------

project = TITLES[language]
AUTHORS = {"en": "The Automatic Parallelism authors", "tr": "Otomatik Paralellik yazarları"}
author = AUTHORS[language]
copyright = "2026, " + author
extensions = [
    "sphinx_design",  # the PyTorch / MXNet tabs
    "sphinxcontrib.bibtex",  # citations from references.bib
    "sphinx_copybutton",  # a copy button on code cells
    "example_cells",  # example cells with recorded outputs, and measured values in the prose
    "execution_times",  # the table of how long each recorded example ran
    "reproducibility",  # the ratios across every kept run of the same code, and a verdict on each
    "gpu_comparison",  # the hardware page's figures on each GPU model, from the newest kept run of each
    "language_switch",  # every page links to itself in the other language
    "mathml",  # formulas as MathML, drawn by the browser offline
    "turkish_citations",  # citation styles for the Turkish book
    "accessibility",  # fixes of Sphinx's HTML that axe-core reports
    "pdf_book",  # the whole book on one page for the PDF (make pdf), and the HTML's link to the PDF
]
# Smart quotes and ellipses, but no dashes: "--size" in the stamps must stay two hyphens (Sphinx's
# default "qDe" turned it into an en dash). The prose writes its dashes as characters.
smartquotes_action = "qe"
# Figures are numbered, so :numref: works as in the original book.
numfig = True
# The example scripts and their recordings, shown by the example_cells extension.
examples_dir = CONF_DIR.parent / "examples"
# The downloads' requirements.txt (ext/downloads.py): the versions that requirements.txt pins, with
# which `make test` runs every zip on Python 3.11; and from Python 3.12 on (the GPU machine's), where
# numpy 1.23.5 has no wheel, the numpy of the recorded run (which ran on 3.12) for PyTorch, and for
# MXNet, which declares numpy < 2, the last numpy 1 (numpy_compat.py restores the names MXNet needs)
# and setuptools, which brings back the distutils that MXNet imports.
download_pins_from = str(CONF_DIR.parent / "requirements.txt")
download_pins_since = {"3.12": {"pytorch": {"numpy": "2.5.2"},
                                "mxnet": {"numpy": "1.26.4", "setuptools": "84.2.1"}}}
download_pythons = ["3.11", "3.12"]
# Resolved relative to this folder, as sphinxcontrib-bibtex does with -c.
bibtex_bibfiles = ["references.bib"]
# Turkish citations say "vd." and "ve" (see ext/turkish_citations.py).
bibtex_reference_style = "author_year_tr" if language == "tr" else "author_year"
bibtex_default_style = "alpha_tr" if language == "tr" else "alpha"

# The book's PDF, which `make pdf` prints from the pdfhtml builder's page (see ext/pdf_book.py):
# its file name says the book and the language.
pdf_file = {"en": "automatic-parallelism-en.pdf", "tr": "otomatik-paralellik-tr.pdf"}[language]
# Where `make pdf` printed it (BOOK_PDF_DIR, the Makefile's _build/pdf/): where it exists, the HTML book
# copies it beside itself and its download menu links it; where it does not (`make html` alone), the
# menu offers no PDF, rather than a link that finds nothing. A PDF that appears or goes rewrites the pages.
pdf_printed = Path(os.environ["BOOK_PDF_DIR"], pdf_file) if os.environ.get("BOOK_PDF_DIR") else None
pdf_source = str(pdf_printed) if pdf_printed and pdf_printed.is_file() else ""

# Options for HTML output
# -----------------------

html_theme = "sphinx_book_theme"
# MathML made at build time instead of MathJax, which loads from the network.
html_math_renderer = "mathml"
# Without it the theme logs "Got invalid theme mode" in the console on a first visit.
html_context = {"default_mode": "auto"}
# Without it the Turkish default title has a double space.
html_title = TITLES[language]
templates_path = [str(CONF_DIR / "_templates")]
html_static_path = [str(CONF_DIR / "_static")]
html_css_files = ["book.css"]
# search-context.js: search snippets quote the article, not its header buttons. turkish-ui.js (the
# Turkish book only): Turkish for what scripts write at run time, which the .po file cannot reach.
html_js_files = ["search-context.js"] + (["turkish-ui.js"] if language == "tr" else [])
html_theme_options = {
    "article_header_end": ["language-switch.html", "article-header-buttons.html"],
    "show_toc_level": 2,
    # The book lives offline; no repository or launch buttons.
    "use_download_button": True,
    # One search box, the sidebar's: pydata-sphinx-theme 0.20 adds a second one in a header bar
    # that sphinx-book-theme does not otherwise use.
    "navbar_persistent": [],
    # sphinx-book-theme builds "Search..." from an untranslated word; set here, it is Turkish in the
    # Turkish book also when JavaScript is off.
    "search_bar_text": {"en": "Search...", "tr": "Ara..."}[language],
}
# Copy buttons only on code, never on outputs or the stamp.
copybutton_selector = "div.highlight-python pre"
html_last_updated_fmt = None


def setup(app):
    """sphinx-book-theme's own catalog ("booktheme") calls its full-screen button "Tam ekran modu".
    Ours, registered before the theme's and so read first, says "Tam ekran kipi": the glossary's word
    for mode, as in "Renk kipi". Sphinx compiles only its own "sphinx" catalog this early, so a clean
    checkout compiles ours here; registered without its .mo, it would be silently empty."""
    for catalog in CatalogRepository(app.srcdir, locale_dirs, language, "utf-8").catalogs:
        if catalog.domain == "booktheme" and catalog.is_outdated():
            catalog.write_mo(language)
    app.add_message_catalog("booktheme", str(CONF_DIR / "locale"))
