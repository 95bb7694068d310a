"""What a just-in-time compiled kernel would cost a fresh process before it saves anything (issue 28: "a compiled
kernel would be the next step" for privatise; numba is the registry's way to one).

It times, in fresh processes: importing numpy, importing numba, the first call of a small ``@njit(cache=True)``
kernel (loading it from numba's cache, after a first process compiled it) and the second call.  ldpest does not
depend on numba; run this with a Python that has it, e.g.

    python3 -m venv /tmp/jit && /tmp/jit/bin/pip install numba "numpy==2.4.6"    # the project's numpy
    /tmp/jit/bin/python bench/bench_jit_startup.py --runs 3
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

KERNEL = '''
import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def kernel(words, threshold, table, out):
    for i in range(words.shape[0]):
        word = words[i]
        out[i] = table[word & 15] if word < threshold else table[(word >> 4) & 15]
    return out
'''

PROBE = '''
import sys, time
sys.path.insert(0, sys.argv[1])
start = time.perf_counter()
import numpy as np
numpy_done = time.perf_counter()
import jit_kernel
numba_done = time.perf_counter()
words = np.random.default_rng(1).bit_generator.random_raw(10)
out = np.empty(10, np.int32)
jit_kernel.kernel(words, np.uint64(2 ** 63), np.arange(16, dtype=np.int32), out)
first_done = time.perf_counter()
jit_kernel.kernel(words, np.uint64(2 ** 63), np.arange(16, dtype=np.int32), out)
second_done = time.perf_counter()
print(f"{1e3 * (numpy_done - start):8.1f} {1e3 * (numba_done - numpy_done):8.1f} "
      f"{1e3 * (first_done - numba_done):8.1f} {1e6 * (second_done - first_done):8.1f}")
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "jit_kernel.py").write_text(KERNEL)
        subprocess.run([sys.executable, "-c", PROBE, folder], check=True, capture_output=True)  # compiles, caches
        import numba  # noqa: F401  (fails here, with a clear error, where numba is missing)

        print(f"numba {sys.modules['numba'].__version__}; fresh processes, the kernel already in numba's cache")
        print(f"{'numpy ms':>8} {'numba ms':>8} {'1st call ms':>8} {'2nd call us':>8}")
        for _ in range(args.runs):
            print(subprocess.run([sys.executable, "-c", PROBE, folder], check=True, capture_output=True,
                                 text=True).stdout.rstrip())


if __name__ == "__main__":
    main()
