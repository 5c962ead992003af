"""The book as one PDF (``make pdf``): the whole book on one HTML page, which ``conf/print_pdf.py``
prints with Chromium, and a link to that PDF in the download menu of every HTML page.

The ``pdfhtml`` builder, a single-page HTML builder, writes ``index.html``:

- a title page: the book's title and authors, the recorded runs that every output,
  figure and measured value comes from (machine, date, library versions), and the opening text;
- a table of contents of the chapters and their pages, whose page numbers the printer fills in;
- every page of the toctree, in its order. A page's own pages follow its text inside its first
  section, so chapters, glossary and execution times are <h1>, a chapter's pages <h2>, and so on:
  Chromium's PDF outline (its bookmarks) follows these headings;
- every id is prefixed with its page's name (every lesson page has a "Summary"), and the
  cross-references and citations point to the prefixed ids, so that they are links inside the PDF;
- no hyphenation: the PDF's text, extracted, searched or copied, holds every word whole in both
  books (Chromium hyphenates only with dictionaries that it downloads at run time, and a line broken
  at a soft hyphen leaves the soft hyphen and a drawn hyphen inside the word in the PDF's text);
- all of it in ``_templates/pdf-book.html``: the theme's styles and ``_static/pdf.css`` (pages, both
  frameworks' tabs one after the other), without the website's header, sidebars, search or scripts.

The PDF's file name, ``pdf_file`` in conf.py, is written into the page for the printer. An HTML book
built where the printed PDF exists (``pdf_source``) copies it beside itself and links it from the header's
download menu instead of the theme's print-this-page entry; one built without it offers no PDF.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.builders.singlehtml import SingleFileHTMLBuilder
from sphinx.errors import ExtensionError
from sphinx.locale import _, __

from example_cells import machine_text, recording_for, versions_text
from recordings import all_examples, recorded_when

# The depth of the headings that the table of contents lists: chapters and their pages.
CONTENTS_DEPTH = 2


def anchor(docname: str, node_id: str) -> str:
    """The id, unique in the whole book, of the element ``node_id`` of page ``docname``."""
    return f"{docname}/{node_id}"


def included_pages(tree: nodes.Node) -> list[str]:
    """The pages that the toctrees of ``tree`` include, in order; the toctrees leave the tree."""
    pages = []
    for toctree in list(tree.findall(addnodes.toctree)):
        pages += toctree["includefiles"]
        wrapper = toctree.parent if "toctree-wrapper" in toctree.parent["classes"] else toctree
        wrapper.parent.remove(wrapper)
    return pages


def prefix_ids(node: nodes.Element, docname: str) -> None:
    """Prefix every id under ``node`` with its page's name, in the elements and in the links within
    a page (refid)."""
    for child in node.children:
        if isinstance(child, addnodes.start_of_file):
            prefix_ids(child, child["docname"])
        elif isinstance(child, nodes.Element):
            for attribute in ("ids", "backrefs"):
                if child.get(attribute):
                    child[attribute] = [anchor(docname, i) for i in child[attribute]]
            if "refid" in child:
                child["refid"] = anchor(docname, child["refid"])
            prefix_ids(child, docname)


def make_ids_unique(tree: nodes.document) -> None:
    """Ids unique in the book, and the links between pages pointing at them. Sphinx writes a link to
    an element of another page as "#document-<page>#<id>", and one to a page as "#document-<page>",
    which would land before the page break above it: it points at the page's first section instead."""
    prefix_ids(tree, tree["docname"])
    first_sections = {part["docname"]: next(part.findall(nodes.section))["ids"][0]
                      for part in tree.findall(addnodes.start_of_file)}
    for reference in tree.findall(nodes.reference):
        if reference.get("refuri", "").startswith("#document-"):
            page, _hash, target = reference["refuri"].removeprefix("#document-").partition("#")
            reference["refuri"] = "#" + (anchor(page, target) if target else first_sections[page])


