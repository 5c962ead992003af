"""The hardware section: its twins on the CPU, its limits and their formulas, and its roofline.

The scripts run as a reader without a GPU runs them (one repeat): the host rows come out with their
spread, PyTorch says in one line that the GPU rows need a GPU and exits 0, bad options exit 2. The
limits are computed from a faked NVML. The recorded run is read as the book shows it: every limit line
carries its formula, every fraction of a limit is at most 1 or the page says why not, and the
roofline's points are the ones the run glued. The GPU path is tested in test_gpu.py.
"""

from __future__ import annotations

import ast
import json
import os
import re
import statistics
import subprocess
import sys
import types
from itertools import takewhile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
sys.path.insert(0, str(EXAMPLES))
from common import hardware, keys  # noqa: E402
from common.compare import value_text  # noqa: E402
from common.roofline import (GELU_EAGER_BYTES, GELU_FLOPS, GELU_FUSED_BYTES, draw_roofline,  # noqa: E402
                             gelu_times, roofline_points)
from common.machine import cpu_count, cpu_model  # noqa: E402
from common.report import duration  # noqa: E402
from example_runs import TIME, book_values, check_comparison, check_cpu_notes, figures, measured  # noqa: E402
from fake_nvml import FakeNvml  # noqa: E402
from roofline_lines import dashed_roofs  # noqa: E402

TINY = ["--repeats", "1", "--size", "48"]
MEDIAN = TIME.split(r" \[")[0]  # a printed timing's median, without its spread
CASES = {
    "pytorch": ["pytorch", *TINY, "--device", "cpu", "--compare"],
    "pytorch_json": ["pytorch", *TINY, "--device", "cpu", "--json", "--compare"],
    "mxnet": ["mxnet", *TINY],
    "mxnet_json": ["mxnet", *TINY, "--json", "--compare"],
    "pytorch_bad": ["pytorch", "--repeats", "0"],
    "mxnet_bad": ["mxnet", "--device", "tpu"],
}
HOST_KEYS = ["host_threads", "t_host_copy", "host_copy_gbps", "t_read_order", "t_read_random",
             "slowdown_random_read", "cpu_mm_size", "t_cpu_mm_one", "t_cpu_mm_all", "cpu_one_gflops",
             "cpu_all_gflops", "speedup_cpu_threads", "t_cpu_op_issue", "t_cpu_op_done", "cpu_op_issue_us",
             "cpu_op_done_us"]
# A rate beside its limit (helpers.against_limit): "<what>: <rate>; limit: <formula> = <value> <unit>,
# measured / limit <fraction>", or "...; limit: none <why>".
LIMIT = re.compile(r"; limit: (?P<formula>.+?) = (?P<value>[\d.]+) (?P<unit>\S+?)"
                   r"(?:, measured / limit (?P<fraction>[\d.]+))?$")
RECORDING = EXAMPLES / "recordings" / "pytorch" / "hardware.ipynb"
PAGES = {lang: ROOT / "docs" / lang / "chapter_computational-performance" / "hardware.rst" for lang in ("en", "tr")}
# Where a measured rate beats a limit, the paragraph that quotes it says why, in these words.
ABOVE_THE_LIMIT = {"en": "above the memory's limit because", "tr": "cihaz belleğinin sınırını aştı"}


