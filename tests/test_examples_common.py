"""Unit tests of examples/common: the statistics, options, reporting and drawing every example relies on."""

from __future__ import annotations

import argparse
import ast
import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))
os.environ.setdefault("MPLBACKEND", "Agg")  # draw without a display

from common import compare, hardware, i18n, keys, options, plots, report, stats, timeline  # noqa: E402
from common.machine import device_label  # noqa: E402
from example_runs import check_comparison  # noqa: E402
from fake_nvml import FakeNvml  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


# Statistics ------------------------------------------------------------------

def test_median_of_odd_and_even_counts():
    """The reported figure is the median, so one slow outlier does not move it."""
    assert stats.median([3.0, 1.0, 100.0]) == 3.0
    assert stats.median([4, 1, 2, 3]) == 2.5
    assert isinstance(stats.median([1]), float)
    with pytest.raises(ValueError):
        stats.median([])


def test_spread_is_min_and_max():
    """The spread printed next to every median is the [min, max] of the samples."""
    assert stats.spread([0.1333, 0.1302, 0.1310]) == [0.1302, 0.1333]
    assert stats.spread([2]) == [2.0, 2.0]
    with pytest.raises(ValueError):
        stats.spread([])


def test_count_equal_finds_a_planted_mismatch():
    """The copy check counts only the pairs that are equal: one wrong copy makes 49 of 50."""
    good = [(i, i) for i in range(50)]
    assert stats.count_equal(good, lambda a, b: a == b) == 50
    planted = good[:7] + [(7, -1)] + good[8:]
    assert stats.count_equal(planted, lambda a, b: a == b) == 49
    assert stats.count_equal([], lambda a, b: True) == 0


def test_overlap_is_the_share_of_the_shorter_job_hidden_under_the_longer():
    """1 at full overlap and 0 when the jobs take turns, whatever their lengths (the old max/together
    gave 0.67 for unequal jobs that took turns, and "speed-up per job" read below 1 at full overlap)."""
    from common import stats
    assert stats.overlap([1.0, 2.0], 2.0) == 1.0  # the short job hid completely
    assert stats.overlap([1.0, 2.0], 3.0) == 0.0  # they took turns
    assert stats.overlap([1.0, 1.0], 1.5) == 0.5
    assert stats.overlap([1.0, 3.0], 3.5) == 0.5  # half the shorter job hidden
    assert stats.overlap([1.0, 1.0], 2.5) == -0.5  # together was slower than taking turns
    assert stats.overlap([1.0, 1.0, 1.0, 1.0], 1.0) == 1.0 and stats.overlap([1.0] * 4, 4.0) == 0.0
    assert stats.overlap([1.0, None], 2.0) is None and stats.overlap([], 2.0) is None
    assert stats.overlap([1.0, 2.0], None) is None and stats.overlap([1.0], 1.0) is None


def test_rates_and_ratios():
    """GB/s, TFLOP/s and fractions of a peak are plain divisions that tolerate missing values."""
    assert stats.matmul_flops(4000, 50) == 2 * 4000**3 * 50
    assert stats.rate(6.4e12, 0.131, 1e12) == pytest.approx(48.85, rel=1e-3)
    assert stats.rate(1e9, None) is None
    assert stats.ratio(1.0, 4.0) == 0.25
    assert stats.ratio(1.0, 0.0) is None
    assert stats.speedup(2.0, 0.5) == 4.0


def test_size_for_time_inverts_the_flop_count():
    """The CPU size picked for the GPU+CPU experiment takes about the requested time."""
    n = stats.size_for_time(1e12, 0.131, 50)
    assert n % 16 == 0
    assert stats.matmul_flops(n, 50) / 1e12 == pytest.approx(0.131, rel=0.1)
    assert stats.size_for_time(1e12, 0.131, 50, largest=500) == 500
    assert stats.size_for_time(1.0, 1e-9, 50) == 16
    with pytest.raises(ValueError):
        stats.size_for_time(0.0, 1.0, 50)


# Options -------------------------------------------------------------------

def test_options_defaults_match_the_book():
    """Without options a script chooses the size for its device, with 5 repeats, on any device."""
    opts = options.parse_options("Title.", argv=[])
    assert (opts.size, opts.repeats, opts.device, opts.json, opts.figures) == ("auto", 5, "auto", False, None)
    assert options.parse_options("Title.", argv=["--size", "AUTO"]).size == "auto"
    assert options.parse_options("Title.", argv=["--size", "64"]).size == 64
    assert (options.GPU_SIZE, options.CPU_JOB_SECONDS) == (4000, 0.2)


