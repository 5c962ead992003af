"""The same program on each GPU model: a table of the hardware example's headline figures per GPU.

Built from a tiny project (tests/tiny_books.py) whose kept runs come from three GPU models. The book's
hardware page does not show the table yet: its kept runs come from one GPU model until a second GPU's
run is recorded, and the table fails the build on one model, naming the command that records another.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from recordings import Example
from tiny_books import build_tiny_book

LANGUAGES = ("en", "tr")

PAGE = """\
Tiny
====

.. gpu-comparison:: pytorch/hardware

   Issuing one operation (µs) | t_gpu_op_issue:.1f µs
   Copy in device memory (GB/s) | memory_copy_gbps:,.0f | memory_peak_gbps | memory_frac
   fp8 product (TFLOP/s) | fp8_tflops:,.0f | fp8_peak_tflops | fp8_frac
"""

H100, H200, A100 = "NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA A100-SXM4-80GB"


def stamp(gpu: str, at: str, issue: float, copy: float, peak: float, fp8: float | None, source: str) -> dict:
    """A run's stamp as conf/record.py writes one, with the glued values the tiny page shows."""
    glue = {"t_gpu_op_issue": issue, "memory_copy_gbps": copy, "memory_peak_gbps": peak,
            "memory_frac": copy / peak, "fp8_tflops": fp8, "fp8_peak_tflops": None if fp8 is None else 2000.0,
            "fp8_frac": None if fp8 is None else fp8 / 2000.0}
    return {"source_sha256": source, "recorded_at": at, "runtime_s": 7.0,
            "machine": {"gpus": [gpu], "cpu": f"CPU of the {gpu.split()[1]}", "cpu_threads": 16},
            "versions": {"python": "3.12.3", "torch": "2.11.0"}, "glue": {k: repr(v) for k, v in glue.items()}}


def tiny_project(root: Path, runs, page: str = PAGE) -> Path:
    """A project of one page and one example, pytorch/hardware, recorded on an H100, with ``runs(source)``
    kept beside its recording: the kept runs' stamps for the example's source hash."""
    example = Example(root / "examples", "pytorch", "hardware")
    example.script.parent.mkdir(parents=True)
    example.script.write_text("# ---\n# jupyter:\n# ---\n# %%\nx = 1\n")
    source = example.source_hash()
    example.recording.parent.mkdir(parents=True)
    recording = stamp(H100, "2026-12-06T20:44:00+00:00", 6.31e-6, 3028.4, 3352.3, 1631.1, source)
    example.recording.write_text(json.dumps({"cells": [], "metadata": {"recording": recording},
                                             "nbformat": 4, "nbformat_minor": 5}))
    example.runs.write_text(json.dumps(runs(source)))
    (root / "docs").mkdir()
    (root / "docs" / "index.rst").write_text(page)
    return root


def three_models(source: str) -> list[dict]:
    """An older and a newer H100 run than the recording; two H200 runs; an A100 run (no fp8), the newest
    of all."""
    return [stamp(H100, "2026-12-06T20:42:00+00:00", 9.99e-6, 1000.0, 3352.3, 1000.0, source),
            stamp(H100, "2026-12-06T20:50:00+00:00", 9.99e-6, 1000.0, 3352.3, 1000.0, source),
            stamp(H200, "2026-12-19T09:00:00+00:00", 9.99e-6, 1000.0, 4800.0, 1000.0, source),
            stamp(H200, "2026-12-20T10:15:00+00:00", 6.04e-6, 4321.9, 4800.0, 1702.4, source),
            stamp(A100, "2026-12-21T08:00:00+00:00", 12.26e-6, 1712.0, 2039.0, None, source)]


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> dict[str, BeautifulSoup]:
    project = tiny_project(tmp_path_factory.mktemp("gpus"), three_models)
    books = {}
    for lang in LANGUAGES:
        built = build_tiny_book(project, lang)
        assert built.returncode == 0, built.stderr
        page = BeautifulSoup((project / "html" / lang / "index.html").read_text(encoding="utf-8"), "html.parser")
        books[lang] = page.select_one("div.gpu-comparison")
    return books


