"""How wide the code that a page shows may be.

A shown line has at most MAX_CELL_COLUMNS columns, so that a cell never scrolls sideways in the book's
column (``test_lesson.py`` reads the source, ``test_browser.py`` the rendered page).
"""

MAX_CELL_COLUMNS = 79
