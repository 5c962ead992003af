"""How wide the code that a page shows may be, and the lines that a recording left wider.

A shown line has at most MAX_CELL_COLUMNS columns, so that a cell never scrolls sideways in the book's
column (``test_lesson.py`` reads the source, ``test_browser.py`` the rendered page). KNOWN_WIDE holds the
lines recorded wider before that check ran on them: the efficiency cell's two prints, and MXNet's
``two_jobs`` docstring. Shortening them changes the scripts, which needs a new GPU recording; until then
they are listed here, and ``test_lesson.py::test_the_known_wide_lines_are_still_shown`` fails once one is
gone, so that the list only shrinks.
"""

MAX_CELL_COLUMNS = 79
KNOWN_WIDE = {
    'print(f"one after the other: {sum(alone) * 1e3:.0f} ms, together: {both * 1e3:.0f} ms")',
    'print(f"overlap, (sum - together) / shorter: {(sum(alone) - both) / min(alone):.2f}")',
    '    """Two jobs, queued product by product; the engine runs them side by side."""',
}
