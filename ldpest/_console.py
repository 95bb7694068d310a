"""The ``ldpest`` console script: imports the command line, so that Ctrl-C at any moment of the
start-up ends with one line and exit code 130 instead of a traceback, also when it lands inside a
compiled module's import (see :mod:`ldpest.util.interrupt`)."""

import sys

from .util.interrupt import record_sigint, was_interrupted


def main() -> None:
    record_sigint()
    try:
        from .cli import main as run_cli

        run_cli()
    except Exception as exc:
        if not was_interrupted(exc):
            raise
        _interrupted()
    except KeyboardInterrupt:
        _interrupted()


def _interrupted():
    sys.stderr.write("ldpest: interrupted\n")
    sys.exit(130)
