"""Fixes, in the HTML that Sphinx writes, of what axe-core (the browser tests' accessibility check)
reports as critical or serious.

- Citations: docutils wraps the bibliography in ``<div role="list">`` and marks each entry
  ``role="doc-biblioentry"``, a role that ARIA deprecates and that is no allowed child of a list
  (axe: aria-required-children, critical). Each entry becomes a ``listitem``.

The sidebar's ``<summary>`` elements without text are fixed in ``_templates/sbt-sidebar-nav.html``.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.writers.html5 import HTML5Translator


def visit_citation(self: HTML5Translator, node: nodes.citation) -> None:
    HTML5Translator.visit_citation(self, node)
    self.body[-1] = self.body[-1].replace('role="doc-biblioentry"', 'role="listitem"')


def setup(app: Sphinx) -> dict:
    app.add_node(nodes.citation, override=True, html=(visit_citation, HTML5Translator.depart_citation))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
