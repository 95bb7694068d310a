"""Start-up of the command line (issue 12): `ldpest --help` and `ldpest estimate` on a 100-row file.

    .venv/bin/python bench/bench_startup.py

Prints the best of --repeat wall times of each command run as a fresh process, beside
`python -c pass` (the interpreter alone). Targets: --help under 0.3 s, the 100-row estimate
under 1 s.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LDPEST = str(Path(sys.executable).parent / "ldpest")


def best(command: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "answers.csv"
        data.write_text("answer\n" + "\n".join(["yes", "no", "no", "yes"] * 25) + "\n")
        rows = [
            ("python -c pass", [sys.executable, "-c", "pass"], None),
            ("python -c 'import ldpest'", [sys.executable, "-c", "import ldpest"], None),
            ("ldpest --help", [LDPEST, "--help"], 0.3),
            ("ldpest estimate (100 rows)", [LDPEST, "estimate", str(data), "-c", "answer", "-m", "randomized-response",
                                            "-e", "1", "--categories", "yes,no"], 1.0),
        ]
        print(f"{'command':<30}{'best s':>8}{'target s':>10}")
        for name, command, target in rows:
            seconds = best(command, args.repeat)
            print(f"{name:<30}{seconds:>8.3f}{target if target else '':>10}")


if __name__ == "__main__":
    main()