def cells(row) -> list[str]:
    return [cell.get_text(strip=True) for cell in row.select("th, td")]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_one_column_group_per_gpu_model_the_recordings_first(tables, lang):
    """Above the figure, limit and fraction of each GPU model stands its name: the recording's model
    (the H100) first, then the others by name, each spanning its three columns."""
    models, headers = tables[lang].select("thead tr")
    assert cells(models) == ["", H100, A100, H200]
    assert [th.get("colspan") for th in models.select("th")] == [None, "3", "3", "3"]
    assert cells(headers) == {"en": ["Figure"] + ["Measured", "Limit", "Of the limit"] * 3,
                              "tr": ["Nicelik"] + ["Ölçülen", "Sınır", "Sınıra oranı"] * 3}[lang]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_shown_run_then_each_other_models_newest_with_its_own_limit_and_fraction(tables, lang):
    """For the recording's GPU the run the pages show (not an older or a newer kept H100 run), for each
    other GPU its newest run (the later of two H200 runs): its
    figure, its own limit and the percentage of it reached, in the book's language (Turkish: decimal
    comma, %90, no dot in four digits); a dash where a figure has no limit or a GPU has no fp8."""
    rows = [cells(row) for row in tables[lang].select("tbody tr")]
    expected = {"en": [["Issuing one operation (µs)", "6.3", "—", "—", "12.3", "—", "—", "6.0", "—", "—"],
                       ["Copy in device memory (GB/s)", "3,028", "3,352", "90%", "1,712", "2,039", "84%",
                        "4,322", "4,800", "90%"],
                       ["fp8 product (TFLOP/s)", "1,631", "2,000", "82%", "—", "—", "—", "1,702", "2,000", "85%"]],
                "tr": [["Issuing one operation (µs)", "6,3", "—", "—", "12,3", "—", "—", "6,0", "—", "—"],
                       ["Copy in device memory (GB/s)", "3028", "3352", "%90", "1712", "2039", "%84",
                        "4322", "4800", "%90"],
                       ["fp8 product (TFLOP/s)", "1631", "2000", "%82", "—", "—", "—", "1702", "2000", "%85"]]}
    assert rows == expected[lang]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_note_names_each_run_shown(tables, lang):
    """Under the table, each run shown once, in the columns' order: when (UTC, as each book writes dates:
    ISO in English, the month's name in Turkish), and its GPU and CPU."""
    note = tables[lang].select_one("p.gpu-comparison-runs").get_text()
    assert note == {"en": "The run the pages show, then each other GPU model\N{RIGHT SINGLE QUOTATION MARK}s "
                          "newest (UTC):",
                    "tr": "Sayfalarda gösterilen çalıştırma ve öteki GPU modellerinin her birindeki en son çalıştırma (UTC):"}[lang]
    threads = {"en": "16 threads", "tr": "16 iş parçacığı"}[lang]
    when = {"en": ["2026-12-06 20:44", "2026-12-21 08:00", "2026-12-20 10:15"],
            "tr": ["6 Aralık 2026 20:44", "21 Aralık 2026 08:00", "20 Aralık 2026 10:15"]}[lang]
    assert [item.get_text(strip=True) for item in tables[lang].select("li")] == [
        f"{when[0]}, 1 × {H100}; CPU of the H100 ({threads})",
        f"{when[1]}, 1 × {A100}; CPU of the A100-SXM4-80GB ({threads})",
        f"{when[2]}, 1 × {H200}; CPU of the H200 ({threads})"]


def failed_build(tmp_path: Path, runs, page: str = PAGE) -> str:
    """Build the English tiny project with ``runs`` kept; assert that it fails and return its one error."""
    built = build_tiny_book(tiny_project(tmp_path, runs, page))
    assert built.returncode != 0, "the build passed"
    errors = [line for line in built.stderr.splitlines() if "ERROR" in line or "WARNING" in line]
    assert len(errors) == 1, built.stderr
    return errors[0]


def test_runs_on_one_gpu_model_fail_the_build_naming_the_command_that_records_another(tmp_path):
    error = failed_build(tmp_path, lambda source: three_models(source)[:1])
    assert re.search(r"ERROR: pytorch/hardware: every kept run comes from one GPU model \(NVIDIA H100 80GB HBM3\)"
                     r", but this table needs two; on the other GPU, record its run with: make record AS_RUN=1 "
                     r"\(offline: make gpu-record AS_RUN=1\)"
                     r"( \[docutils\])?$", error), error


def test_a_run_without_a_figure_fails_the_build_naming_the_run_and_the_key(tmp_path):
    def without_fp8_frac(source):
        runs = three_models(source)
        del runs[3]["glue"]["fp8_frac"]
        return runs

    error = failed_build(tmp_path, without_fp8_frac)
    assert "the run of 2026-12-20 10:15 on NVIDIA H200 glued no value 'fp8_frac'" in error, error


def test_a_line_with_a_limit_but_no_fraction_fails_the_build_naming_both_forms(tmp_path):
    page = PAGE.replace(" | memory_peak_gbps | memory_frac", " | memory_peak_gbps")
    error = failed_build(tmp_path, three_models, page)
    assert ("write each line as 'label | key:format' or 'label | key:format | limit key | fraction key', not "
            "'Copy in device memory (GB/s) | memory_copy_gbps:,.0f | memory_peak_gbps'") in error, error
