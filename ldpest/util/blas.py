"""One BLAS thread for many small dense solves (docs/benchmarks.md, "Small linear algebra on one BLAS thread").

OpenBLAS hands even a 100 x 100 solve to its worker threads. Where solves of that size alternate with other
numpy work (projected Newton, Stein's risk estimates), waking the workers can cost far more than the solve:
``auto`` on Hadamard response's flat statistics at d = 100, epsilon 4 took a median of 10.7 ms with spikes
to 0.16-0.2 s, against 6.4-6.9 ms and at most 16 ms on one thread (bench/bench_blas_threads.py).
:func:`one_blas_thread` limits every loaded BLAS (numpy's and scipy's OpenBLAS) to one thread for a block of
code, through threadpoolctl, and restores them after.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TypeVar

_controllers: dict[bool, object] = {}
Function = TypeVar("Function", bound=Callable)


def one_blas_thread():
    """A context manager: every BLAS library loaded so far runs on one thread inside it (about 13 us to
    enter and leave). The libraries are looked up once, and again once scipy.linalg, which brings its own
    OpenBLAS, has been imported."""
    with_scipy = "scipy.linalg" in sys.modules
    controller = _controllers.get(with_scipy)
    if controller is None:
        from threadpoolctl import ThreadpoolController  # here: workers that only reduce reports never need it

        controller = _controllers[with_scipy] = ThreadpoolController()
    return controller.limit(limits=1, user_api="blas")


def on_one_blas_thread(function: Function) -> Function:
    """``function`` run inside :func:`one_blas_thread`."""

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with one_blas_thread():
            return function(*args, **kwargs)

    return wrapper  # type: ignore[return-value]
