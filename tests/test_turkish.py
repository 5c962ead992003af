"""The Turkish book speaks Turkish: the glossary's terms, decimal commas in the numbers it renders, Turkish
comments in the code it shows, and no program output whose number reads as thousands.

``make test`` builds the books first into _build/html.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from bs4 import BeautifulSoup

from code_comments import TranslationError, spans, translate, unused_messages
from recordings import all_examples

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "html" / "tr"
sys.path.insert(0, str(ROOT / "examples"))

from common.i18n import TEXTS  # noqa: E402  (the figures' and the sweep tables' words)

# A form the Turkish book does not use, and the glossary's term for it (docs/tr/glossary.rst says why).
REJECTED = {
    r"senkron": "eşzamansız, eşzamanlamak",
    r"buyurgan": "buyuru",
    r"kuyrukla(n|d|m|y)": "kuyruğa eklemek",
    r"eleman (bazında|bazlı|düzeyinde)|eleman ?başına işlem": "eleman yönlü",
    r"mini[- ](grup|yığın|batch)": "minigrup",
    r"tensör birim": "tensör çekirdeği",
    r"(?<!akış )çoklu işlemci": "akış çoklu işlemcisi (SM)",
    r"\bhesap akış|\bkopya akış": "hesaplama akışı, kopyalama akışı",
    r"hesaplamalı performans|hesaplama başarım": "Hesaplama Performansı",
    r"(ön|arka) ?işlemci|ön[- ]yüz|arka[- ]yüz|ön-uç|arka-uç": "ön uç, arka uç",
    r"\bengel\b|\bengeller": "bariyer",
    r"çalışan iş parçacığı": "işçi iş parçacığı",
    r"\bmod(u|unda|unu|da|a)?\b": "kip",
    r"\d ?x ?\d|\bn x n\b": "× (64×64, n × n)",
    r"\bsn\b": "s (the symbol of the second, as the programs print it)",
    r"ön uca bağlı": "ön ucun sınırladığı",
    r"ana makineye bağlı": "ana makinenin sınırladığı",
    r"sabırsız yürütme": "anında yürütme",
}
REJECTED_EXAMPLES = ["asenkron", "buyurgan programlama", "kuyruklanan", "eleman bazında işlem", "mini-grup",
                     "tensör birimi", "çoklu işlemci sayısı", "hesap akışı", "Hesaplamalı Performans",
                     "önişlemci", "çalışan iş parçacığı", "Renk modu", "64x64", "29,0 sn", "zaman (sn)",
                     "ön uca bağlıdır", "ana makineye bağlıdır", "sabırsız yürütmede"]


# The glossary names the forms it rejects with its role ``rejected`` (struck through).
NAMED_AS_REJECTED = re.compile(r":rejected:`[^`]*`")


def rejected_terms(text: str) -> list[str]:
    """Each rejected form in ``text``, with the term to use instead; the glossary's own mentions of them
    (``:rejected:`asenkron```) aside."""
    text = NAMED_AS_REJECTED.sub("", text)
    return [f"{found.group(0)!r} (write {term})" for pattern, term in REJECTED.items()
            for found in re.finditer(pattern, text, re.IGNORECASE)]


def catalog_texts(path: Path) -> str:
    """The Turkish texts of a message catalog."""
    with path.open("rb") as handle:
        return "\n".join(message.string for message in read_po(handle) if message.id)


def turkish_texts() -> dict[str, str]:
    """Every Turkish text that the book's sources hold: the pages, the catalogs of the chrome and of the
    code's comments, the page scripts' words, and the words of the figures and the sweep's tables."""
    texts = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
             for path in sorted((ROOT / "docs" / "tr").rglob("*.rst"))}
    texts |= {path.relative_to(ROOT).as_posix(): catalog_texts(path)
              for path in sorted((ROOT / "conf" / "locale" / "tr").rglob("*.po"))}
    js = ROOT / "conf" / "_static" / "turkish-ui.js"
    texts[js.relative_to(ROOT).as_posix()] = " ".join(re.findall(r'"([^"]*)"', js.read_text(encoding="utf-8")))
    texts["examples/common/i18n.py"] = "\n".join(TEXTS["tr"].values())
    return texts