@pytest.fixture(scope="module")
def runs():
    """name -> (exit status, stdout, stderr) of every case, all started at once."""
    env = dict(os.environ, MPLBACKEND="Agg", CUDA_VISIBLE_DEVICES="")
    env.pop("EXAMPLE_ARGS", None)
    procs = {name: subprocess.Popen([sys.executable, "hardware.py", *args], cwd=EXAMPLES / framework, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for name, (framework, *args) in CASES.items()}
    done = {}
    for name, proc in procs.items():
        out, err = proc.communicate(timeout=300)
        done[name] = (proc.returncode, out, err)
    return done


@pytest.mark.parametrize("framework", ["pytorch", "mxnet"])
def test_the_host_rows_come_out_with_their_spread_and_no_limit_for_host_memory(runs, framework):
    """Without a GPU both twins measure the host: copies, reads in order and at random, products on
    one and on all threads, small operations; every time as median [min-max]."""
    status, out, err = runs[framework]
    assert status == 0, err
    reads = ("read 1000 numbers in order", "read 1000 numbers at random")  # MXNet's take() is slower than memory
    for label in ("copy 1 GiB", *(reads if framework == "pytorch" else ()),
                  r"1024x1024 products?, 1 thread", r"1024x1024 products?, \d+ threads",
                  "Python issues one op", "one op is done"):
        assert re.search(rf"^{label}: {TIME}$", out, re.M), (label, out)
    assert re.search(r"^host copy: [\d.]+ GB/s, read \+ write; limit: none known$", out, re.M), out


def test_pytorch_says_once_that_the_gpu_rows_need_a_gpu_and_exits_0(runs):
    """The run stops with one line where the GPU rows begin; only --compare's table follows it."""
    status, out, err = runs["pytorch"]
    assert status == 0 and "Traceback" not in err, err
    check_cpu_notes(out, "pytorch", "hardware", "--device cpu")
    ran, table = out.split("\n--compare: ")
    assert ran.endswith("what follows needs an NVIDIA GPU, so the program stops here."), out
    assert "on the GPU" not in out


def test_compare_prints_both_machines_the_host_rows_and_the_gpu_rows_once(runs):
    """--compare on the CPU: one table under the run, whose header names the book's machine (its GPU,
    CPU and threads) and this one ("no GPU", this CPU and threads) and what differs; the host rows set
    the book's figure, in a readable unit, beside this run's; every GPU row is named once, under "needs a
    GPU"."""
    _, out, _ = runs["pytorch"]
    table = out[out.index("--compare: "):]
    assert out.count("--compare: ") == 1
    book = json.loads(RECORDING.read_text())["metadata"]["recording"]["machine"]
    header = table.splitlines()[1:4]
    assert header[0].startswith("book:") and all(g in header[0] for g in book["gpus"]), header
    assert f"CPU {book['cpu']}, {book['cpu_threads']} threads" in header[0], header
    assert header[1].startswith("this run: no GPU; ") and f"CPU {cpu_model()}, {cpu_count()} threads" in header[1]
    assert header[2].startswith("differs:  GPU model, ") and "repeats (book: 5; this: 1)" in header[2], header
    values = book_values("pytorch", "hardware")
    for key in HOST_KEYS:
        if keys.unit(key) == "s":
            assert re.search(rf"^{key} +s +{re.escape(duration(values[key]))} +{MEDIAN} +[\d.]+$", table, re.M), \
                (key, table)
    gpu_rows = measured(values) - keys.HOST_FIGURES
    assert {"t_sync", "memory_copy_gbps", "fp32_tflops"} <= gpu_rows
    lines = table.splitlines()
    (first,) = [i for i, line in enumerate(lines) if line.startswith("  needs a GPU: ")]
    group = [lines[first], *takewhile(lambda line: line.startswith("    "), lines[first + 1:])]
    assert set(" ".join(line.strip() for line in group).removeprefix("needs a GPU: ").split(", ")) == gpu_rows, group
    assert all(len(re.findall(rf"\b{key}\b", table)) == 1 for key in gpu_rows), table


@pytest.mark.parametrize("framework", ["pytorch", "mxnet"])
def test_compare_json_sets_like_beside_like(runs, framework):
    """--compare --json: the host rows face the book's; PyTorch's GPU rows "need a GPU"
    (example_runs.check_comparison)."""
    status, out, err = runs[f"{framework}_json"]
    assert status == 0, err
    compared = check_comparison(out, framework, "hardware")
    assert {row["key"] for row in compared["rows"]} <= keys.HOST_FIGURES, compared["rows"]


def test_mxnet_says_once_why_the_gpu_rows_are_pytorchs(runs):
    status, out, err = runs["mxnet"]
    assert status == 0, err
    check_cpu_notes(out, "mxnet", "hardware", "")
    assert out.count("the GPU rows need PyTorch") == 1, out


def test_json_has_the_host_rows_and_none_for_the_gpu_rows_in_both_twins(runs):
    """The twins publish the same keys; on the CPU the host rows are numbers and the GPU rows None."""
    values = {}
    for framework in ("pytorch", "mxnet"):
        status, out, err = runs[f"{framework}_json"]
        assert status == 0, err
        values[framework] = figures(out)
        assert set(values[framework]) == set(keys.published(keys.HARDWARE))
        reads = {"t_read_order", "t_read_random", "slowdown_random_read", "t_read_order_spread",
                 "t_read_random_spread"}  # PyTorch only: MXNet's take() is slower than memory
        assert all(values[framework][k] is not None for k in HOST_KEYS
                   if framework == "pytorch" or k not in reads), framework
        assert framework == "pytorch" or all(values[framework][k] is None for k in reads), framework
        assert all(values[framework][k] is None for k in ("t_sync", "memory_peak_gbps", "fp32_frac",
                                                          "roofline_points")), framework
        assert values[framework]["cpu_op_done_us"] == float(f"{values[framework]['t_cpu_op_done'] * 1e6:.1g}")


@pytest.mark.parametrize("name, message", [("pytorch_bad", "--repeats"), ("mxnet_bad", "--device")])
def test_bad_options_exit_2_with_one_line(runs, name, message):
    status, out, err = runs[name]
    assert status == 2 and message in err and "Traceback" not in err, err


@pytest.mark.parametrize("framework", ["pytorch", "mxnet"])
def test_a_size_that_the_cpu_rows_do_not_use_is_named_in_one_line(runs, framework):
    """--size sizes only the roofline's GPU product: without a GPU the run says in one line that it did
    not use it, and still measures the host."""
    status, _, err = runs[framework]
    assert status == 0 and err.count("note: --size 48 is not used: it sizes the roofline's product") == 1, err


def test_limits_are_computed_from_the_hardware_with_their_formulas():
    """Memory: 3,201 MHz x 2 x 6,144 bits / 8 = 4,917 GB/s; Tensor Cores of 9.0: SMs x FLOP per clock x
    clock (bf16 1,070.5 TFLOP/s at 1,980 MHz); no fp8 and no guess for an unknown GPU; every peak's
    formula names the numbers it multiplies."""
    found = hardware.gpu_peaks("58a5f1b5-1111", 132, (9, 0), nvml=FakeNvml())
    assert found["memory_peak_gbps"] == pytest.approx(4917.0, abs=0.5)
    assert found["tensor_peak_tflops"] == pytest.approx(
        {"tf32": 535.2, "bf16": 1070.5, "fp16": 1070.5, "fp8": 2141.1}, abs=0.1)
    formulas = hardware.formulas(found, 132, (9, 0))
    assert formulas["memory_peak_gbps"] == "3201 MHz × 2 × 6144 bits / 8 bits"
    assert formulas["link_peak_gbps"] == "PCIe 5.0 x16: 32 GT/s × 128/130 / 8 bits × 16 lanes"
    assert formulas["fp32_peak_tflops"] == "132 SMs × 128 lanes × 2 × 1980 MHz"
    assert formulas["fp8_peak_tflops"] == "132 SMs × 8192 FLOP/clock × 1980 MHz"
    assert set(formulas) == {"link_peak_gbps", "memory_peak_gbps", "fp32_peak_tflops",
                             "tf32_peak_tflops", "bf16_peak_tflops", "fp16_peak_tflops", "fp8_peak_tflops"}
    a100 = hardware.gpu_peaks("GPU-AAAAAAAA-0000", 108, (8, 0), nvml=FakeNvml())
    assert a100["tensor_peak_tflops"]["fp16"] == pytest.approx(108 * 2048 * 1.0e9 / 1e12)
    assert "fp8" not in a100["tensor_peak_tflops"] and not hardware.has_fp8((8, 0)) and hardware.has_fp8((8, 9))
    assert hardware.tensor_tflops(80, (7, 5), 1500) == {}


def test_roofline_points_and_the_figure_draw_exactly_them():
    """A 4000 x 4000 product has intensity 4000 / 6; the GELUs 9 / 88 and 9 / 8 FLOP per byte; the
    figure draws one marker per point, where the points say, in both languages."""
    gelu = {"size": 4000, "eager": 357e-6, "compiled": 34e-6, "source": "test"}
    points = roofline_points(4000, 2.6e-3, gelu)
    assert [p[0] for p in points] == ["point_product", "point_gelu_eager", "point_gelu_compiled"]
    assert points[0][1] == pytest.approx(4000 / 6) and points[0][2] == pytest.approx(2 * 4000 ** 3 / 2.6e-3 / 1e12)
    assert points[1][1:] == pytest.approx([GELU_FLOPS / GELU_EAGER_BYTES, 9 * 16e6 / 357e-6 / 1e12])
    assert points[2][1] == pytest.approx(GELU_FLOPS / GELU_FUSED_BYTES)
    for lang in ("en", "tr"):
        fig = draw_roofline({"ceiling_memory": 4250.0, "ceiling_l2": 9000.0, "ceiling_link": 55.0},
                            {"fp32": 50.0, "tf32": 400.0, "bf16": 760.0}, {"memory": 4917.0, "fp32": 66.9}, points, 4000,
                            "cuda:0 (NVIDIA H200)", lang)
        markers = [(line.get_xdata()[0], line.get_ydata()[0]) for line in fig.axes[0].lines
                   if line.get_marker() not in ("None", "", None) and len(line.get_xdata()) == 1]
        assert markers == [(p[1], p[2]) for p in points]
        labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        assert ("GELU, derlenmiş (1 çekirdek)" if lang == "tr" else "GELU, compiled (1 kernel)") in labels
        assert ("GPU'da kopya, 4250 GB/s" if lang == "tr" else "copy on the GPU, 4250 GB/s") in labels
        # sizes with a multiplication sign, and TF32 under NVIDIA's name for it
        assert ("4000×4000 çarpım, fp32" if lang == "tr" else "4000×4000 product, fp32") in labels
        assert ("TF32 çarpımları, 400 TFLOP/s" if lang == "tr" else "TF32 products, 400 TFLOP/s") in labels
        # Each compute ceiling is flat from where the memory ceiling reaches it, so it hides no slanted line.
        ceilings = {line.get_label(): line for line in fig.axes[0].lines
                    if "TFLOP/s" in line.get_label() and line.get_linestyle() == "-"}
        assert len(ceilings) == 3, list(ceilings)
        for line, tflops in zip(ceilings.values(), (50.0, 400.0, 760.0)):
            assert set(line.get_ydata()) == {tflops}, line.get_label()
            assert line.get_xdata()[0] == pytest.approx(tflops * 1e3 / 4250.0), line.get_label()


def script_cell(tag: str) -> str:
    """The source of the cell of examples/pytorch/hardware.py tagged ``tag``."""
    cells = re.split(r"^# %% tags=\[(.*)\]$", (EXAMPLES / "pytorch" / "hardware.py").read_text(encoding="utf-8"), flags=re.M)
    return next(source for tags, source in zip(cells[1::2], cells[2::2]) if f'"{tag}"' in tags.split(", "))


def test_the_roofline_draws_its_dashed_roofs_at_the_hardware_limits(monkeypatch):
    """The dashed roofs are the limits that the hardware gives (helpers.limits, from NVML), never a
    measured rate: hardware.py's roofline cell, run on the CPU for a faked H200 (a faked NVML, its
    device properties) with measured rates below the limits, draws them flat at the fp32 and bf16 peaks
    and slanted at the memory peak, as common.hardware computes them from the same NVML answers."""
    import torch
    sys.path.insert(0, str(EXAMPLES / "pytorch"))
    import helpers
    from common.options import parse_options
    from common.roofline import draw_roofline, gelu_times, roofline_points

    monkeypatch.setitem(sys.modules, "pynvml", FakeNvml())
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda gpu: types.SimpleNamespace(
        uuid="58a5f1b5-1111", multi_processor_count=132, major=9, minor=0))
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda gpu: "NVIDIA H200")
    monkeypatch.setitem(helpers._settings, "options", parse_options(argv=["--size", "32", "--repeats", "1"]))
    assert re.search(r"^limits = helpers\.limits\(gpu\)", script_cell("memory-limit"), re.M), \
        "the limits that the roofline reads are no longer helpers.limits(gpu)"
    drawn = {}
    report = types.SimpleNamespace(figure=lambda draw, name: drawn.update({name: [draw(lang) for lang in ("en", "tr")]}),
                                   publish_timing=lambda *args: None, publish_all=lambda *args: None)
    cpu = torch.device("cpu")
    exec(script_cell("roofline-harness"), {
        "helpers": helpers, "torch": torch, "gpu": cpu, "median": statistics.median, "report": report,
        "gelu_times": gelu_times, "roofline_points": roofline_points, "draw_roofline": draw_roofline,
        "limits": helpers.limits(cpu), "memory_gbps": 4000.0, "l2_gbps": 9000.0, "gbps": {"h2d_pinned": 50.0},
        "tflops": {"fp32": 50.0, "tf32": 400.0, "bf16": 760.0}})
    peaks = hardware.gpu_peaks("58a5f1b5-1111", 132, (9, 0), nvml=FakeNvml())
    for figure in drawn["roofline"]:  # the same roofs in both languages: the second drawing reads the same limits
        roofs = dashed_roofs(figure)
        assert len(roofs) == 2 and all(slope == pytest.approx(peaks["memory_peak_gbps"]) for slope, _ in roofs), roofs
        assert sorted(top for _, top in roofs) == pytest.approx(
            [peaks["fp32_peak_tflops"], peaks["tensor_peak_tflops"]["bf16"]]), roofs


