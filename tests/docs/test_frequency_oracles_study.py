"""The study behind docs/frequency-oracles.md runs and draws both figures."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "docs" / "studies"))
import frequency_oracles as study  # noqa: E402


def test_quick_study_draws_both_figures(tmp_path):
    study.main(["--quick", "--out", str(tmp_path)])
    for name in ("frequency-oracles-mse.png", "frequency-oracles-winner.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_monte_carlo_error_of_the_study_matches_the_declared_variance():
    """The study's measured points estimate the declared figure (5 standard errors)."""
    import numpy as np

    import ldpest

    mech = ldpest.mechanism("subset-selection", epsilon=1.0, categories=list(range(10)))
    mean, se = study.measured("subset-selection", 10, 1.0, 300, 400, np.random.default_rng(3))
    assert abs(mean - mech.worst_case_variance()) < 5 * se
