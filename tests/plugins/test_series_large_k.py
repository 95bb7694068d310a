"""linf-sampling with a large k (issue 26) ran for minutes with no message (k = 10^4: 37 s, 10^6:
over 9 min). The series estimator needs the k x k covariance of the reports (8 k^2 bytes) and its
eigendecomposition, so k is capped at MAX_K = 4096 with a message, before any report is made."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ldpest
from ldpest_series.mechanisms import MAX_K

LDPEST = str(Path(sys.executable).with_name("ldpest"))


@pytest.mark.parametrize("name", ["linf-sampling", "laplace-series"])
@pytest.mark.parametrize("k", [MAX_K + 1, 10 ** 4, 10 ** 6])
def test_k_above_the_cap_is_refused_with_the_cost_named(name, k):
    with pytest.raises(ldpest.ParameterError, match=rf"k = {k} is more basis functions than the series estimator "
                                                    rf"serves \(k <= {MAX_K}\).*GiB.*k='auto'"):
        ldpest.mechanism(name, epsilon=1.0, basis="trigonometric", k=k)


def test_the_cap_itself_privatises_and_auto_never_exceeds_it():
    at_cap = ldpest.mechanism("linf-sampling", epsilon=1.0, basis="trigonometric", k=MAX_K)
    assert at_cap.privatize(np.linspace(0.1, 0.9, 10), rng=1).values.shape == (10, MAX_K)
    huge_n = ldpest.mechanism("linf-sampling", epsilon=5.0, basis="trigonometric", k="auto", expected_n=10 ** 12,
                              smoothness=0.5)
    assert huge_n.k == MAX_K
    assert huge_n.params["k"] == "auto"


def test_the_command_line_says_so_and_writes_nothing(tmp_path):
    data = tmp_path / "x.csv"
    data.write_text("x\n" + "\n".join(str(v) for v in np.linspace(0.05, 0.95, 50)) + "\n")
    done = subprocess.run([LDPEST, "privatize", str(data), "-c", "x", "-m", "linf-sampling", "-e", "1", "-p",
                           'basis="trigonometric"', "-p", "k=100000", "-o", str(tmp_path / "r.nc")],
                          capture_output=True, text=True)
    assert done.returncode == 2 and "k = 100000 is more basis functions" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "r.nc").exists()