def test_gelu_times_come_only_from_a_recording_of_the_same_gpu_model(tmp_path):
    recording = tmp_path / "pytorch" / "hybridize.ipynb"
    recording.parent.mkdir()
    glue = {"devices": "['cuda:0 (NVIDIA H200)']", "size": "4000", "t_eager_device": "0.000357",
            "t_compiled_device": "3.4e-05"}
    recording.write_text(json.dumps({"metadata": {"recording": {"glue": glue, "recorded_at": "2026-12-04T10:00"}}}))
    assert gelu_times("NVIDIA H200", tmp_path) == {"size": 4000, "eager": 0.000357, "compiled": 3.4e-05,
                                                   "source": "pytorch/hybridize, recorded 2026-12-04 on "
                                                             "cuda:0 (NVIDIA H200)"}
    assert gelu_times("NVIDIA A100-SXM4-80GB", tmp_path) is None
    assert gelu_times("NVIDIA H200", tmp_path / "nowhere") is None


def recorded():
    """The hardware recording's glued values and its printed lines (it must exist: the page shows it)."""
    if not RECORDING.exists():
        pytest.fail(f"{RECORDING} is missing: record it on a GPU machine with make record EXAMPLES=pytorch/hardware")
    notebook = json.loads(RECORDING.read_text(encoding="utf-8"))
    glue = {k: ast.literal_eval(v) for k, v in notebook["metadata"]["recording"]["glue"].items()}
    lines = [line for cell in notebook["cells"] for o in cell.get("outputs", []) if o.get("name") == "stdout"
             for line in "".join(o["text"]).splitlines()]
    return notebook, glue, lines


