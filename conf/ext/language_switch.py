"""Link every page to the same page in the other language's book.

The books are built side by side from trees with the same file names, each in its folder under the
site's root (``book_folders``: ``en/`` and ``tr/``, or ``""`` for the book that ``make serve`` previews
at the root), so the same page in another language is ``../`` up to the site's root, then that book's
folder and the same page name.
"""

from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.locale import _

# The link's tooltip, translated as a whole: the Turkish book must say "İngilizce", not "English".
TOOLTIPS = {"en": "Read this page in English", "tr": "Read this page in Turkish"}


def other_languages(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """Give the template the relative address of this page in each other language, and a tooltip."""
    folders = app.config.book_folders
    up = "../" * (folders[app.config.language] + pagename).count("/")
    context["book_other_languages"] = [
        (code, name, f"{up}{folders[code]}{pagename}{app.builder.out_suffix}", _(TOOLTIPS[code]))
        for code, name in app.config.book_languages.items()
        if code != app.config.language
    ]


def setup(app: Sphinx) -> dict:
    app.add_config_value("book_languages", {}, "html")
    app.add_config_value("book_folders", {}, "html")
    app.connect("html-page-context", other_languages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
