"""Sphinx configuration of the execute-mode build: myst-nb runs the example scripts once.

``conf/record.py`` runs this build with the examples folder as its source, then turns the executed
notebooks into recordings. The language books never execute anything; they show those recordings.
"""

import functools
import json
import os
import time
from pathlib import Path

import myst_nb.core.execute.direct

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
# myst-nb runs a notebook without nbclient's per-cell timing; ask for it, so that record.py can
# tell which cells take the record step's time (it moves the timings into the stamp).
myst_nb.core.execute.direct.single_nb_execution = functools.partial(
    myst_nb.core.execute.direct.single_nb_execution, record_timing=True)


def write_execution_data(app, env):
    """Save myst-nb's execution data (run time, success) for record.py to put in the stamps."""
    from myst_nb.sphinx_ import NbMetadataCollector

    data = {doc: NbMetadataCollector.get_exec_data(env, doc) for doc in env.found_docs}
    path = Path(app.outdir) / "execution-data.json"
    path.write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")


class Progress:
    """Prints, as each example starts and ends, its name, the time elapsed and an estimate.

    record.py writes the plan (RECORD_PLAN): when the record step started, and each example's run
    time in its previous recording (null when it has none), which is the estimate.
    """

    def __init__(self, plan: dict):
        self.started = plan["started"]
        self.estimates = plan["examples"]
        self.begun: dict[str, float] = {}

    def line(self, docname: str, text: str) -> None:
        position = f"[{list(self.estimates).index(docname) + 1}/{len(self.estimates)}]"
        print(f"{position} {docname}: {text}; {time.time() - self.started:.0f} s elapsed", flush=True)

    def start(self, app, docname, source):
        if docname not in self.estimates:
            return
        self.begun[docname] = time.time()
        estimate = self.estimates[docname]
        waiting = [self.estimates[d] for d in self.estimates if d not in self.begun or d == docname]
        left = f"about {sum(waiting):.0f} s left" if None not in waiting else "no estimate of the time left"
        took = f"took {estimate:.1f} s last time" if estimate is not None else "not recorded before"
        self.line(docname, f"running ({took}; {left})")

    def end(self, app, doctree):
        docname = app.env.docname
        if docname in self.begun:
            self.line(docname, f"done in {time.time() - self.begun[docname]:.1f} s")


def setup(app):
    app.connect("env-updated", write_execution_data)
    if os.environ.get("RECORD_PLAN"):
        progress = Progress(json.loads(Path(os.environ["RECORD_PLAN"]).read_text()))
        app.connect("source-read", progress.start)
        app.connect("doctree-read", progress.end)
    return {"parallel_read_safe": False}
