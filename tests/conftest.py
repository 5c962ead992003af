"""Shared test set-up: the tests import the project's helpers from tests/ and conf/ext/."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "conf" / "ext")]
