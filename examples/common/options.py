"""Command-line options shared by every example script.

Every script takes ``--size N|auto``, ``--repeats``, ``--device {auto,cpu,gpu}``,
``--json``, ``--figures DIR`` and ``--compare``. Bad values exit with status 2 and a one-line
message (argparse's behaviour). ``--size auto`` (the default) leaves the choice
to the framework helpers: GPU_SIZE on a GPU, and on the CPU the size at which
one job takes about CPU_JOB_SECONDS, found by timing. Inside a Jupyter kernel ``sys.argv`` belongs to
the kernel, so the options come from the environment variable EXAMPLE_ARGS
(for example ``EXAMPLE_ARGS="--size 64 --repeats 2"``).
"""
import argparse
import math
import os
import shlex
import sys
from typing import Any, Callable, List, NoReturn, Optional, Sequence, Union

#: ``--size auto`` on a GPU: the book's matrix side.
GPU_SIZE = 4000
#: ``--size auto`` on the CPU: one job (all its products) takes about this long.
CPU_JOB_SECONDS = 0.2
DEFAULT_SIZE = "auto"
DEFAULT_REPEATS = 5
DEVICE_CHOICES = ("auto", "cpu", "gpu")
#: What a printed time's numbers are: said in --help and above a script's first time.
TIMING_LEGEND = "median [fastest-slowest] of the timed repeats, in the median's unit"
#: The out-of-memory hint leaves room for this many matrices of the size on the device: a script
#: holds a few at once (inputs, results, a job's copies), and the device's memory is not all free.
OOM_MATRICES = 8


def in_kernel() -> bool:
    """True inside an IPython/Jupyter kernel (a notebook or myst-nb build)."""
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except Exception:  # pragma: no cover - odd IPython states
        return False
    return ip is not None and getattr(ip, "kernel", None) is not None


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def size_or_auto(text: str) -> Union[int, str]:
    """argparse type: ``auto`` or an integer >= 1."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected 'auto' or an integer >= 1, got {text!r}") from None


def size_list(text: str) -> List[int]:
    """argparse type: comma-separated matrix sides >= 1, e.g. ``64,256,1024``."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise argparse.ArgumentTypeError("expected a comma-separated list of sizes, e.g. 64,256,1024")
    return [positive_int(p) for p in parts]


def build_parser(description: Optional[str] = None, prog: Optional[str] = None,
                 size: Union[int, str] = DEFAULT_SIZE,
                 repeats: int = DEFAULT_REPEATS) -> argparse.ArgumentParser:
    """The parser with the options every script shares; add your own to it."""
    summary = (description or "").strip().splitlines()[0] if description else None
    parser = argparse.ArgumentParser(prog=prog, description=summary,
                                     epilog=f"Times print as {TIMING_LEGEND}: 131 ms [130-133].")
    parser.add_argument("--size", type=size_or_auto, default=size,
                        help=f"matrix side, or auto: {GPU_SIZE} on a GPU, on the CPU the size at "
                             f"which one job takes about {CPU_JOB_SECONDS} s (default {size})")
    parser.add_argument("--repeats", type=positive_int, default=repeats,
                        help=f"timed repeats; medians are reported (default {repeats})")
    parser.add_argument("--device", choices=DEVICE_CHOICES, default="auto",
                        help="auto: GPUs if there are any; cpu: CPU only; gpu: fail without a GPU")
    parser.add_argument("--json", action="store_true",
                        help="print only one JSON object with every published figure")
    parser.add_argument("--figures", metavar="DIR", default=None,
                        help="also save every drawn figure as a PNG file into DIR")
    parser.add_argument("--compare", action="store_true",
                        help="after the run, print one table that sets the book's figures beside this run's, "
                             "with both machines (with --json: a 'compare' member); the book's figures come "
                             "from book-figures.json beside the script (a downloaded zip) or, in the book's "
                             "repository, from examples/recordings/")
    return parser


def kernel_argv() -> List[str]:
    """The options to use inside a kernel: EXAMPLE_ARGS split like a shell."""
    return shlex.split(os.environ.get("EXAMPLE_ARGS", ""))


def parse_options(description: Optional[str] = None, argv: Optional[Sequence[str]] = None,
                  add_arguments: Optional[Callable[[argparse.ArgumentParser], None]] = None,
                  prog: Optional[str] = None, size: Union[int, str] = DEFAULT_SIZE,
                  repeats: int = DEFAULT_REPEATS) -> argparse.Namespace:
    """Parse the shared options (plus any that ``add_arguments`` adds).

    ``argv`` defaults to EXAMPLE_ARGS inside a kernel and to sys.argv[1:] otherwise.
    """
    if argv is None:
        argv = kernel_argv() if in_kernel() else sys.argv[1:]
    if prog is None and in_kernel():
        prog = "EXAMPLE_ARGS"
    parser = build_parser(description, prog=prog, size=size, repeats=repeats)
    if add_arguments is not None:
        add_arguments(parser)
    return parser.parse_args(list(argv))


