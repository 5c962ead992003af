"""Where a Turkish word may break at the end of a line, by the TDK's rules ("Hece yapısı ve satır
sonunda kelimelerin bölünmesi" in its Yazım Kılavuzu), for the Turkish PDF.

- Every syllable has one vowel. Of the consonants between two vowels, only the last begins the next
  syllable: a-ra-ba, al-dı, Türk-çe; Western loanwords follow the same rule: kont-rol, prog-ram.
- Two vowels side by side belong to two syllables: sa-at.
- No single letter stays alone at the end or the start of a line: uçurt-ma, never u-çurtma.

Chromium hyphenates only with dictionaries that it downloads at run time, which an offline build
cannot, and pyphen ships none for Turkish; so the PDF's Turkish text carries soft hyphens at these
places, and Chromium breaks a word there only where a line ends.
"""

from __future__ import annotations

import re

VOWELS = frozenset("aeıioöuüâîûAEIİOÖUÜÂÎÛ")
# The Turkish alphabet (with the circumflexed vowels): a word with any other letter is foreign.
TURKISH_LETTERS = frozenset("abcçdefgğhıijklmnoöprsştuüvyzâîû" "ABCÇDEFGĞHIİJKLMNOÖPRSŞTUÜVYZÂÎÛ")
LETTERS = r"[^\W\d_]+"
PARTS = re.compile(LETTERS)
CHUNK = re.compile(r"\S+")
# A word between spaces: letters, perhaps a suffix after an apostrophe (GPU’nun), and punctuation
# before or after it.
PLAIN = re.compile(rf"[(\[“‘\"']*{LETTERS}(?:[’']{LETTERS})?[)\]”’\"'.,;:!?…]*")
SOFT_HYPHEN = "\N{SOFT HYPHEN}"


def syllable_starts(word: str) -> list[int]:
    """The index where each syllable of ``word`` but the first begins."""
    vowels = [i for i, letter in enumerate(word) if letter in VOWELS]
    # The consonant just before a vowel begins its syllable; a vowel right after a vowel begins its own.
    return [vowel - 1 if vowel - previous > 1 else vowel for previous, vowel in zip(vowels, vowels[1:])]


def breaks(word: str) -> list[int]:
    """Where ``word`` may break at a line's end: between syllables, never leaving one letter alone.
    None in a word that is not Turkish, nor in an abbreviation or a name like GPU or PyTorch."""
    if not set(word) <= TURKISH_LETTERS or sum(letter.isupper() for letter in word) > 1:
        return []
    return [start for start in syllable_starts(word) if 2 <= start <= len(word) - 2]


def hyphenate(text: str) -> str:
    """``text`` with a soft hyphen at every place where one of its Turkish words may break. Only words
    standing between spaces, perhaps with punctuation around them, are words: ``auto_parallelism.py``
    or ``x.to`` are names, which break nowhere."""
    def soft_hyphens(word: str) -> str:
        cuts = [0, *breaks(word), len(word)]
        return SOFT_HYPHEN.join(word[start:end] for start, end in zip(cuts, cuts[1:]))

    def chunk(match: re.Match) -> str:
        plain = PLAIN.fullmatch(match.group())
        return PARTS.sub(lambda part: soft_hyphens(part.group()), match.group()) if plain else match.group()

    return CHUNK.sub(chunk, text)
