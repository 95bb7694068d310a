"""Small dense linear algebra runs on one BLAS thread (ldpest/util/blas.py; docs/benchmarks.md, "Small linear
algebra on one BLAS thread")."""

import warnings

import numpy as np
import scipy.linalg  # noqa: F401  (its OpenBLAS is loaded, so both libraries are checked)
from threadpoolctl import ThreadpoolController

import ldpest
from ldpest.util.blas import one_blas_thread


def _blas_threads() -> list[int]:
    return [library["num_threads"] for library in ThreadpoolController().info() if library["user_api"] == "blas"]


def test_every_blas_runs_on_one_thread_inside_and_as_before_after():
    controller = ThreadpoolController()
    with controller.limit(limits=2, user_api="blas"):
        before = _blas_threads()
        assert len(before) >= 1 and set(before) == {2}
        with one_blas_thread():
            assert set(_blas_threads()) == {1}
        assert _blas_threads() == before


def test_auto_and_the_mle_run_on_one_blas_thread(monkeypatch):
    """The chooser and the count MLE run inside the limit (with two threads outside, so that a missing limit
    shows)."""
    import ldpest_multinomial.estimator as estimator_module
    from ldpest_multinomial.hadamard import HadamardResponse

    seen = []
    shrink, mle = estimator_module.shrink_to_uniform, HadamardResponse.frequency_mle

    def recording_shrink(*args, **kwargs):
        seen.append(("auto", set(_blas_threads())))
        return shrink(*args, **kwargs)

    def recording_mle(self, stats, n):
        seen.append(("mle", set(_blas_threads())))
        return mle(self, stats, n)

    monkeypatch.setattr(estimator_module, "shrink_to_uniform", recording_shrink)
    monkeypatch.setattr(HadamardResponse, "frequency_mle", recording_mle)
    mechanism = ldpest.mechanism("hadamard-response", epsilon=4.0, categories=list(range(20)))
    stats = ldpest.estimator("frequency").simulate(mechanism, np.full(20, 0.05), 1000, np.random.default_rng(0))
    with ThreadpoolController().limit(limits=2, user_api="blas"), warnings.catch_warnings():
        warnings.simplefilter("ignore", ldpest.EstimateWarning)
        for projection in ("auto", "mle"):
            ldpest.estimator("frequency", projection=projection).finalize(stats)
    assert {what for what, _ in seen} == {"auto", "mle"}
    assert all(threads == {1} for _, threads in seen), seen
