"""What the two hybridize twins share: sizes, the --sweep option, timings, the figure.

``sweep_option(default)`` adds ``--sweep``. ``Timed`` prints a median with
its spread (``0.1310 s [0.1302-0.1333]``) and publishes ``key`` (the median)
and ``key_spread`` ([min, max]).
``draw_streams(panels, lang)`` draws the two-stream timeline with English or
Turkish labels (decimal comma in Turkish).
"""
from typing import Callable, List, Mapping, Sequence

from common.options import size_list
from common.stats import median
from common.timeline import Span, draw_timeline

STEPS = 200  # steps of the small loop, as in the async section
SMALL = 64  # side of the small loop's matrices and of the exported network
CHAIN = 50  # products (each with a tanh) in one job of the two-stream sweep
SWEEP = [64, 256, 1024]  # matrix sides of the two-stream sweep on a GPU

TEXT = {
    "en": {"title": "Two jobs of {n}x{n} products on two streams of one GPU",
           "eager": "eager: one Python thread issues both jobs",
           "graph": "one CUDA graph: both jobs launched at once",
           "stream": "stream {i}", "time": "time (ms)"},
    "tr": {"title": "Bir GPU'nun iki akışında {n}x{n} çarpımlardan oluşan iki iş",
           "eager": "anında: tek Python iş parçacığı iki işi de kuyruğa ekler",
           "graph": "tek CUDA çizgesi: iki iş birlikte başlatılır",
           "stream": "akış {i}", "time": "zaman (ms)"},
}


def sweep_option(default: List[int]) -> Callable:
    """``add_arguments`` for parse_options: ``--sweep``, the two-stream sweep's sides."""
    def add(parser) -> None:
        parser.add_argument("--sweep", type=size_list, default=default,
                            help="matrix sides of the two-stream sweep (default "
                                 f"{','.join(map(str, default))})")
    return add


def timing_text(samples: Sequence[float]) -> str:
    """``0.1310 s [0.1302-0.1333]``: the median and the range of the samples."""
    return f"{median(samples):.4f} s [{min(samples):.4f}-{max(samples):.4f}]"


class Timed:
    """``timed(key, label, job)``: measure, print, publish; return the median."""

    def __init__(self, report, measure_all: Callable[[Callable], List[float]]):
        self.report = report
        self.measure_all = measure_all

    def __call__(self, key: str, label: str, job: Callable) -> float:
        samples = self.measure_all(job)
        print(f"{label}: {timing_text(samples)}")
        self.report.publish(key, median(samples))
        self.report.publish(f"{key}_spread", [min(samples), max(samples)])
        return median(samples)


def draw_streams(panels: Mapping[str, Sequence[Span]], n: int, lang: str):
    """The timeline of both modes, with the labels of ``lang`` ("en" or "tr")."""
    import matplotlib.ticker as ticker

    text = TEXT[lang]
    scaled = {text[mode]: [s._replace(row=text["stream"].format(i=s.row),
                                      start=s.start * 1e3, end=s.end * 1e3) for s in spans]
              for mode, spans in panels.items()}
    fig = draw_timeline(scaled, title=text["title"].format(n=n))
    for ax in fig.axes:
        ax.set_xlabel(text["time"] if ax is fig.axes[-1] else "")
        if lang == "tr":
            ax.xaxis.set_major_formatter(ticker.FuncFormatter(
                lambda v, _: f"{v:g}".replace(".", ",")))
    return fig