@pytest.mark.parametrize("argv", [["--size", "0"], ["--size", "x"], ["--size", "autox"], ["--repeats", "-1"],
                                  ["--device", "tpu"], ["--bogus"]])
def test_bad_options_exit_2_with_a_message(argv, capsys):
    """A bad value stops with status 2 and says which option is wrong."""
    with pytest.raises(SystemExit) as stop:
        options.parse_options("Title.", argv=argv)
    assert stop.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_size_list_validates_every_size():
    """--sizes accepts a comma-separated list and rejects empty, zero or non-numeric entries."""
    assert options.size_list("64, 128,4000") == [64, 128, 4000]
    for bad in ["", ",", "64,0", "64,x"]:
        with pytest.raises(argparse.ArgumentTypeError):
            options.size_list(bad)


def test_kernel_reads_example_args(monkeypatch):
    """Inside a Jupyter kernel the options come from EXAMPLE_ARGS, not from the kernel's argv."""
    monkeypatch.setattr(options, "in_kernel", lambda: True)
    monkeypatch.setattr(sys, "argv", ["ipykernel_launcher.py", "-f", "kernel.json"])
    monkeypatch.setenv("EXAMPLE_ARGS", "--size 64 --repeats 2")
    opts = options.parse_options("Title.")
    assert (opts.size, opts.repeats) == (64, 2)
    monkeypatch.delenv("EXAMPLE_ARGS")
    assert options.parse_options("Title.").size == "auto"


def test_fail_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as stop:
        options.fail("no usable GPU")
    assert stop.value.code == 2
    assert capsys.readouterr().err == f"{Path(sys.argv[0]).name}: error: no usable GPU\n"


def test_the_out_of_memory_hint_fits_the_memory_that_the_device_reports():
    """--size 100000 on a 24 GB GPU: half of it (50000, 10 GB a matrix) would not fit either; the hint
    suggests the size at which OOM_MATRICES matrices fit in the 24 GB, to 2 significant digits."""
    message = options.oom_message(100000, "the GPU", 24 * 10**9)
    assert options.fitting_size(24 * 10**9, 100000) == 27000  # sqrt(24e9 / (4 bytes x 8)) = 27,386
    assert message.endswith(f"e.g. --size 27000 (the GPU has 24 GB, room for {options.OOM_MATRICES} "
                            "matrices at that size)"), message
    assert options.OOM_MATRICES * 4 * 27000**2 <= 24e9
    assert options.fitting_size(10**15, 4000) == 2000  # never above half of the size that failed
    assert options.oom_message(64).endswith("e.g. --size 32")  # memory unknown: half


def test_help_and_the_first_timing_line_say_what_the_brackets_mean(capsys, monkeypatch):
    """A script run on its own explains ``median [fastest-slowest]`` in --help, and once, above the
    first times it prints."""
    with pytest.raises(SystemExit):
        options.parse_options("Title.", argv=["--help"])
    assert "median [fastest-slowest] of the timed repeats" in " ".join(capsys.readouterr().out.split())
    monkeypatch.setattr(report, "_legend_said", [False])
    report.print_timings({"a": [0.131, 0.130, 0.133]})
    report.print_timings({"b": [0.001]})
    assert capsys.readouterr().out.splitlines() == [
        f"Times: {options.TIMING_LEGEND}.", "a: 131 ms [130-133]", "b: 1.00 ms [1.00-1.00]"]


