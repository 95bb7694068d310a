"""The ``ldpest`` console script: imports the command line, so that Ctrl-C at any moment of the
start-up ends with one line and exit code 130 instead of a traceback."""

import sys


def main() -> None:
    try:
        from .cli import main as run_cli

        run_cli()
    except KeyboardInterrupt:
        sys.stderr.write("ldpest: interrupted\n")
        sys.exit(130)