def test_the_term_check_notices_every_rejected_form():
    """Each rejected form is caught in a sentence, and the glossary's terms pass."""
    for example in REJECTED_EXAMPLES:
        assert rejected_terms(f"Bu {example} burada."), f"{example!r} passed"
    fine = ("eşzamansız hesaplama, eşzamanlamak, buyuru programlama, kuyruğa eklenen, eleman yönlü işlem, "
            "minigrup, tensör çekirdeği, akış çoklu işlemcisi (SM), hesaplama akışı, kopyalama akışı, ön uç, arka "
            "uç, işçi iş parçacığı, anında yürütme kipi, Renk kipi, 64×64'lük, n × n, 29,0 s, PCIe x16, "
            "modeller, 0,5 ms, 3 µs, modül")
    assert not rejected_terms(fine), rejected_terms(fine)
    assert not rejected_terms("d2l-tr :rejected:`asenkron` der."), "the glossary may name a rejected form"


def test_turkish_pages_and_catalogs_use_the_glossarys_terms():
    """No Turkish page, catalog, page script, figure or table title holds a form that the glossary rejects."""
    problems = [f"{name}: {term}" for name, text in turkish_texts().items() for term in rejected_terms(text)]
    assert not problems, "\n".join(problems)


def page(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def turkish_pages() -> list[Path]:
    pages = [p for p in sorted(HTML.rglob("*.html")) if not p.relative_to(HTML).parts[0].startswith("_")]
    if not pages:
        pytest.fail(f"{HTML} has no pages: build the books with 'make html' (make test does it first)")
    return pages


# English words that no Turkish comment holds
ENGLISH = re.compile(r"\b(the|of|and|is|are|with|for|until|only|each|its|this|that|from|to|what|when|then|"
                     r"runs?|waits?|returns?|queues?|one|two|small|steps?)\b", re.IGNORECASE)


def english_comments(code: str) -> list[str]:
    """The comments and docstrings of ``code`` that read as English (code in backquotes left out)."""
    return [span.message for span in spans(code) if ENGLISH.search(re.sub(r"`[^`]*`|\w+\(\)", "", span.message))]


def test_the_comment_check_notices_an_english_comment():
    code = 'def f():\n    """Queue the work."""\n    return 1  # one step\n'
    assert english_comments(code) == ["Queue the work.", "one step"]
    assert not english_comments('def f():\n    """İşi kuyruğa ekler."""\n    return 1  # bir adım\n')


def test_no_shown_turkish_cell_holds_an_english_comment():
    """Every comment and docstring in the code that the Turkish book shows, in its cells and its helper
    tabs, is Turkish."""
    problems, shown = [], 0
    for path in turkish_pages():
        for pre in page(path).select("div.example-code pre, div.helper-code pre"):
            shown += 1
            problems += [f"{path.relative_to(HTML)}: {text!r}" for text in english_comments(pre.get_text())]
    assert shown, "the Turkish book shows no code"
    assert not problems, "\n".join(problems)


def test_the_comment_catalog_translates_only_comments_the_examples_hold():
    """A translation whose English no longer stands in any example or helper is left behind: remove it."""
    sources = sorted({path for example in all_examples(ROOT / "examples") for path in example.sources()})
    assert not unused_messages("tr", sources)


def test_translation_changes_only_comments_and_docstrings():
    """A translated script has the same code tokens as the original (everything it runs and prints), its
    module docstring (its --help) included; code the book shows fails on a comment without a translation."""
    def code_tokens(source: str) -> list[str]:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
        docstrings = {(span.start, span.end) for span in spans(source) if span.kind == "docstring"}
        return [t.string for t in tokens if t.type not in (tokenize.COMMENT, tokenize.NL)
                and (t.start, t.end) not in docstrings]

    for example in all_examples(ROOT / "examples"):
        for path in (example.script, example.script.parent / "helpers.py"):
            source = path.read_text(encoding="utf-8")
            translated = translate(source, "tr")
            assert code_tokens(translated) == code_tokens(source), path
    with pytest.raises(TranslationError, match="no 'an untranslated comment'"):
        translate("x = 1  # an untranslated comment\n", "tr", strict=True)


# A number with a decimal point: not one of several dots (a version such as 2.13.0), not a date.
DECIMAL_POINT = re.compile(r"(?<![\d.])\d+\.\d+(?![\d.])")
# A version in a stamp: "python 3.12", "torch 2.13.0+cu128".
VERSION = re.compile(r"\b[A-Za-z][\w-]* \d+(\.\d+)+\S*")


# Thousands grouped the Turkish way, from five digits on (17.722): dots, but no decimal point.
THOUSANDS = re.compile(r"\d{2,3}(\.\d{3})+")


def decimal_points(text: str) -> list[str]:
    return [n for n in DECIMAL_POINT.findall(VERSION.sub("", text)) if not THOUSANDS.fullmatch(n)]


def test_the_number_check_notices_a_decimal_point():
    assert decimal_points("Kayıt tarihi: 2026-12-04 · torch 2.13.0, python 3.12 · 29.0 s") == ["29.0"]
    assert not decimal_points("Kayıt tarihi: 2026-12-04 · torch 2.13.0+cu128, python 3.12 · 29,0 s")
    assert not decimal_points("17.722 çağrıdan sonra")  # grouped thousands
    assert decimal_points("1.234 s; 17.72 s") == ["1.234", "17.72"]  # four digits are never grouped


def test_numbers_the_turkish_book_renders_have_a_decimal_comma():
    """Measured values, stamps, and the tables of run times and of two runs: every number that the book
    writes itself has a decimal comma (versions keep their dots)."""
    problems, checked = [], 0
    for path in turkish_pages():
        html = page(path)
        for element in html.select("span.measured, .recording-stamp, table.execution-times td, "
                                   "table.reproducibility td, .reproducibility-runs"):
            checked += 1
            problems += [f"{path.relative_to(HTML)}: {number} in {element.get_text(' ', strip=True)[:80]!r}"
                         for number in decimal_points(element.get_text(" ", strip=True))]
    assert checked, "the Turkish book renders no number"
    assert not problems, "\n".join(problems)


# A number that a Turkish reader reads as thousands: 1 to 3 digits, a point, 3 digits (130.975).
THOUSANDS_LIKE = re.compile(r"(?<![\w.])[1-9]\d{0,2}\.\d{3}(?![\d.])")


def test_the_output_check_notices_a_number_that_reads_as_thousands():
    assert THOUSANDS_LIKE.findall("  4000    130.975    17.172   0.52") == ["130.975", "17.172"]
    assert not THOUSANDS_LIKE.findall("  4000    131    17.2   0.520   1.23.5  0.3.13")


def test_no_output_shows_a_number_that_reads_as_thousands():
    """Program outputs stay as the script prints them, in English, but none of their numbers may read
    differently to a Turkish reader: three significant digits, never 130.975 ms."""
    problems, outputs = [], 0
    for path in turkish_pages():
        for pre in page(path).select("div.example-output pre"):
            outputs += 1
            problems += [f"{path.relative_to(HTML)}: {number}" for number in THOUSANDS_LIKE.findall(pre.get_text())]
    assert outputs, "the Turkish book shows no output"
    assert not problems, "\n".join(problems)


# The prose of the built Turkish book
# -----------------------------------

# What holds words of a sentence; a block holding another one is read through it.
BLOCKS = ["p", "li", "dt", "dd", "th", "td", "h1", "h2", "h3", "h4", "h5", "h6", "caption", "figcaption"]
# What is not prose: code, outputs, stamps, literals, formulas, the references (their DOIs) and the
# glossary's rejected forms.
NOT_PROSE = ("div.example-code, div.example-output, div.helper-code, pre, .recording-stamp, code, "
             "span.pre, math, .math, div.citation, span.rejected")


def prose(path: Path, join: str = " ") -> list[str]:
    """The Turkish sentences of a built page, block by block: its prose, headings and table cells,
    without code, outputs or stamps (none on a page without an article, such as the search page). Its
    inline elements are joined with ``join``: "" keeps a recorded value next to the suffix after it."""
    body = page(path).select_one("article.bd-article")
    if body is None:
        return []
    for element in body.select(NOT_PROSE):
        element.decompose()
    return [" ".join(block.get_text(join).split()) for block in body.find_all(BLOCKS) if not block.find(BLOCKS)]


def shown_comments(path: Path) -> list[str]:
    """The comments and docstrings of the code that a built page shows."""
    return [span.message for pre in page(path).select("div.example-code pre, div.helper-code pre")
            for span in spans(pre.get_text())]


# Words that say what the scheduler does; "zamanlamak" without one of them before it, in its clause,
# is timing ("süresini ölçmek"), and "zamanlayıcı" a timer ("süreölçer").
SCHEDULED = re.compile(r"\b(iş|işi|işleri|işlem\w*|motor\w*|arka uç\w*|işletim sistem\w*)\b", re.IGNORECASE)
ZAMANLA = re.compile(r"\bzamanla[a-zçğıöşü]+", re.IGNORECASE)  # not "zamanla" (in time), nor "eşzamanlamak"
# Efficiency is "verimlilik"; "verim" is d2l-tr's throughput, which the glossary calls "işlem hacmi".
VERIM = re.compile(r"\bverim(?!li)\w*", re.IGNORECASE)
# A clock is "saat frekansı"; "hız" is a rate (GB/s, TFLOP/s). A clock called "hız": "saat hızı", "saatin
# hızı", "en yüksek hızda çalışan saat" (a clock cycle, "saat döngüsü", aside), "1830 MHz hızında",
# "hızı 1830 MHz".
CLOCK_SPEED = re.compile(r"\bsaat(?:i|in|inin|leri|lerin)?\s+hız\w*"
                         r"|\bhız\w*\s+(?:\w+\s+){0,2}saat(?:ler)?(?:i|in|ı|e)?\b(?!\s+döngü)"
                         r"|\d[\d.,]*\s*[kMG]Hz\w*\s+hız\w*|\bhız\w*\s+(?:\S+\s+){0,2}\d[\d.,]*\s*[kMG]Hz",
                         re.IGNORECASE)
# A timed case is a "senaryo"; "durum" stays a situation ("bu durumda", "en iyi durum"). A case called
# "durum": a durum whose time is measured, or that is compared or interleaved.
DURUM_CASE = re.compile(r"\bdurum(?:un|ların)\s+süre\w*|\b(?:süresi ölçülen|karşılaştırılan)\s+(?:her\s+)?durum\w*"
                        r"|\bdurum\w*\s+(?:\w+\s+)?(?:dönüşümlü|karşılaştırılırken)", re.IGNORECASE)


def other_senses(text: str) -> list[str]:
    """Each glossary term of ``text`` used in the sense that the glossary gives another word."""
    found = [f"{m.group()!r} (efficiency: verimlilik)" for m in VERIM.finditer(text)]
    found += [f"{m.group()!r} (a clock: saat frekansı; hız is a rate)" for m in CLOCK_SPEED.finditer(text)]
    found += [f"{m.group()!r} (a timed case: senaryo)" for m in DURUM_CASE.finditer(text)]
    for m in ZAMANLA.finditer(text):
        clause = re.split(r"[.;:!?]", text[:m.start()])[-1]
        if not SCHEDULED.search(clause):
            found.append(f"{m.group()!r} (timing: süresini ölçmek; a timer: süreölçer)")
    return found


def test_the_sense_check_notices_a_term_in_its_other_sense():
    for wrong in ["Paralel verim 1'e yaklaştı.", "örtüşme verimi", "Verim, programı kendisiyle karşılaştırır.",
                  "Bölümün cihazları nasıl zamanladığı", "Zamanlama Kuralları", "kitabın zamanlayıcısı",
                  "cihaz işini ölçen bir zamanlayıcı cihazı beklemelidir."]:
        assert other_senses(wrong), f"{wrong!r} passed"
    fine = ["Paralel verimlilik 1'e yaklaştı; örtüşme verimliliği.", "MXNet'in motoru bağımsız işlemleri, "
            "GPU'da olduğu gibi CPU'da da kendiliğinden zamanlar.", "motorun işleri nasıl zamanladığı",
            "MXNet'in arka uçtaki zamanlayıcısı", "İşletim sisteminin bir çekirdekte zamanladığı komut dizisi",
            "Hangi satırlar cihazla eşzamanlama yapıyor?", "Fark zamanla büyür."]
    assert not [found for text in fine for found in other_senses(text)]


def test_the_sense_check_notices_a_clock_called_a_rate():
    """A clock is "saat frekansı" in any form; "hız", in the same sentence as a clock, a cycle or a timer's
    clock, stays a rate."""
    for wrong in ["akış çoklu işlemcilerinin sayısı ve en yüksek saat hızı", "SM saat hızları aynıdır",
                  "saatin hızı güç bütçesi için düşebilir", "en yüksek hızda çalışan saat",
                  "GPU 1830 MHz hızında çalıştı", "Sürücünün bildirdiği hızı 1980 MHz'dir."]:
        assert other_senses(wrong), f"{wrong!r} passed"
    fine = ["akış çoklu işlemcilerinin sayısı ve en yüksek saat frekansı", "SM saat frekansları aynıdır",
            "NVIDIA'nın değerleri 1830 MHz ile hesaplanır.", "Kopyalar 50 GB/s hızla taşıdı.",
            "ulaşılabilir hız (TFLOP/s)", "aynı hızda her saat döngüsünde iki FLOP",
            "hızı ana makinenin saatiyle ölçülür", "makinenin hız değişimi hepsini etkiler",
            "Bellek hızı sınırla orantılıydı: bildirilen saat frekansı ve veri yolu genişliği"]
    assert not [found for text in fine for found in other_senses(text)]


def test_the_sense_check_notices_a_timed_case_called_durum():
    """A timed case is a "senaryo"; "durum" for a situation passes."""
    for wrong in ["Her durumun süresini ölçer.", "Süresi ölçülen her durum önce bir kez ölçülmeden çalışır.",
                  "Durumlar karşılaştırılırken her turda ölçülür.", "karşılaştırılan durumları dönüşümlü ölçün",
                  "Yavaş olanlar için durumların süresini ayrı çağrılarla ölçer."]:
        assert other_senses(wrong), f"{wrong!r} passed"
    fine = ["Bu durumu 50 çarpımla taklit ediyoruz.", "büyük çarpımlar: en iyi durum",
            "Bu durumda kopyalar bitmemiş sonuçları okur.", "İki durumda da sonuç aynıdır.",
            "Her senaryonun süresini ölçer.", "karşılaştırılan senaryoları dönüşümlü ölçün"]
    assert not [found for text in fine for found in other_senses(text)]


def test_built_turkish_pages_use_each_term_in_the_glossarys_sense():
    """No page of the built Turkish book, in its prose or in the comments of the code it shows, uses
    "verim" for efficiency, "zamanlamak" for timing, "hız" for a clock or "durum" for a timed case: one term
    per concept."""
    problems, read = [], 0
    for path in turkish_pages():
        for text in prose(path) + shown_comments(path):
            read += 1
            problems += [f"{path.relative_to(HTML)}: {found} in {text[:120]!r}" for found in other_senses(text)]
    assert read, "the Turkish book has no prose"
    assert not problems, "\n".join(problems)


# A fraction below 1 written as a multiple: "0,88 katı" (write %88).
FRACTION_TIMES = re.compile(r"(?<![\d,.])0,\d+\s*kat\w*", re.IGNORECASE)
# Turkish groups thousands with a dot from five digits on only: 4096 and 1978,9, but 12.345.
FOUR_DIGITS_GROUPED = re.compile(r"(?<![\d.,])\d\.\d{3}(?![\d.])")
FIVE_DIGITS_UNGROUPED = re.compile(r"(?<![\w.,])\d{5,}(?!\w)")


def number_problems(text: str) -> list[str]:
    text = VERSION.sub("", text)
    return ([f"{m.group()!r} (a fraction below 1 is a percentage: %88)" for m in FRACTION_TIMES.finditer(text)]
            + [f"{m.group()!r} (no dot in a four-digit number)" for m in FOUR_DIGITS_GROUPED.finditer(text)]
            + [f"{m.group()!r} (a dot between thousands from five digits on)"
               for m in FIVE_DIGITS_UNGROUPED.finditer(text)])


def test_the_number_check_notices_a_fraction_as_a_multiple_and_a_broken_grouping():
    for wrong in ["sınırın 0,88 katına ulaştı", "1.978,9 TFLOP/s", "4.096 sayı", "12345 sayı", "1234567"]:
        assert number_problems(wrong), f"{wrong!r} passed"
    fine = "%88'ine; 1,08 katı; 4096 sayı; 1830 MHz; 1980/1830; 1978,9; 12.345; 1.234.567; numpy 1.23.5; 0,52"
    assert not number_problems(fine), number_problems(fine)


def test_turkish_prose_writes_numbers_one_way():
    """In the prose of the built Turkish book (code and outputs aside): a fraction below 1 is a
    percentage, not "0,88 katı", and a dot groups thousands from five digits on only."""
    problems = [f"{path.relative_to(HTML)}: {found} in {text[:120]!r}" for path in turkish_pages()
                for text in prose(path) for found in number_problems(text)]
    assert not problems, "\n".join(problems)


def test_every_turkish_page_spells_out_sm_at_its_first_use():
    """A page that names the GPU's SMs says first what they are: "akış çoklu işlemcisi (SM)"."""
    problems, pages = [], 0
    for path in turkish_pages():
        text = " ".join(prose(path))
        first = re.search(r"\bSM", text)
        if first is None:
            continue
        pages += 1
        if not re.search(r"akış çoklu işlemci\w*\s*\($", text[:first.start()]):
            problems.append(f"{path.relative_to(HTML)}: {text[max(0, first.start() - 80):first.end() + 20]!r}")
    assert pages, "no Turkish page names an SM"
    assert not problems, "the first SM of a page is not spelled out:\n" + "\n".join(problems)


# A button's or link's label names its action with the bare verb (indir, aç, kopyala), as Turkish
# interfaces do; the pages' instructions address the reader in the plural (indirin). The theme's own
# catalog mixes the two, so conf/locale/tr/LC_MESSAGES/booktheme.po overrides its download buttons.
PLURAL_IMPERATIVE = re.compile(r"\b\w*(indirin|açın|kopyalayın|okuyun|geçin)$")


def plural_labels(html: BeautifulSoup) -> list[str]:
    """The title and aria-label texts of ``html`` that end with a plural imperative."""
    return [value for tag in html.find_all(True) for name in ("title", "aria-label")
            if (value := tag.get(name)) and PLURAL_IMPERATIVE.search(value.strip())]


def test_the_label_check_notices_a_plural_imperative():
    sample = BeautifulSoup('<button aria-label="Bu sayfayı indirin"></button><a title="Kaynağı indir"></a>',
                           "html.parser")
    assert plural_labels(sample) == ["Bu sayfayı indirin"]


def test_turkish_buttons_and_links_name_their_action_with_the_bare_verb():
    problems = sorted({f"{path.relative_to(HTML)}: {label}" for path in turkish_pages()
                       for label in plural_labels(page(path))})
    assert not problems, "\n".join(problems)


# Suffixes on numbers
# -------------------
# A suffix follows how a number is read aloud: "%88'ine" (seksen sekiz), "%86'sına" (seksen altı), "1024'te"
# (bin yirmi dört). A value that a new recording changes can leave a suffix of the old one.

NUMBER_SUFFIX = re.compile(r"(?<![\w.,])(\d[\d.,]*\d|\d)['’]([a-zçğıöşü]+)")
UNIT_WORDS = ["sıfır", "bir", "iki", "üç", "dört", "beş", "altı", "yedi", "sekiz", "dokuz"]
TEN_WORDS = ["", "on", "yirmi", "otuz", "kırk", "elli", "altmış", "yetmiş", "seksen", "doksan"]
VOWELS, FRONT = set("aeıioöuü"), set("eiöü")
FOUR_WAY = {"a": "ı", "ı": "ı", "o": "u", "u": "u", "e": "i", "i": "i", "ö": "ü", "ü": "ü"}
VOICELESS = set("fstkçşhp")


def spoken_last_word(number: str) -> str:
    """The last word of a number read aloud in Turkish (thousands dot, decimal comma): 88 -> sekiz,
    1024 -> dört, 0,50 -> elli, 0,05 -> beş, 4.000 -> bin."""
    whole, _, fraction = number.replace(".", "").partition(",")
    n = int(fraction) if fraction and int(fraction) else int(whole)
    if n == 0:
        return "sıfır"
    for word, step in ((UNIT_WORDS[n % 10], 10), (TEN_WORDS[n // 10 % 10], 100), ("yüz", 1000)):
        if n % step:
            return word
    return "bin" if n % 10**6 else "milyon"


def suffix_problem(number: str, suffix: str) -> str | None:
    """Why ``suffix`` does not follow ``number`` read aloud (vowel harmony, the buffer letter, d or t);
    None when it does."""
    word = spoken_last_word(number)
    last = [c for c in word if c in VOWELS][-1]
    first = next((c for c in suffix if c in VOWELS), None)
    if first in ("e", "a"):  # two-way harmony
        wanted = "e" if last in FRONT else "a"
    elif first in ("ı", "i", "u", "ü"):  # four-way harmony
        wanted = FOUR_WAY[last]
    else:  # no vowel, or o/ö, which no suffix on a number begins with a harmony of
        wanted = first
    if first != wanted:
        return f"{number}'{suffix}: {word} takes {wanted!r}, not {first!r}"
    if word[-1] in VOWELS and suffix[0] in VOWELS:
        return f"{number}'{suffix}: {word} ends in a vowel, so the suffix needs a buffer letter"
    if word[-1] not in VOWELS and (suffix[:1] == "y" or re.match(r"s[ıiuü](?!z)", suffix)):
        return f"{number}'{suffix}: {word} ends in a consonant, so the suffix takes no buffer letter"
    if suffix[0] in "dt" and suffix[0] != ("t" if word[-1] in VOICELESS else "d"):
        return f"{number}'{suffix}: after {word}, the suffix begins with {'t' if word[-1] in VOICELESS else 'd'}"
    return None


def test_the_suffix_check_follows_the_number_read_aloud():
    good = ["88'ine", "86'sına", "85'ine", "1024'te", "0'dır", "1'deki", "4000'lik", "0,98'e", "0,50'ye",
            "100'ü", "60'a", "2'si", "9'un", "3'ün", "4.000'de", "1,4'tür", "30'dan"]
    bad = ["88'ına", "85'sine", "86'sine", "1024'de", "0'tır", "2'i", "6'a", "8'ye", "100'a", "0,05'a", "40'de"]
    for sample in good:
        assert suffix_problem(*sample.split("'")) is None, sample
    for sample in bad:
        assert suffix_problem(*sample.split("'")) is not None, sample


def test_every_suffix_on_a_number_follows_the_number_read_aloud():
    """In the Turkish book's prose, recorded values included, each suffix on a number agrees with how
    the number is read aloud."""
    problems = [f"{path.relative_to(HTML)}: {problem}" for path in turkish_pages() for text in prose(path, "")
                for number, suffix in NUMBER_SUFFIX.findall(text)
                if (problem := suffix_problem(number, suffix))]
    assert not problems, "\n".join(problems)