def test_error_hook_turns_a_recognised_error_into_one_line():
    """An out-of-memory error ends the script with exit 2 and one line, with no traceback."""
    code = (f"import sys; sys.path.insert(0, {str(EXAMPLES)!r})\n"
            "from common.options import install_error_hook, oom_message\n"
            "install_error_hook(lambda e: oom_message(64) if isinstance(e, MemoryError) else None)\n"
            "raise MemoryError('boom')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith("-c: error: out of memory")  # the script's name, as argparse's errors
    assert "smaller --size" in done.stderr and "--size 32" in done.stderr
    other = subprocess.run([sys.executable, "-c", code.replace("MemoryError('boom')", "KeyError('x')")],
                           capture_output=True, text=True, timeout=60)
    assert other.returncode == 1 and "Traceback" in other.stderr


def test_no_gpu_reason_does_not_claim_a_missing_gpu_when_asked_for_cpu():
    assert options.no_gpu_reason("cpu") == "--device cpu"
    assert options.no_gpu_reason("auto") == "No GPU"


# Report ----------------------------------------------------------------------

def make_report(**kw):
    defaults = dict(size="auto", repeats=2, json=False, figures=None)
    defaults.update(kw)
    return report.Report(argparse.Namespace(**defaults), keys=["a", "t_b"])


def test_publish_keeps_plain_values_only():
    """Published figures are plain Python; numpy scalars are converted, other objects refused."""
    np = pytest.importorskip("numpy")
    rep = make_report()
    rep.publish("a", np.float32(0.5))
    rep.publish("b", [np.int64(3), 1.5, None, True])
    assert rep.values["a"] == 0.5 and type(rep.values["a"]) is float
    assert rep.values["b"] == [3, 1.5, None, True] and type(rep.values["b"][0]) is int
    rep.publish("nan", float("nan"))
    assert rep.values["nan"] is None
    with pytest.raises(TypeError):
        rep.publish("bad", {"x": 1})


def test_a_key_is_published_once():
    """A second value for a key (e.g. 'size' from --size and again from the script) is refused:
    the book would glue two different figures under one name."""
    rep = make_report()
    rep.publish("size", 64)
    with pytest.raises(ValueError, match="'size' is published twice"):
        rep.publish("size", 64)
    with pytest.raises(ValueError, match="'repeats' is published twice"):
        rep.publish("repeats", 2)


def test_publish_timing_gives_the_median_and_the_spread():
    """A timing is glued as its median, and its [min, max] under key_spread."""
    rep = make_report()
    rep.publish_timing("t_b", [0.3, 0.1, 0.2, 10.0])
    assert rep.values["t_b"] == 0.25 and rep.values["t_b_spread"] == [0.1, 10.0]
    rep.publish_timing("t_c", None)
    assert rep.values["t_c"] is None and rep.values["t_c_spread"] is None


def test_finish_publishes_none_for_missing_keys_and_json_is_the_only_output(capsys):
    """With --json the script prints one JSON object: its keys, spreads, size and repeats, and the unit
    of every value that has one, nothing else."""
    rep = make_report(json=True)
    print("this line must not reach stdout")
    rep.publish("a", 1.25)
    rep.publish("size", 64)
    rep.publish("x_peak_gbps", 63.0)
    values = rep.finish()
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    printed = json.loads(out)
    assert printed.pop("units") == {"t_b": "s", "t_b_spread": "s", "x_peak_gbps": "GB/s"}
    assert printed == values == {"size": 64, "repeats": 2, "a": 1.25, "t_b": None, "t_b_spread": None,
                                 "x_peak_gbps": 63.0}
    assert list(printed) == ["a", "t_b", "t_b_spread", "size", "repeats", "x_peak_gbps"], "the contract's order"



def test_sweep_table_writes_every_time_in_ms_and_copy_columns_only_with_copies():
    """One unit per column (no 0.0011 s under 897.6 µs), 3 significant digits (never 130.975, which a
    Turkish reader takes for thousands), and no column of n/a on a device without copies; in Turkish,
    Turkish titles and decimal commas."""
    from common import report
    gpu_row = {"one": 0.0008976, "two": 0.0018, "overlap_two": 0.5, "copy": 0.0003522, "both": 0.0012,
               "overlap_copy": 0.739}
    lines = report.sweep_table({64: gpu_row, 4000: {**gpu_row, "one": 0.1309}}, copies=True).splitlines()
    assert lines[0].strip().split("  ")[1:] == ["one job (ms)", "two at once (ms)", "overlap", "copy (ms)", "run+copy (ms)",
                                        "overlap"]
    assert lines[1].split() == ["64", "0.90", "1.80", "0.50", "0.35", "1.20", "0.74"]
    assert lines[2].split()[1] == "131"
    cpu = report.sweep_table({64: {**gpu_row, "copy": None, "both": None, "overlap_copy": None}}, copies=False)
    assert "copy" not in cpu and "n/a" not in cpu and cpu.splitlines()[1].split() == ["64", "0.90", "1.80", "0.50"]
    turkish = report.sweep_table({4000: {**gpu_row, "one": 0.1309}}, copies=True, lang="tr").splitlines()
    assert turkish[0].strip().split("  ") == ["boyut", "tek iş (ms)", "ikisi birlikte (ms)", "örtüşme", "kopya (ms)",
                                      "çarpım+kopya (ms)", "örtüşme"]
    assert turkish[1].split() == ["4000", "131", "1,80", "0,50", "0,35", "1,20", "0,74"]


def test_formatting():
    """Every printed timing is its median, with 3 significant digits in s, ms or µs, and its spread in
    the median's unit."""
    assert report.timing([0.1310, 0.1302, 0.1333]) == "131 ms [130-133]"
    assert report.timing([0.0039, 0.0038, 0.0041]) == "3.90 ms [3.80-4.10]"
    assert report.timing([0.00918, 0.00836, 0.01067]) == "9.18 ms [8.36-10.7]"
    assert report.timing([2.1268, 2.1164, 2.3753]) == "2.13 s [2.12-2.38]"
    assert report.timing([45.2e-6, 44.9e-6, 46.0e-6]) == "45.2 µs [44.9-46.0]"
    assert report.timing([8.64e-4, 8.62e-4, 8.7e-4]) == "864 µs [862-870]"
    assert report.timing([]) == "n/a" and report.timing(None) == "n/a"
    assert report.timing([0.0999, 0.0998, 0.1001]) == "99.9 ms [99.8-100]"
    assert report.fraction(0.969) == "0.97" and report.fraction(None) == "n/a"
    assert device_label("cuda:0", "NVIDIA H200") == "cuda:0 (NVIDIA H200)"


# The contract between the scripts and the book: the keys of the plan, both frameworks.
CONTRACT = {
    "ASYNC_COMPUTATION": "devices steps t_queue t_done t_item t_numpy t_str step_size t_step_issue "
                         "t_step_gpu t_read_each_step t_read_once speedup_read_once run_ahead run_ahead_calls",
    "AUTO_PARALLELISM": "mode n_gpus devices products cpu_threads job_sizes t_alone_0 t_alone_1 t_together "
                        "overlap_devices speedup_together t_copy_fresh t_copy_pageable t_copy_pinned "
                        "copy_gbps t_run t_run_copy_same_stream overlap_same_stream t_run_copy_streams "
                        "overlap_side_stream copies_correct copies_correct_no_wait link_peak_gbps link_best_gbps "
                        "link_achieved_gbps link_best_frac link_achieved_frac fp32_peak_tflops "
                        "fp32_best_tflops fp32_achieved_tflops fp32_best_frac fp32_achieved_frac",
    "PARALLELISM_SWEEP": "devices sweep_sizes small_overlap_streams large_overlap_streams small_overlap_copies "
                         "large_overlap_copies cpu_small_overlap cpu_large_overlap",
}


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_keys_are_the_contract(name):
    """Each example publishes exactly the contract's keys, each timing with its spread."""
    names = getattr(keys, name)
    assert names == CONTRACT[name].split() and len(set(names)) == len(names)
    everything = keys.published(names)
    assert len(set(everything)) == len(everything)
    assert {"size", "repeats"} <= set(everything)
    timings = [k for k in names if k.startswith("t_")]
    assert all(f"{k}_spread" in everything for k in timings)
    assert bool(timings) == (name != "PARALLELISM_SWEEP")
    assert not any(f"{k}_spread" in everything for k in names if not k.startswith("t_"))


# Hardware peaks, with a fake NVML ----------------------------------------------

def test_peaks_are_read_from_the_hardware():
    """PCIe 5.0 x16 is 63.0 GB/s per direction; 132 SMs x 128 x 2 x 1.98 GHz is 66.9 TFLOP/s."""
    nvml = FakeNvml()
    found = hardware.gpu_peaks("58a5f1b5-1111", 132, (9, 0), nvml=nvml)
    assert found["problem"] is None and not nvml.open
    assert (found["pcie_generation"], found["pcie_width"], found["max_sm_clock_mhz"]) == (5, 16, 1980)
    assert found["link_peak_gbps"] == pytest.approx(63.0, abs=0.05)
    assert found["fp32_peak_tflops"] == pytest.approx(66.9, abs=0.05)
    other = hardware.gpu_peaks("GPU-AAAAAAAA-0000", 108, (8, 0), nvml=nvml)  # bytes UUID, by UUID not index
    assert other["link_peak_gbps"] == pytest.approx(15.75, abs=0.01)
    assert other["fp32_peak_tflops"] == pytest.approx(108 * 64 * 2 * 1.0e9 / 1e12)
    assert hardware.pcie_gbps(3, 16) == pytest.approx(15.75, abs=0.01)


@pytest.mark.parametrize("nvml, uuid, capability, problem", [
    (FakeNvml(), "GPU-ffff", (9, 0), "no GPU with the UUID"),
    (FakeNvml(fail_init=True), "58a5f1b5-1111", (9, 0), "NVML: NVML Shared Library Not Found"),
    (FakeNvml(generation=9), "58a5f1b5-1111", (9, 0), "unknown PCIe generation 9"),
    (FakeNvml(), "58a5f1b5-1111", (1, 0), "compute capability (1, 0)"),
])
def test_a_peak_that_cannot_be_read_is_none_with_a_reason(nvml, uuid, capability, problem):
    """No invented peak: without NVML or for an unknown GPU the peak is None and the reason is given."""
    found = hardware.gpu_peaks(uuid, 132, capability, nvml=nvml)
    assert problem in found["problem"]
    assert found["link_peak_gbps"] is None or found["fp32_peak_tflops"] is None
    assert not nvml.open


def test_missing_nvidia_ml_py_is_reported(monkeypatch):
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml raises ImportError
    found = hardware.gpu_peaks("58a5f1b5-1111", 132, (9, 0))
    assert found["problem"] == "nvidia-ml-py (pynvml) is not installed" and found["link_peak_gbps"] is None


def test_recorded_peaks_are_the_hardwares_never_a_measurement():
    """A peak the book publishes is a theoretical one: the link's is a PCIe rate of some generation and
    width, and the fp32 one is SMs x lanes per SM x 2 x a clock in whole MHz, so in GFLOP/s an even number
    times 64 (the fewest lanes per SM); a measured rate (a recording made with the best measured rates as
    the peaks) is neither. A peak the hardware could not give is None."""
    links = {hardware.pcie_gbps(generation, width)
             for generation in hardware.PCIE_GENERATIONS for width in (1, 2, 4, 8, 12, 16, 32)}
    checked = 0
    for recording in sorted((EXAMPLES / "recordings").glob("*/*.ipynb")):
        glue = json.loads(recording.read_text())["metadata"]["recording"]["glue"]
        peaks = {key: ast.literal_eval(glue[key]) for key in glue if "_peak_" in key}
        tensor = {f"{p}_peak_tflops" for p in ("tf32", "bf16", "fp16", "fp8")}
        assert set(peaks) <= {"link_peak_gbps", "fp32_peak_tflops", "memory_peak_gbps", *tensor}, \
            f"{recording}: a peak this test does not know"
        if peaks.get("memory_peak_gbps") is not None:  # MHz x 2 x bits / 8: MHz x bits, a whole number
            units = peaks["memory_peak_gbps"] * 1e3 * 8 / 2
            assert abs(units - round(units)) < 1e-6, (recording, peaks)
        for key in tensor & {k for k, v in peaks.items() if v is not None}:  # SMs x (FLOP / 1024) x MHz
            units = peaks[key] * 1e6 / 1024
            assert abs(units - round(units)) < 1e-6, (recording, key, peaks)
        if peaks.get("link_peak_gbps") is not None:
            assert any(abs(peaks["link_peak_gbps"] - link) < 1e-9 for link in links), (recording, peaks)
            checked += 1
        if peaks.get("fp32_peak_tflops") is not None:
            units = peaks["fp32_peak_tflops"] * 1e6 / (2 * 64)  # SMs x (lanes / 64) x MHz, a whole number
            assert abs(units - round(units)) < 1e-6, (recording, peaks)
            checked += 1
    assert checked, "no recording publishes a peak"


# Languages ---------------------------------------------------------------------

def test_turkish_numbers_have_a_decimal_comma():
    assert i18n.number(0.25, "tr") == "0,25" and i18n.number(0.25, "en") == "0.25"
    assert i18n.number(66.908, "tr", ".1f") == "66,9"
    assert set(i18n.TEXTS["en"]) == set(i18n.TEXTS["tr"])
    assert i18n.text("tr", "time_s") == "zaman (s)"
    assert i18n.text("tr", "two_streams", device="cuda:0") == "cuda:0: iki iş (iki akış)"


def test_figure_is_drawn_in_every_language_with_its_metadata(tmp_path, monkeypatch):
    """In a kernel each language's PNG is one output whose metadata book_language picks the book."""
    import IPython.display
    shown, drawn = [], []
    rep = make_report(figures=str(tmp_path))
    monkeypatch.setattr(report, "in_kernel", lambda: True)
    monkeypatch.setattr(IPython.display, "display", lambda data, raw, metadata: shown.append((data, metadata)))

    def draw(lang):
        drawn.append(lang)
        return plots.draw_overlap({"x": ([64, 256], [0.5, 0.9])}, lang)

    assert rep.figure(draw, "sweep") is None  # a cell ending with it shows only the figures
    paths = rep.saved
    assert drawn == ["en", "tr"]
    assert [m for _, m in shown] == [{"book_language": "en"}, {"book_language": "tr"}]
    assert all(base64.b64decode(d["image/png"]).startswith(PNG) for d, _ in shown)
    assert paths == [tmp_path / "sweep.en.png", tmp_path / "sweep.tr.png"]
    assert paths[1].read_bytes().startswith(PNG) and paths[0].read_bytes() != paths[1].read_bytes()


def test_a_text_is_printed_in_english_by_a_script_and_shown_in_every_language_in_a_kernel(monkeypatch, capsys):
    """The sweep's tables: a script prints the English one; in a kernel each language's is one output
    whose metadata book_language picks the book."""
    import IPython.display
    shown = []
    rep = make_report()
    rep.text(lambda lang: f"table in {lang}")
    assert capsys.readouterr().out == "table in en\n"
    monkeypatch.setattr(report, "in_kernel", lambda: True)
    monkeypatch.setattr(IPython.display, "display", lambda data, raw, metadata: shown.append((data, metadata)))
    rep.text(lambda lang: f"table in {lang}")
    assert shown == [({"text/plain": "table in en"}, {"book_language": "en"}),
                     ({"text/plain": "table in tr"}, {"book_language": "tr"})]


# Comparison with the book (--compare) ----------------------------------------

# A book's run on a GPU and the CPU, as common.compare.read_book returns it.
BOOK = {"source": "book-figures.json", "recorded_at": "2026-12-06T20:44:43+00:00", "example_args": "",
        "machine": {"gpus": ["NVIDIA H100 80GB HBM3"], "cpu": "Book CPU", "cpu_threads": 16},
        "versions": {"python": "0.0.1", "numpy": "0.0.1"},
        "values": {"devices": ["cpu (Book CPU)", "cuda:0 (NVIDIA H100 80GB HBM3)"], "repeats": 5,
                   "t_host_copy": 0.0314, "t_host_copy_spread": [0.031, 0.032], "memory_copy_gbps": 3028.5,
                   "memory_peak_gbps": 3352.3, "memory_frac": 0.9034, "fp8_tflops": 1631.1, "t_sync": 2.05e-5,
                   "cpu_op_issue_us": 3.0, "gelu_recording": "H100", "export_matches": True}}


def this_run(devices, **values):
    """This run's values on ``devices``: the book's figures doubled (GPU ones None off a GPU), and ``values``."""
    doubled = {k: 2 * v for k, v in BOOK["values"].items() if k in ("t_host_copy", "memory_copy_gbps", "t_sync")}
    return {**BOOK["values"], **doubled, "devices": devices, "repeats": 2, **values}


def test_compare_faces_like_with_like_and_says_once_why_the_rest_is_not(monkeypatch):
    """Same devices: each figure faces the book's, a limited rate with each machine's fraction of its own
    limit; a figure this run lacks is listed under its reason (fp8's by its prefix); settings, spreads,
    rounded copies, limits, names and flags are no rows, and a differing setting is named with both values.
    Other devices: a host figure is still compared; the rest "needs a GPU", or "ran on other devices"."""
    monkeypatch.setattr(sys, "argv", ["hardware.py", "--repeats", "2", "--compare", "--json"])
    h200 = this_run(["cpu (This CPU)", "cuda:0 (NVIDIA H200)"], memory_peak_gbps=4917.0, memory_frac=1.2317,
                    fp8_tflops=None, t_sync=None)
    compared = compare.comparison(BOOK, h200)
    assert compared["rows"] == [
        {"key": "t_host_copy", "book": 0.0314, "this": 0.0628, "ratio": 2.0},
        {"key": "memory_copy_gbps", "book": 3028.5, "this": 6057.0, "ratio": 2.0, "book_limit": 3352.3,
         "book_frac": 0.9034, "this_limit": 4917.0, "this_frac": 1.2317}]
    assert compared["not_compared"] == [{"reason": "fp8 needs compute capability 8.9 or newer", "keys": ["fp8_tflops"]},
                                        {"reason": "not measured on this run", "keys": ["t_sync"]}]
    assert compared["units"] == {"t_host_copy": "s", "memory_copy_gbps": "GB/s"}
    assert compared["this"]["machine"]["gpus"] == ["NVIDIA H200"] and compared["this"]["options"] == "--repeats 2"
    assert compared["differs"][0] == "GPU model" and "Python" in compared["differs"] and "numpy" in compared["differs"]
    assert compared["differs"][-2:] == ["options", "repeats (book: 5; this: 2)"]
    two = compare.comparison(BOOK, this_run(["cuda:0 (NVIDIA H200)", "cuda:1 (NVIDIA H200)"]))
    assert [row["key"] for row in two["rows"]] == ["t_host_copy"]
    assert two["not_compared"] == [{"reason": "ran on other devices (book: cpu, cuda:0; this: cuda:0, cuda:1)",
                                    "keys": ["memory_copy_gbps", "fp8_tflops", "t_sync"]}]
    cpu = compare.comparison(BOOK, this_run(["cpu (This CPU)"], memory_copy_gbps=None, t_sync=None))
    assert cpu["not_compared"] == [{"reason": "needs a GPU", "keys": ["memory_copy_gbps", "fp8_tflops", "t_sync"]}]
    assert "devices (book: cpu, cuda:0; this: cpu)" in cpu["differs"]


def test_compare_prints_one_table_or_the_json_member(monkeypatch, capsys):
    """Report.finish() with the book's figures: a table (times in s, ms or µs, rates with 3 significant
    digits, both fractions of a limit on the rate's row, the figures not compared under their reason);
    with --json the object's compare member instead."""
    monkeypatch.setattr(sys, "argv", ["hardware.py", "--compare"])
    values = this_run(["cpu (This CPU)", "cuda:0 (NVIDIA H200)"], memory_peak_gbps=4917.0, memory_frac=1.2317,
                      fp8_tflops=None, t_sync=None)
    for as_json in (False, True):
        rep = report.Report(argparse.Namespace(json=as_json, figures=None, repeats=2), keys=[], book=BOOK)
        rep.publish_all({k: v for k, v in values.items() if k != "repeats"})
        rep.finish()
        out = capsys.readouterr().out
        if as_json:
            assert json.loads(out)["compare"]["rows"][1]["this_frac"] == 1.2317
            continue
        lines = out.splitlines()
        assert lines[0] == "--compare: the book's figures (book-figures.json) beside this run's"
        assert lines[1].startswith("book:     GPU NVIDIA H100 80GB HBM3; CPU Book CPU, 16 threads; Python 0.0.1, "
                                   "numpy 0.0.1; 2026-12-06; options: none")
        assert lines[2].startswith("this run: GPU NVIDIA H200; CPU ") and lines[3].startswith("differs:  GPU model, ")
        assert [line.split() for line in lines[5:8]] == [
            ["figure", "unit", "book", "this", "run", "this/book", "book/limit", "this/limit"],
            ["t_host_copy", "s", "31.4", "ms", "62.8", "ms", "2.00"],
            ["memory_copy_gbps", "GB/s", "3030", "6060", "2.00", "0.90", "1.23"]]
        assert lines[9:] == ["not compared:", "  fp8 needs compute capability 8.9 or newer: fp8_tflops",
                             "  not measured on this run: t_sync"]
    assert [compare.significant(x) for x in (3028.5, 68.33, 1.0, 0.002446, -0.036)] == \
        ["3030", "68.3", "1.00", "0.00245", "-0.0360"]


def test_the_comparison_check_catches_a_gpu_figure_facing_a_cpu_one():
    """example_runs.check_comparison, which every --compare --json run of the tests passes, fails where a
    GPU figure of the book faces a CPU run's, and where a figure of the book is neither a row nor listed."""
    book = compare.read_book(EXAMPLES / "pytorch", "pytorch", "hardware")
    gpu_only = {k for k, v in book["values"].items() if isinstance(v, float) and k not in keys.HOST_FIGURES}
    values = {**{k: None if k in gpu_only else v for k, v in book["values"].items()}, "devices": ["cpu (This CPU)"]}
    honest = compare.comparison(book, values)
    check_comparison(json.dumps({**values, "units": {}, "compare": honest}), "pytorch", "hardware")
    (needs_gpu,) = honest["not_compared"]
    facing = {**honest, "rows": [*honest["rows"], {"key": "t_sync", "book": book["values"]["t_sync"], "this": 1e-5,
                                                   "ratio": 1.0}],
              "not_compared": [{**needs_gpu, "keys": [k for k in needs_gpu["keys"] if k != "t_sync"]}]}
    missing = {**honest, "not_compared": facing["not_compared"]}
    for planted in (facing, missing):
        with pytest.raises(AssertionError):
            check_comparison(json.dumps({**values, "units": {}, "compare": planted}), "pytorch", "hardware")


def test_compare_without_the_books_figures_stops_with_one_line_naming_both_places(tmp_path):
    """A script copied without its recording and without a zip's book-figures.json: --compare stops before
    measuring, exit 2, with one line that names both places it looked."""
    copied = tmp_path / "examples"
    shutil.copytree(EXAMPLES / "common", copied / "common")
    (copied / "pytorch").mkdir()
    for script in (EXAMPLES / "pytorch").glob("*.py"):
        shutil.copy(script, copied / "pytorch")
    done = subprocess.run([sys.executable, "hardware.py", "--compare"], cwd=copied / "pytorch", capture_output=True,
                          text=True, timeout=120, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    assert (done.returncode, done.stdout) == (2, ""), done
    assert done.stderr == (f"hardware.py: error: --compare: the book's figures of pytorch/hardware are neither in "
                           f"{copied}/pytorch/book-figures.json nor in {copied}/recordings/pytorch/hardware.ipynb\n")


# Drawing ---------------------------------------------------------------------

def test_timeline_draws_a_png(tmp_path):
    """--figures DIR saves each timeline as a PNG (with the Agg backend, no display)."""
    spans = [timeline.Span("cpu 0", 10.0, 11.0, "run"), timeline.Span("cpu 1", 11.0, 12.5, "run")]
    assert timeline.align(spans)[0].start == 0.0 and timeline.align(spans)[1].end == 2.5
    assert timeline.rows_in_order(spans + spans[:1]) == ["cpu 0", "cpu 1"]
    fig = timeline.draw_timeline({"alone": spans, "together": [s._replace(start=10.0) for s in spans]})
    assert [ax.get_xlabel() for ax in fig.axes][-1] == "time (s)"
    assert len(fig.axes) == 2
    late_first = [timeline.Span("cpu 1", 0.0, 1.0), timeline.Span("cpu 0", 0.0, 1.1)]
    fig2 = timeline.draw_timeline({"alone": spans, "together": late_first})
    assert [t.get_text() for t in fig2.axes[1].get_yticklabels()] == ["cpu 0", "cpu 1"], "same row order"
    tr = timeline.draw_timeline({"alone": spans}, "tr")
    assert tr.axes[-1].get_xlabel() == "zaman (s)"
    tr.canvas.draw()
    assert [t.get_text() for t in tr.axes[0].get_yticklabels()] == ["cpu 0", "cpu 1"], "rows keep their names"
    assert any("," in t.get_text() for t in tr.axes[0].get_xticklabels()), "decimal comma in Turkish"
    rep = make_report(figures=str(tmp_path / "figs"))
    rep.figure(lambda lang: timeline.draw_timeline({"alone": spans}, lang), "timeline-devices")
    paths = rep.saved
    assert paths[0] == tmp_path / "figs" / "timeline-devices.en.png"
    assert paths[0].read_bytes().startswith(PNG) and paths[0].stat().st_size > 2000
    fig = timeline.draw_timeline({"one stream": [timeline.Span("s", 0, 1, "product"),
                                                 timeline.Span("s", 1, 2, "copy")]}, color_by="label")
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["product", "copy"]
    with pytest.raises(ValueError):
        timeline.draw_timeline({"x": spans}, color_by="colour")


def test_overlap_plot_skips_missing_points():
    fig = plots.draw_overlap({"gpu": ([64, 256], [0.5, 0.9]), "cpu": ([64, 256], [None, 0.6])})
    lines = [line for line in fig.axes[0].get_lines() if line.get_label() in ("gpu", "cpu")]
    assert [len(line.get_xdata()) for line in lines] == [2, 1]
    assert fig.axes[0].get_ylabel() == "overlap"
    tr = plots.draw_overlap({"gpu": ([64, 256], [0.5, 0.9])}, "tr")
    tr.canvas.draw()
    assert tr.axes[0].get_ylabel() == "örtüşme oranı"
    assert "0,4" in [t.get_text() for t in tr.axes[0].get_yticklabels()]


def test_every_sweep_curve_shares_the_references_full_overlap_and_taking_turns():
    """One measure for every curve: 1 is full overlap and 0 taking turns, for two equal jobs as for
    products next to shorter copies, so the plot draws two reference lines, not one floor per curve."""
    rows = {64: {"one": 0.68e-3, "copy": 0.29e-3, "overlap_two": 0.04, "overlap_copy": 0.71},
            256: {"one": 2.0e-3, "copy": 1.0e-3, "overlap_two": -0.1, "overlap_copy": 0.95}}
    curves = plots.sweep_curves(rows, "streams", "copies")
    assert curves == {"streams": ([64, 256], [0.04, -0.1]), "copies": ([64, 256], [0.71, 0.95])}
    ax = plots.draw_overlap(curves).axes[0]
    references = sorted(float(line.get_ydata()[0]) for line in ax.get_lines() if line.get_label().startswith("_"))
    assert references == [0.0, 1.0]
    assert ax.get_ylim()[0] < -0.1, "a point below 0 stays in view"


def test_in_turns_times_every_case_once_per_round():
    """Cases are timed in turns (a, b, a, b, ...) after a warm-up round, and each keeps its own samples."""
    calls = []

    def time_once(case):
        calls.append(case)
        return float(len(calls))

    samples = stats.in_turns(time_once, {"a": "A", "b": "B"}, repeats=3)
    assert calls == ["A", "B"] + ["A", "B"] * 3
    assert samples == {"a": [3.0, 5.0, 7.0], "b": [4.0, 6.0, 8.0]}
    calls.clear()
    assert stats.in_turns(time_once, {"a": "A"}, repeats=2, warmup=0) == {"a": [1.0, 2.0]}
