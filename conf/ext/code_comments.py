"""The comments and docstrings of the example code, in the book's language.

Each example exists once per framework, in English (``examples/``). The Turkish book shows its cells,
and serves its downloads, with the comments and docstrings translated at build time through the
catalog ``conf/locale/<language>/code-comments.po``, keyed by the English text. Only comments and
docstrings change: every code token, and so everything the program prints, stays as the script has
it. A module's docstring is what a script prints for ``--help``, so it is program output and stays.

A message is one comment, or one block of comments on consecutive lines of their own at the same
column (its lines joined by spaces), or one docstring (its lines joined by spaces). A translation keeps
its own line breaks (``\\n`` in the catalog); a comment after code must fit on its line.

The book shows code only through :func:`translate` with ``strict=True``, which names every message
without a translation: the build fails on it rather than show English in the Turkish book. The tests
hold the catalog to the examples: a translation that no comment holds any more (its English changed)
fails them.
"""

from __future__ import annotations

import ast
import functools
import io
import json
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

from babel.messages.pofile import read_po

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
SOURCE_LANGUAGE = "en"


class TranslationError(Exception):
    """A catalog cannot translate the code as the book must show it."""


def catalog_path(language: str) -> Path:
    return LOCALE_DIR / language / "code-comments.po"


@functools.cache
def _read_catalog(path: Path, mtime_ns: int) -> dict[str, str]:
    with path.open("rb") as handle:
        catalog = read_po(handle)
    return {message.id: message.string for message in catalog
            if message.id and message.string and not message.fuzzy}


def messages(language: str) -> dict[str, str] | None:
    """The translations of the code's comments into ``language`` (English text to translation);
    None for the language the code is written in."""
    if language == SOURCE_LANGUAGE:
        return None
    path = catalog_path(language)
    if not path.is_file():
        raise TranslationError(f"no catalog {path} for the code's comments in {language!r}")
    return _read_catalog(path, path.stat().st_mtime_ns)


@dataclass(frozen=True)
class Span:
    """A comment or docstring of some code: where its text lies, and its message."""

    start: tuple[int, int]  # (line, column) of its first character, as tokenize counts them
    end: tuple[int, int]  # (line, column) just after its last character
    message: str  # its text, whitespace collapsed, without the # or the quotes
    column: int  # where its lines start
    kind: str  # "comment", "trailing comment" or "docstring"
    quote: str = ""  # a docstring's quotes, with any prefix before them


def _joined(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def spans(source: str) -> list[Span]:
    """Every comment (blocks joined) and every docstring of a function or class in ``source``,
    in order; jupytext's cell markers and the module's docstring are not among them."""
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    code_lines = {t.start[0] for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE,
                                                                 tokenize.INDENT, tokenize.DEDENT,
                                                                 tokenize.ENDMARKER)}
    found: list[Span] = []
    block: list[tokenize.TokenInfo] = []

    def close_block() -> None:
        if block:
            found.append(Span(block[0].start, block[-1].end, _joined([t.string[1:] for t in block]),
                              block[0].start[1], "comment"))
            block.clear()

    for token in tokens:
        if token.type != tokenize.COMMENT:
            continue
        if token.string.startswith("# %%") or re.fullmatch(r"#\s*", token.string):
            close_block()
            continue
        if token.start[0] in code_lines:
            close_block()
            found.append(Span(token.start, token.end, _joined([token.string[1:]]), token.start[1],
                              "trailing comment"))
        elif block and token.start == (block[-1].start[0] + 1, block[0].start[1]):
            block.append(token)
        else:
            close_block()
            block.append(token)
    close_block()
    strings = {t.start[0]: t for t in tokens if t.type == tokenize.STRING}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and ast.get_docstring(node) is not None:
            token = strings[node.body[0].lineno]
            quote = re.match(r"[rRuU]?('''|\"\"\"|'|\")", token.string).group(0)
            text = token.string[len(quote):len(token.string) - len(quote.lstrip("rRuU"))]
            found.append(Span(token.start, token.end, _joined(text.splitlines()), token.start[1], "docstring", quote))
    return sorted(found, key=lambda span: span.start)


def _rendered(span: Span, translation: str) -> str:
    """The text that takes a span's place: the translation as a comment or a docstring of that span."""
    lines = translation.split("\n")
    if span.kind == "trailing comment" and len(lines) > 1:
        raise TranslationError(f"the comment after code {span.message!r} must stay on one line")
    indent = "\n" + " " * span.column
    if span.kind == "docstring":
        closing = span.quote.lstrip("rRuU")
        if closing in translation or "\\" in translation:
            raise TranslationError(f"the translation of the docstring {span.message!r} holds {closing} or \\")
        return span.quote + indent.join(lines) + (indent if len(lines) > 1 else "") + closing
    return indent.join("# " + line for line in lines)


def translate(source: str, language: str, strict: bool = False) -> str:
    """``source`` with its comments and docstrings in ``language``. ``strict``: every one must have a
    translation (code the book shows); otherwise those without one stay as they are (the rest of a
    downloaded file)."""
    catalog = messages(language)
    if catalog is None:
        return source
    found = spans(source)
    missing = [span.message for span in found if span.message not in catalog]
    if strict and missing:
        raise TranslationError(f"{catalog_path(language)} translates no {', '.join(map(repr, missing))}")
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))
    text = source
    for span in reversed([s for s in found if s.message in catalog]):
        start = offsets[span.start[0] - 1] + span.start[1]
        end = offsets[span.end[0] - 1] + span.end[1]
        text = text[:start] + _rendered(span, catalog[span.message]) + text[end:]
    return text


def translate_notebook(notebook: dict, language: str) -> dict:
    """A copy of a notebook whose code cells' comments and docstrings are in ``language`` where the
    catalog translates them (the downloaded recording)."""
    copy = json.loads(json.dumps(notebook))
    for cell in copy["cells"]:
        if cell["cell_type"] == "code":
            source = "".join(cell["source"])
            cell["source"] = translate(source, language).splitlines(keepends=True)
    return copy


def unused_messages(language: str, sources: list[Path]) -> list[str]:
    """The catalog's messages that no comment or docstring of these files holds (left behind when the
    English text changed)."""
    catalog = messages(language) or {}
    used = {span.message for path in sources for span in spans(path.read_text(encoding="utf-8"))}
    return sorted(set(catalog) - used)