def limit_problems(lines: list[str]) -> list[str]:
    """The limit lines without a formula, or with a fraction above 1."""
    problems = []
    for line in (line for line in lines if "; limit: " in line):
        if line.split("; limit: ", 1)[1].startswith("none"):
            continue
        match = LIMIT.search(line)
        if not match or (match["unit"] in ("GB/s", "TFLOP/s") and "×" not in match["formula"]):
            problems.append(f"no formula: {line}")
            continue
        if match["fraction"] and float(match["fraction"]) > 1:
            problems.append(f"above its limit: {line}")
    return problems


def test_the_limit_check_notices_a_missing_formula_and_a_fraction_above_1():
    good = ["copy 1 GiB on the GPU: 4250 GB/s; limit: 3201 MHz × 2 × 6144 bits / 8 bits = 4917.0 GB/s, "
            "measured / limit 0.86",
            "host copy: 18.6 GB/s, read + write; limit: none known",
            "fp8: 1367 TFLOP/s; limit: none known for this GPU"]
    assert limit_problems(good) == []
    assert limit_problems(["fp32: 51 TFLOP/s; limit: 66.9 = 66.9 TFLOP/s, measured / limit 0.76"])
    assert limit_problems(["copy 1 GiB on the GPU: 5100 GB/s; limit: 3201 MHz × 2 × 6144 bits / 8 bits = 4917.0 GB/s, "
                           "measured / limit 1.04"])