def error_line(message: str) -> str:
    """``script.py: error: message``, as argparse writes its errors (``EXAMPLE_ARGS:`` in a kernel)."""
    prog = "EXAMPLE_ARGS" if in_kernel() else os.path.basename(sys.argv[0])
    return f"{prog}: error: {message}"


def fail(message: str, status: int = 2) -> NoReturn:
    """Print ``script.py: error: message`` as one line on stderr and stop with ``status``."""
    sys.stdout.flush()
    print(error_line(message), file=sys.stderr, flush=True)
    raise SystemExit(status)


def note_unused(option: str, why: str) -> None:
    """Say in one line on stderr that ``option`` was given but is not used on this run, and why."""
    print(f"note: {option} is not used: {why}", file=sys.stderr, flush=True)


def install_error_hook(explain: Callable[[BaseException], Optional[str]], status: int = 2) -> None:
    """Report the errors that ``explain`` recognises as one line, without a traceback.

    ``explain(exc)`` returns a one-line message (for example for an out-of-memory
    error: "out of memory at --size 4000; try a smaller --size") or None for any
    other error, which keeps its usual traceback. As a script the process then
    exits with ``status``; in a kernel the cell fails with just that line.
    """
    if in_kernel():
        ip = sys.modules["IPython"].get_ipython()

        def handler(shell, etype, value, tb, tb_offset=None):
            message = explain(value)
            if message is None:
                shell.showtraceback((etype, value, tb), tb_offset=tb_offset)
                return None
            print(error_line(message), file=sys.stderr, flush=True)
            return [error_line(message)]

        ip.set_custom_exc((Exception,), handler)
        return

    previous = sys.excepthook

    def hook(etype, value, tb):
        message = explain(value) if isinstance(value, Exception) else None
        if message is None:
            previous(etype, value, tb)
            return
        try:
            sys.stdout.flush()
        finally:
            print(error_line(message), file=sys.stderr, flush=True)
            os._exit(status)

    sys.excepthook = hook


class Stopped(Exception):
    """A notebook's program stopped where it needs what this machine lacks (see stop_here)."""


def stop_here(message: str, finish: Optional[Callable[[], Any]] = None) -> NoReturn:
    """Print ``message`` and stop the program: the rest of it needs what this machine lacks.

    ``finish`` runs first (a script's report, so that --json still prints).
    A script exits with status 0: it ran what the machine allows. In a
    notebook the cell stops with the message alone, and every later cell
    does nothing, so that a "run all" ends here instead of in NameErrors.
    """
    print(message, flush=True)
    if finish is not None:
        finish()
    if not in_kernel():
        raise SystemExit(0)
    ip = sys.modules["IPython"].get_ipython()
    ip.input_transformers_cleanup.append(lambda lines: [])
    ip.set_custom_exc((Stopped,), lambda *args, **kwargs: [])
    raise Stopped(message)


def no_gpu_reason(device_choice: str) -> str:
    """Why a script runs without a GPU: ``--device cpu`` if asked to, else ``No GPU``."""
    return "--device cpu" if device_choice == "cpu" else "No GPU"


def fitting_size(memory_bytes: Optional[int], size: int) -> int:
    """A --size below ``size`` at which OOM_MATRICES fp32 matrices fit in ``memory_bytes``, to 2
    significant digits (half of ``size`` where the memory is unknown)."""
    if not memory_bytes:
        return max(1, size // 2)
    fits = int(math.sqrt(memory_bytes / (4 * OOM_MATRICES)))
    step = 10 ** max(0, len(str(fits)) - 2)
    return max(1, min(size // 2, fits // step * step))


def oom_message(size: int, where: str = "", memory_bytes: Optional[int] = None) -> str:
    """The one-line out-of-memory message: names --size and suggests a smaller one, computed from
    the memory that the device reports (``memory_bytes``)."""
    gb = 4.0 * size * size / 1e9
    place = f" on {where}" if where else ""
    has = f"{where or 'the device'} has {memory_bytes / 1e9:.3g} GB, room for {OOM_MATRICES} matrices at " \
        if memory_bytes else ""
    return (f"out of memory{place} at --size {size} (one {size}x{size} fp32 matrix is {gb:.3g} GB); "
            f"try a smaller --size, e.g. --size {fitting_size(memory_bytes, size)}"
            + (f" ({has}that size)" if has else ""))
