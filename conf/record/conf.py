"""Sphinx configuration of the execute-mode build: myst-nb runs the example scripts once.

``conf/record.py`` runs this build with the examples folder as its source, then turns the executed
notebooks into recordings. The language books never execute anything; they show those recordings.
"""

import json
from pathlib import Path

# General configuration
# ---------------------

project = "Example runs"
extensions = ["myst_nb"]
# The examples are jupytext percent scripts; myst-nb reads them as notebooks through jupytext.
nb_custom_formats = {".py": ["jupytext.reads", {"fmt": "py:percent"}]}
# record.py passes the scripts to run with -D include_patterns=... and -D root_doc=...
include_patterns = []
exclude_patterns = ["recordings/**", "common/**"]
# The scripts are run, not published: no toctree links them.
suppress_warnings = ["toc.not_included"]

# Execution
# ---------

# Every run is a real run: no cache, whose key would ignore the hardware.
nb_execution_mode = "force"
# The experiments take seconds to minutes on a GPU; a cell that hangs still ends the build.
nb_execution_timeout = 1800
# An error becomes a warning that shows the failing cell and its traceback; -W then fails the build.
nb_execution_raise_on_error = False
nb_execution_show_tb = True


def write_execution_data(app, env):
    """Save myst-nb's execution data (run time, success) for record.py to put in the stamps."""
    from myst_nb.sphinx_ import NbMetadataCollector

    data = {doc: NbMetadataCollector.get_exec_data(env, doc) for doc in env.found_docs}
    path = Path(app.outdir) / "execution-data.json"
    path.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")


def setup(app):
    app.connect("env-updated", write_execution_data)
    return {"parallel_read_safe": False}