def test_every_recorded_limit_has_its_formula_and_no_fraction_exceeds_1_unless_the_page_says_why():
    """In the recorded run every limit line has its formula and a fraction of at most 1; every glued
    fraction is at most 1; the one rate set beside a limit it may beat, the L2 copy beside device
    memory, is explained in the paragraph that quotes the memory's fraction, in both languages."""
    _, glue, lines = recorded()
    assert any(line.startswith("copy 1 GiB on the GPU: ") and "; limit: " in line for line in lines), lines
    assert limit_problems(lines) == []
    above = {k: v for k, v in glue.items() if k.endswith("_frac") and v is not None and v > 1}
    assert not above, above
    for lang, page in PAGES.items():
        paragraphs = [p for p in page.read_text(encoding="utf-8").split("\n\n") if "::memory_frac" in p]
        assert paragraphs and all(ABOVE_THE_LIMIT[lang] in " ".join(p.split()) for p in paragraphs), lang


def test_the_recorded_roofline_draws_the_points_the_run_glued_in_both_languages():
    """The glued roofline points are the glued product's and the GELU recording's; the figure was drawn
    once per book language."""
    notebook, glue, _ = recorded()
    product = roofline_points(glue["size"], glue["t_mm_chapter"], None)[0]
    assert glue["roofline_points"][0][0] == product[0]
    assert glue["roofline_points"][0][1:] == pytest.approx(product[1:])
    assert (len(glue["roofline_points"]) == 3) == (glue["gelu_recording"] is not None)
    cell = next(c for c in notebook["cells"] if "roofline-harness" in c["metadata"].get("tags", []))
    assert [o["metadata"]["book_language"] for o in cell["outputs"] if "image/png" in o.get("data", {})] == ["en", "tr"]


