"""Ctrl-C that arrives while a compiled module is being imported reaches Python as that module's
``ImportError`` ("initialization failed"), not as ``KeyboardInterrupt``. The console script installs
:func:`record_sigint` so that such an error is still reported as an interruption (exit code 130).

Ctrl-C can also land where Python cannot raise it: inside a callback or a destructor (importlib's module
lock callback, for one), where the interpreter prints "Exception ignored in ..." with a traceback and
goes on. :func:`record_sigint` keeps such an interruption quiet but remembered, and
:func:`raise_if_interrupted`, called before an output file is moved into place, turns it back into
``KeyboardInterrupt``, so that the command still ends with exit code 130 and leaves no file."""

import signal
import sys

_sigint_received = False


def _on_sigint(signum, frame):
    global _sigint_received
    _sigint_received = True
    raise KeyboardInterrupt


def record_sigint() -> None:
    """Install a SIGINT handler that behaves like Python's default one and remembers that it fired, and an
    unraisable-exception hook that does not print a ``KeyboardInterrupt`` that Python could not raise."""
    signal.signal(signal.SIGINT, _on_sigint)
    sys.unraisablehook = _quiet_about_interrupts(sys.unraisablehook)


def _quiet_about_interrupts(hook):
    def unraisable(info):
        if info.exc_type is not None and issubclass(info.exc_type, KeyboardInterrupt):
            return  # remembered by _on_sigint; raise_if_interrupted raises it again where it can
        hook(info)
    return unraisable


def raise_if_interrupted() -> None:
    """``KeyboardInterrupt`` if Ctrl-C arrived during this run (also where Python could not raise it)."""
    if _sigint_received:
        raise KeyboardInterrupt


def was_interrupted(exc: BaseException | None = None) -> bool:
    """Whether ``exc`` was caused by Ctrl-C (a ``KeyboardInterrupt`` in its chain), or Ctrl-C arrived
    during this run at all."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return _sigint_received
