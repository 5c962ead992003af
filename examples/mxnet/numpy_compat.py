"""Let MXNet 1.9.1 (the last release) import under numpy >= 1.24.

MXNet binds numpy names at import time that numpy 1.24 and 2.x removed.
``restore(numpy)`` puts back only the names that are missing, and does nothing
on numpy < 1.24, where MXNet imports cleanly. Import this module (helpers.py
does) before ``import mxnet``. On Python 3.12+ MXNet also needs ``distutils``,
which the ``setuptools`` package brings back; this module does not touch it.
"""
import builtins
import math
import sys
import types
import warnings


def _removed(name):
    def stub(*args, **kwargs):
        raise NotImplementedError(f"numpy.{name} was removed from numpy; "
                                  "use the numpy_financial package")
    stub.__name__ = name
    return stub


def _replacements(numpy):
    """The removed names and what stands in for each (the current equivalent)."""
    return {
        "bool": builtins.bool,
        "PZERO": 0.0, "NZERO": -0.0,
        "PINF": math.inf, "NINF": -math.inf, "Inf": math.inf,
        "NAN": math.nan, "NaN": math.nan,
        "alltrue": numpy.all, "sometrue": numpy.any,
        "round_": numpy.round, "product": numpy.prod,
        "in1d": numpy.isin,
        "msort": lambda a: numpy.sort(a, axis=0),
        "trapz": getattr(numpy, "trapezoid", None),
        # The financial functions moved to numpy_financial in numpy 1.20.
        **{name: _removed(name) for name in ("mirr", "npv", "pmt", "ppmt", "pv", "rate")},
    }


def _version(numpy):
    return tuple(int(part) for part in numpy.__version__.split(".")[:2])


def _has(numpy, name):
    """hasattr(numpy, name), without the FutureWarning that numpy 1.24 to 1.26 give when asked for
    the removed ``numpy.bool`` ("In the future np.bool will be defined as ...")."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return hasattr(numpy, name)


def restore(numpy=None):
    """Restore the missing names on ``numpy``; return the list of names set."""
    if numpy is None:
        import numpy
    if _version(numpy) < (1, 24):
        return []
    restored = []
    for name, value in _replacements(numpy).items():
        if value is not None and not _has(numpy, name):
            setattr(numpy, name, value)
            restored.append(name)
    # numpy.compat (gone in 2.0) is read by mxnet's np.pad for ``basestring``.
    compat = getattr(numpy, "compat", None)
    if compat is None:
        compat = types.ModuleType(numpy.__name__ + ".compat")
        setattr(numpy, "compat", compat)
        sys.modules.setdefault(compat.__name__, compat)
    if not hasattr(compat, "basestring"):
        compat.basestring = str
        restored.append("compat.basestring")
    return restored