def test_each_timed_host_read_takes_fresh_numbers():
    """A read that repeats the same 16 MiB finds them in the CPU's cache (the recording host's L3 holds
    300 MiB), so an in-order read of one block against random reads of the whole GiB compared cache with
    memory: every timed read in order takes the next block of ``big``, every read at random new indices."""
    source = (EXAMPLES / "pytorch" / "hardware.py").read_text(encoding="utf-8")
    cell = source.split('# %% tags=["host-memory"]')[1].split("# %%")[0]
    assert re.search(r"^blocks = iter\(big\.view\(\d+, 2\*\*22\)\)", cell, re.M), cell
    assert re.search(r"^scattered = iter\(torch\.randint\(big\.numel\(\), \(\d+, 2\*\*22\)\)\)", cell, re.M), cell
    assert "lambda: next(blocks).take(order).sum()" in cell, cell
    assert "lambda: big.take(next(scattered)).sum()" in cell, cell


def example_lines(lang: str) -> list[tuple[str, str]]:
    """The --compare rows that the hardware page quotes in a text block: (figure, the book's value)."""
    page = PAGES[lang].read_text(encoding="utf-8")
    return re.findall(r"^   (\w+) +\S+ +(\S+) +\S+ +[\d.]+$", page.split(".. code-block:: text", 1)[1].split("\n\n\n")[0], re.M)


@pytest.mark.parametrize("lang", PAGES)
def test_the_page_quotes_the_book_value_of_its_compare_example_from_the_recording(lang):
    """The example row of --compare on the hardware page shows, in its book column, the recording's value as
    the table writes it: a new recording that changes it fails here until the row is run again."""
    _, glue, _ = recorded()
    rows = example_lines(lang)
    assert rows, f"{PAGES[lang]} quotes no row of --compare"
    for key, book in rows:
        assert book == value_text(key, glue[key]), (lang, key, book, value_text(key, glue[key]))


def test_the_compare_example_check_notices_a_stale_book_value(tmp_path, monkeypatch):
    stale = tmp_path / "hardware.rst"
    stale.write_text(".. code-block:: text\n\n   cpu_all_gflops        GFLOP/s     1050       285      0.271\n\n\nEnd\n")
    monkeypatch.setitem(PAGES, "en", stale)
    assert example_lines("en") == [("cpu_all_gflops", "1050")]
    with pytest.raises(AssertionError):
        test_the_page_quotes_the_book_value_of_its_compare_example_from_the_recording("en")


# How each page names the GELU's points on the roofline, where it describes them.
GELU_POINTS = {"en": re.compile(r"GELU points?"), "tr": re.compile(r"GELU nokta")}


def pages_describing_gelu_points(glue: dict, pages: dict) -> list[str]:
    """The languages whose page describes GELU points that the recorded roofline does not draw. A first
    recording on a new GPU model finds the hybridize recording of the old one and draws no GELU."""
    drawn = {point[0] for point in glue["roofline_points"]} >= {"point_gelu_eager", "point_gelu_compiled"}
    return [lang for lang, page in pages.items() if GELU_POINTS[lang].search(page.read_text(encoding="utf-8"))
            and not drawn]


def test_the_page_describes_gelu_points_only_where_the_recorded_roofline_draws_them():
    _, glue, _ = recorded()
    wrong = pages_describing_gelu_points(glue, PAGES)
    assert not wrong, (f"{wrong}: the page describes the GELU's points, but the recorded roofline draws none; "
                       "record it again after pytorch/hybridize with: make record EXAMPLES=pytorch/hardware")


def test_the_gelu_check_notices_points_described_but_not_drawn(tmp_path):
    page = tmp_path / "hardware.rst"
    page.write_text("The two GELU points lie far left.\n")
    product = ["point_product", 666.7, 48.8]
    assert pages_describing_gelu_points({"roofline_points": [product]}, {"en": page}) == ["en"]
    drawn = [product, ["point_gelu_eager", 0.1, 1.0], ["point_gelu_compiled", 1.1, 9.0]]
    assert pages_describing_gelu_points({"roofline_points": drawn}, {"en": page}) == []
