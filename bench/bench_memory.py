"""Peak memory of `ldpest estimate` on a CSV of 10^8 reports (issue 7: under 1 GiB RSS).

Writes the file once (randomized-response labels over 10 categories, about
0.6 GB) to bench/.data/, then runs the CLI in a subprocess and reads its peak
resident set size from getrusage.

    .venv/bin/python bench/bench_memory.py [--n 100000000]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

HERE = Path(__file__).resolve().parent
CATEGORIES = [f"c{i}" for i in range(10)]


def write_reports(path: Path, n: int, chunk: int = 10 ** 7) -> None:
    rng = np.random.default_rng(0)
    dictionary = pa.array(CATEGORIES)
    with path.open("wb") as handle:
        handle.write(b"answer\n")
        for start in range(0, n, chunk):
            size = min(chunk, n - start)
            codes = pa.array(rng.integers(0, len(CATEGORIES), size).astype(np.int32))
            labels = pa.DictionaryArray.from_arrays(codes, dictionary).cast(pa.string())
            pacsv.write_csv(pa.table({"answer": labels}), handle,
                            write_options=pacsv.WriteOptions(include_header=False, quoting_style="none"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10 ** 8)
    args = parser.parse_args(argv)
    path = HERE / ".data" / f"rr-{args.n}.csv"
    path.parent.mkdir(exist_ok=True)
    if not path.exists():
        start = time.perf_counter()
        write_reports(path, args.n)
        print(f"wrote {path} ({path.stat().st_size / 2 ** 30:.2f} GiB) in {time.perf_counter() - start:.0f} s")
    ldpest_cli = Path(sys.executable).parent / "ldpest"
    command = [str(ldpest_cli), "estimate", str(path), "--column", "answer", "--mechanism", "randomized-response",
               "--epsilon", "1", "--categories", ",".join(CATEGORIES), "--no-progress"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(done.stdout.strip().splitlines()[0] if done.returncode == 0 else done.stderr)
    print(f"n = {args.n}: {seconds:.1f} s ({args.n / seconds:.3g} reports/s), peak RSS {peak_kib / 2 ** 20:.3f} GiB "
          f"(target < 1 GiB)")
    return done.returncode


if __name__ == "__main__":
    sys.exit(main())
