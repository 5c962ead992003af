"""Books built from a temporary project: the book's own configuration and extensions, with hand-made
examples and recordings in place of the real ones, for what the real book cannot show today."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def build_tiny_book(project: Path, lang: str = "en", *settings: str) -> subprocess.CompletedProcess:
    """Build ``project/docs`` in ``lang``, with the book's conf and the examples of ``project/examples``
    (and ``settings``, more ``name=value`` overrides), into ``project/html/<lang>``, warnings as errors;
    the finished process, its output captured."""
    args = [sys.executable, "-m", "sphinx", "-b", "html", "-W", "-q", "--no-color", "-c", str(ROOT / "conf"),
            "-D", f"examples_dir={project / 'examples'}", *(f"-D{setting}" for setting in settings),
            "-d", str(project / "doctrees" / lang),
            str(project / "docs"), str(project / "html" / lang)]
    return subprocess.run(args, capture_output=True, text=True, timeout=300, env=dict(os.environ, BOOK_LANGUAGE=lang))


def built_index_pages(project: Path, languages=("en", "tr")) -> dict:
    """Build ``project`` in each language (each build must pass) and return each book's parsed
    ``index.html``."""
    from bs4 import BeautifulSoup

    pages = {}
    for lang in languages:
        built = build_tiny_book(project, lang)
        assert built.returncode == 0, built.stderr
        pages[lang] = BeautifulSoup((project / "html" / lang / "index.html").read_text(encoding="utf-8"),
                                    "html.parser")
    return pages
