"""What the two hybridize twins share: sizes, the --sweep option, the timeline.

``sweep_option(default)`` adds ``--sweep``, the matrix sides of the
two-stream sweep. ``draw_streams(panels, n, lang)`` draws the timeline of two
jobs on two streams, eager and as one CUDA graph, in milliseconds, with the
texts of ``lang`` from common.i18n.
"""
from typing import Callable, List, Mapping, Sequence

from common.i18n import text
from common.options import size_list
from common.timeline import Span, draw_timeline

STEPS = 200  # steps of the small loop, as in the async section
SMALL = 64  # side of the small loop's matrices and of the exported network
CHAIN = 50  # products (each with a tanh) in one job of the two-stream sweep
SWEEP = [64, 256, 1024]  # matrix sides of the two-stream sweep on a GPU


def sweep_option(default: List[int]) -> Callable:
    """``add_arguments`` for parse_options: ``--sweep``, the two-stream sweep's sides."""
    def add(parser) -> None:
        parser.add_argument("--sweep", type=size_list, default=default,
                            help="matrix sides of the two-stream sweep (default "
                                 f"{','.join(map(str, default))})")
    return add


def draw_streams(panels: Mapping[str, Sequence[Span]], n: int, lang: str):
    """The timeline of ``{"eager": spans, "graph": spans}`` (rows "1", "2"; seconds)."""
    in_ms = {text(lang, f"hybridize_{mode}"):
             [s._replace(row=text(lang, "hybridize_stream", i=s.row),
                         start=s.start * 1e3, end=s.end * 1e3) for s in spans]
             for mode, spans in panels.items()}
    fig = draw_timeline(in_ms, lang, title=text(lang, "hybridize_title", n=n))
    fig.axes[-1].set_xlabel(text(lang, "time_ms"))
    return fig
