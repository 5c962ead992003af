"""Link every page to the same page in the other language's book.

The books are built side by side, ``<html>/en/`` and ``<html>/tr/``, from trees with the same file
names, so the same page in another language is ``../`` up to the book's root, then the language.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.locale import _

# The link's tooltip, translated as a whole: the Turkish book must say "İngilizce", not "English".
TOOLTIPS = {"en": "Read this page in English", "tr": "Read this page in Turkish"}


def other_languages(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Give the template the relative address of this page in each other language, and a tooltip."""
    up = "../" * (pagename.count("/") + 1)
    context["book_other_languages"] = [
        (code, name, f"{up}{code}/{pagename}{app.builder.out_suffix}", _(TOOLTIPS[code]))
        for code, name in app.config.book_languages.items()
        if code != app.config.language
    ]


def setup(app: Sphinx) -> dict:
    app.add_config_value("book_languages", {}, "html")
    app.connect("html-page-context", other_languages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
