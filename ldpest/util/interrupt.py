"""Ctrl-C that arrives while a compiled module is being imported reaches Python as that module's
``ImportError`` ("initialization failed"), not as ``KeyboardInterrupt``. The console script installs
:func:`record_sigint` so that such an error is still reported as an interruption (exit code 130)."""

import signal

_sigint_received = False


def _on_sigint(signum, frame):
    global _sigint_received
    _sigint_received = True
    raise KeyboardInterrupt


def record_sigint() -> None:
    """Install a SIGINT handler that behaves like Python's default one and remembers that it fired."""
    signal.signal(signal.SIGINT, _on_sigint)


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
