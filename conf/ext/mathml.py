"""Render math as MathML at build time, so pages show formulas offline and without JavaScript.

latex2mathml converts the LaTeX; browsers draw MathML natively. Sphinx's default, MathJax,
would load a script from the network.
"""

from __future__ import annotations

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.application import Sphinx


def visit_inline(self, node: nodes.Element) -> None:
    self.body.append(convert(node.astext(), display="inline"))
    raise nodes.SkipNode


def visit_block(self, node: nodes.Element) -> None:
    self.body.append(f'<div class="math-block">{convert(node.astext(), display="block")}</div>')
    raise nodes.SkipNode


def setup(app: Sphinx) -> dict:
    app.add_html_math_renderer("mathml", (visit_inline, None), (visit_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
