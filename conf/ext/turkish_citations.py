"""Citation styles of the Turkish book, as Turkish writes references.

- ``author_year_tr`` (in the text): "Chen vd. (2015)", "Paszke ve Gross", for "et al." and "and".
- ``alpha_tr`` (the bibliography): "ve" between the last two authors, no English "In" before a
  proceedings title, and "arXiv ön baskısı" for the "arXiv preprint" that bib entries keep in their
  journal field (the .bib file stays the one both books share).

conf.py picks them for the Turkish book.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pybtex.plugin
from pybtex.database import Entry
from pybtex.richtext import Text
from pybtex.style.formatting.alpha import Style as AlphaStyle
from pybtex.style.template import names, sentence
from sphinx.application import Sphinx
from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import PersonStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

AND = " ve "
ET_AL = " vd."
ARXIV = ("arXiv preprint", "arXiv ön baskısı")


def turkish_persons() -> PersonStyle:
    return PersonStyle(sep2=AND, last_sep=AND, other=Text(ET_AL))


@dataclass
class TurkishAuthorYearStyle(AuthorYearReferenceStyle):
    """sphinxcontrib-bibtex's author-year citations with Turkish "ve" and "vd."."""

    person: PersonStyle = field(default_factory=turkish_persons)


class TurkishAlphaStyle(AlphaStyle):
    """pybtex's alpha bibliography style (sphinxcontrib-bibtex's default), in Turkish."""

    def format_names(self, role, as_sentence=True):
        formatted = names(role, sep=", ", sep2=AND, last_sep=AND)
        return sentence[formatted] if as_sentence else formatted

    def get_inproceedings_template(self, e):
        template = super().get_inproceedings_template(e)
        for part in template.children:  # words["In", booktitle ...]: drop the English "In"
            if getattr(part, "children", None) and part.children[0] == "In":
                part.children = part.children[1:]
        return template

    def format_entry(self, label, entry, bib_data=None):
        journal = entry.fields.get("journal", "")
        if journal.startswith(ARXIV[0]):
            fields = dict(entry.fields, journal=journal.replace(*ARXIV, 1))
            key, entry = entry.key, Entry(entry.type, fields=fields, persons=entry.persons)
            entry.key = key
        return super().format_entry(label, entry, bib_data=bib_data)


def setup(app: Sphinx) -> dict:
    register_plugin("sphinxcontrib.bibtex.style.referencing", "author_year_tr", TurkishAuthorYearStyle)
    pybtex.plugin.register_plugin("pybtex.style.formatting", "alpha_tr", TurkishAlphaStyle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
