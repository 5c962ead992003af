"""Unit tests of examples/common: the statistics, options, reporting and drawing every example relies on."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))
os.environ.setdefault("MPLBACKEND", "Agg")  # draw without a display

from common import keys, options, plots, report, stats, timeline  # noqa: E402
from common.machine import device_label  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


# Statistics ------------------------------------------------------------------

def test_median_of_odd_and_even_counts():
    """The reported figure is the median, so one slow outlier does not move it."""
    assert stats.median([3.0, 1.0, 100.0]) == 3.0
    assert stats.median([4, 1, 2, 3]) == 2.5
    assert isinstance(stats.median([1]), float)
    with pytest.raises(ValueError):
        stats.median([])


def test_parallel_efficiency_is_slowest_alone_over_together():
    """1 means the lanes ran fully at once, 1/N means one after another."""
    assert stats.parallel_efficiency([1.0, 2.0], 2.0) == 1.0
    assert stats.parallel_efficiency([1.0, 1.0], 2.0) == 0.5
    assert stats.parallel_efficiency([1.0, 1.0, 1.0, 1.0], 4.0) == 0.25
    assert stats.parallel_efficiency([1.0, None], 2.0) is None
    assert stats.parallel_efficiency([], 2.0) is None
    assert stats.parallel_efficiency([1.0], 0.0) is None


def test_overlap_efficiency_is_longer_part_over_both():
    """Full overlap gives 1; none gives max/(sum); a missing time gives None, not an error."""
    assert stats.overlap_efficiency(1.0, 3.0, 3.0) == 1.0
    assert stats.overlap_efficiency(1.0, 3.0, 4.0) == 0.75
    assert stats.overlap_efficiency(None, 3.0, 4.0) is None
    assert stats.overlap_efficiency(1.0, 3.0, None) is None


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
    """Without options a script uses the book's problem: size 4000, 5 repeats, auto device."""
    opts = options.parse_options("Title.", argv=[])
    assert (opts.size, opts.repeats, opts.device, opts.json, opts.figures) == (4000, 5, "auto", False, None)


@pytest.mark.parametrize("argv", [["--size", "0"], ["--size", "x"], ["--repeats", "-1"],
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
    assert options.parse_options("Title.").size == 4000


def test_fail_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as stop:
        options.fail("no usable GPU")
    assert stop.value.code == 2
    assert capsys.readouterr().err == "error: no usable GPU\n"


def test_error_hook_turns_a_recognised_error_into_one_line():
    """An out-of-memory error ends the script with exit 2 and one line, with no traceback."""
    code = (f"import sys; sys.path.insert(0, {str(EXAMPLES)!r})\n"
            "from common.options import install_error_hook, oom_message\n"
            "install_error_hook(lambda e: oom_message(64) if isinstance(e, MemoryError) else None)\n"
            "raise MemoryError('boom')\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "smaller --size" in done.stderr and "--size 32" in done.stderr
    other = subprocess.run([sys.executable, "-c", code.replace("MemoryError('boom')", "KeyError('x')")],
                           capture_output=True, text=True, timeout=60)
    assert other.returncode == 1 and "Traceback" in other.stderr


def test_no_gpu_reason_does_not_claim_a_missing_gpu_when_asked_for_cpu():
    assert options.no_gpu_reason("cpu") == "--device cpu"
    assert options.no_gpu_reason("auto") == "No GPU"


# Report ----------------------------------------------------------------------

def make_report(**kw):
    defaults = dict(size=64, repeats=2, json=False, figures=None)
    defaults.update(kw)
    return report.Report(argparse.Namespace(**defaults), keys=["a", "b"])


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


def test_finish_publishes_none_for_missing_keys_and_json_is_the_only_output(capsys):
    """With --json the script prints one JSON object: its keys, size and repeats, nothing else."""
    rep = make_report(json=True)
    print("this line must not reach stdout")
    rep.publish("a", 1.25)
    values = rep.finish()
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert json.loads(out) == values == {"size": 64, "repeats": 2, "a": 1.25, "b": None}


def test_formatting():
    assert report.seconds(0.13101) == "0.1310 s" and report.seconds(None) == "n/a"
    assert report.fraction(0.969) == "0.97" and report.fraction(None) == "n/a"
    assert device_label("cuda:0", "NVIDIA H200") == "cuda:0 (NVIDIA H200)"


def test_keys_have_no_duplicates():
    for names in (keys.AUTO_PARALLELISM, keys.ASYNC_COMPUTATION, keys.PARALLELISM_SWEEP):
        assert len(names) == len(set(names)) and "devices" in names


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
    path = make_report(figures=str(tmp_path / "figs")).figure(fig, "timeline-devices")
    assert path == tmp_path / "figs" / "timeline-devices.png"
    assert path.read_bytes().startswith(PNG) and path.stat().st_size > 2000
    fig = timeline.draw_timeline({"one stream": [timeline.Span("s", 0, 1, "product"),
                                                 timeline.Span("s", 1, 2, "copy")]}, color_by="label")
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["product", "copy"]
    with pytest.raises(ValueError):
        timeline.draw_timeline({"x": spans}, color_by="colour")


def test_efficiency_plot_skips_missing_points(tmp_path):
    fig = plots.draw_efficiency({"gpu": ([64, 256], [0.5, 0.9]), "cpu": ([64, 256], [None, 0.6])})
    lines = [line for line in fig.axes[0].get_lines() if line.get_label() in ("gpu", "cpu")]
    assert [len(line.get_xdata()) for line in lines] == [2, 1]
    path = make_report(figures=str(tmp_path)).figure(fig, "sweep")
    assert path.read_bytes().startswith(PNG)


def test_in_turns_times_every_case_once_per_round():
    """Cases are timed in turns (a, b, a, b, ...) after one warm-up each, and each gets its own median."""
    calls = []

    def fake_measure_all(job, devices, repeats, warmup):
        calls.append((job(), repeats, warmup))
        return [float(len(calls))] * repeats

    medians = stats.in_turns(fake_measure_all, {"a": (lambda: "a", []), "b": (lambda: "b", [])}, repeats=3)
    assert calls[:2] == [("a", 0, 1), ("b", 0, 1)]
    assert [job for job, _, _ in calls[2:]] == ["a", "b"] * 3
    assert all(repeats == 1 and warmup == 0 for _, repeats, warmup in calls[2:])
    assert medians == {"a": 5.0, "b": 6.0}