class PdfHtmlBuilder(SingleFileHTMLBuilder):
    """The whole book on one HTML page, for Chromium to print as the book's PDF."""

    name = "pdfhtml"
    epilog = __("The page that make pdf prints is %(outdir)s/index.html.")

    def assemble_doctree(self) -> nodes.document:
        root = self.config.root_doc
        tree = self.env.get_doctree(root)
        opening = next(tree.findall(nodes.section))
        pages = included_pages(opening)
        tree.children = []
        tree += self.title_page(opening)
        for docname in pages:
            tree += self.page(docname)
        self.env.resolve_references(tree, root, self)
        tree["docname"] = root
        make_ids_unique(tree)
        tree.insert(1, self.table_of_contents(tree))
        return tree

    def page(self, docname: str) -> addnodes.start_of_file:
        """A page, and the pages its toctrees include after its text, inside its first section."""
        tree = self.env.get_doctree(docname)
        pages = included_pages(tree)
        part = addnodes.start_of_file(docname=docname)
        part.extend(tree.children)
        section = next(part.findall(nodes.section))
        for child in pages:
            section += self.page(child)
        return part

    def title_page(self, opening: nodes.section) -> nodes.container:
        """The book's title and authors, the recorded runs, and the root page's text (after the runs, so
        that the page names them however long that text grows)."""
        page = nodes.container(classes=["pdf-title-page"])
        page += nodes.paragraph(text=self.config.project, classes=["pdf-book-title"])
        page += nodes.paragraph(text=self.config.author, classes=["pdf-book-author"])
        runs = self.recorded_runs()
        page += nodes.paragraph(text=_("Every output, figure and measured value in this book comes from this "
                                       "recorded run of its examples:") if len(runs) == 1 else
                                _("Every output, figure and measured value in this book comes from these "
                                  "recorded runs of its examples:"), classes=["pdf-runs-intro"])
        page += nodes.bullet_list("", *(nodes.list_item("", nodes.paragraph(text=run)) for run in runs),
                                  classes=["pdf-runs"])
        page.extend(child for child in opening.children if not isinstance(child, nodes.title))
        return page

    def recorded_runs(self) -> list[str]:
        """One line for each record step that made some of the recordings: its date, machine and
        library versions, and how many examples it ran."""
        runs: dict[str, dict] = {}
        for example in all_examples(Path(self.config.examples_dir)):
            stamp = recording_for(self.env, example.framework, example.name).stamp
            run = runs.setdefault(stamp["recorded_at"], {"stamp": stamp, "versions": {}, "examples": 0})
            run["versions"].update(stamp["versions"])
            run["examples"] += 1
        return [" · ".join([_("Recorded %s") % recorded_when(run["stamp"], self.config.language),
                            _("machine: %s") % machine_text(run["stamp"]["machine"]),
                            versions_text(run["versions"]),
                            _("examples: %d") % run["examples"]])
                for recorded_at, run in sorted(runs.items())]

    def table_of_contents(self, tree: nodes.document) -> nodes.container:
        """Links to the chapters and their pages; the printer writes each one's page number into
        its ``data-page``."""
        def entries(node: nodes.Element, depth: int) -> nodes.bullet_list:
            items = nodes.bullet_list()
            for section in subsections(node):
                link = nodes.reference("", section[0].astext(), internal=True, refid=section["ids"][0])
                item = nodes.list_item("", nodes.paragraph("", "", link))
                if depth < CONTENTS_DEPTH and subsections(section):
                    item += entries(section, depth + 1)
                items += item
            return items

        contents = nodes.container(classes=["pdf-contents"])
        contents += nodes.paragraph(text=_("Contents"), classes=["pdf-contents-title"])
        contents += entries(tree, 1)
        return contents

    def assemble_toc_fignumbers(self) -> dict[str, dict[str, dict[str, tuple[int, ...]]]]:
        # Figure numbers by the prefixed ids, which are unique in the book (see make_ids_unique).
        numbers: dict[str, dict[str, tuple[int, ...]]] = {}
        for docname, by_type in self.env.toc_fignumbers.items():
            for figtype, by_id in by_type.items():
                numbers.setdefault(figtype, {}).update({anchor(docname, i): n for i, n in by_id.items()})
        return {self.config.root_doc: numbers}

    def handle_page(self, pagename: str, addctx: dict, templatename: str = "page.html", **kwargs) -> None:
        super().handle_page(pagename, {**addctx, "pdf_file": self.config.pdf_file}, "pdf-book.html", **kwargs)


def subsections(node: nodes.Element) -> list[nodes.section]:
    """The sections right under ``node``: inside it, with no other section between."""
    def parent_section(section: nodes.section) -> nodes.Element | None:
        parent = section.parent
        while parent is not None and not isinstance(parent, nodes.section):
            parent = parent.parent
        return parent

    outer = node if isinstance(node, nodes.section) else None
    return [s for s in node.findall(nodes.section, include_self=False) if parent_section(s) is outer]


def use_pdf_styles(app: Sphinx) -> None:
    if app.builder.name == PdfHtmlBuilder.name:
        app.add_css_file("pdf.css", priority=900)  # after book.css (html_css_files, 800)


def link_the_pdf(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """The download menu's ".pdf" entry downloads the book's PDF, instead of printing this page; without
    a printed PDF the menu has no ".pdf" entry."""
    menu = next((b for b in context.get("header_buttons", []) if b.get("label") == "download-buttons"), None)
    if menu is None:
        return  # a page without a source file, e.g. the search page, has no download menu
    buttons = [i for i, b in enumerate(menu["buttons"]) if b.get("label") == "download-pdf-button"]
    if not buttons:
        raise ExtensionError("pdf_book: the theme's download menu has no print-to-PDF entry to replace; "
                             "update link_the_pdf for this version of sphinx-book-theme")
    if not app.config.pdf_source:
        del menu["buttons"][buttons[0]]
        return
    menu["tooltip"] = _("Download this page's source or the book")
    menu["buttons"][buttons[0]] = {
        "type": "link",
        "url": context["pathto"](app.config.pdf_file, 1),
        "text": _("The book (.pdf)"),
        "tooltip": _("Download the whole book as one PDF"),
        "icon": "fas fa-file-pdf",
        "label": "download-pdf-button",
    }


def copy_the_pdf(app: Sphinx, exception: Exception | None) -> None:
    """The printed PDF beside the HTML book, where its download menu links it."""
    if exception is None and app.builder.name == "html" and app.config.pdf_source:
        target = Path(app.outdir) / app.config.pdf_file
        source = Path(app.config.pdf_source)
        if not target.is_file() or target.read_bytes() != source.read_bytes():
            shutil.copyfile(source, target)


def setup(app: Sphinx) -> dict:
    app.add_config_value("pdf_file", "book.pdf", "html")
    # the PDF that `make pdf` printed, or "" where there is none
    app.add_config_value("pdf_source", "", "html")
    app.add_builder(PdfHtmlBuilder)
    app.connect("builder-inited", use_pdf_styles)
    # After sphinx-book-theme's add_header_buttons (priority 501), which makes the menu.
    app.connect("html-page-context", link_the_pdf, priority=600)
    app.connect("build-finished", copy_the_pdf)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
