"""The rpy2 conversions and the Python-first path into the R package (rternalize)."""

from pathlib import Path

import numpy as np
import pytest
import xarray as xr

import ldpest
from ldpest import rbridge

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("rpy2")
ro = rbridge._ro()  # not a bare import: see rbridge._ro on LD_LIBRARY_PATH


@pytest.fixture(scope="module")
def r_package():
    library = ROOT / ".rlib"
    if not (library / "ldpest").exists():
        pytest.fail("the R package is not installed in .rlib: run scripts/setup.sh --with-r")
    ro.r(f'.libPaths(c("{library}", .libPaths()))')
    rbridge.register_in_r()
    return ro


def test_dataarray_to_r_keeps_order_labels_and_attrs():
    array = xr.DataArray(np.arange(6.0).reshape(2, 3), dims=("age", "income"),
                         coords={"age": [20.5, 40.5], "income": ["lo", "mid", "hi"]}, attrs={"epsilon": 0.5, "n": 10})
    r_array = rbridge.dataarray_to_r(array)
    get = ro.r("function(x, i, j) x[i, j]")
    assert get(r_array, "40.5", "mid")[0] == 4.0  # R indexes by the same labels
    assert list(ro.r("function(x) names(dimnames(x))")(r_array)) == ["age", "income"]
    assert ro.r("function(x) attr(x, 'epsilon')")(r_array)[0] == 0.5
    back = rbridge.r_to_dataarray(r_array)
    assert back.dims == ("age", "income") and np.array_equal(back.values, array.values)
    assert list(back["income"].values) == ["lo", "mid", "hi"] and list(back["age"].values) == [20.5, 40.5]
    assert back.attrs == {"epsilon": 0.5, "n": 10}


def test_dataset_round_trip():
    ds = xr.Dataset({"density": (("x",), np.array([0.5, 1.5])), "stderr": (("x",), np.array([0.1, 0.2]))},
                    coords={"x": [0.25, 0.75]}, attrs={"mechanism": "laplace-histogram", "n": 7})
    back = rbridge.r_to_dataset(rbridge.dataset_to_r(ds))
    xr.testing.assert_equal(back, ds)
    assert back.attrs == {"mechanism": "laplace-histogram", "n": 7}


def test_r_values_to_python():
    convert = rbridge.r_to_python
    assert convert(ro.r("matrix(1:6, nrow = 2)")).tolist() == [[1, 3, 5], [2, 4, 6]]
    assert list(convert(ro.r('factor(c("b", "a", "b"))'))) == ["b", "a", "b"]
    assert convert(ro.r("list(a = 1, b = c('x', 'y'))"), whole_numbers_as_int=True)["a"].tolist() == [1]
    frame = convert(ro.r("data.frame(u = c(1.5, 2), v = c('p', 'q'))"))
    assert frame["u"].tolist() == [1.5, 2.0] and list(frame["v"]) == ["p", "q"]
    with pytest.raises(ldpest.ParameterError, match="NA"):
        convert(ro.r("c(1L, NA)"))


def test_result_to_r_is_an_array_with_the_attributes(r_package):
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b", "c"])
    result = ldpest.estimate(mech.privatize(["a", "b", "c", "a"] * 100, rng=1))
    r_result = rbridge.result_to_r(result)
    attr = ro.r("function(x, name) attr(x, name)")
    assert list(ro.r("function(x) dimnames(x)$category")(r_result)) == ["a", "b", "c"]
    assert attr(r_result, "n")[0] == 400 and attr(r_result, "estimator")[0] == "frequency"
    np.testing.assert_allclose(np.asarray(attr(r_result, "stderr")), result["stderr"].values)
    assert ro.r("function(x) inherits(x, 'ldp_estimate') && is.object(x)")(r_result)[0]


def test_python_first_call_into_the_r_package(r_package):
    """Jupyter-style: R functions called from rpy2's embedded R route back here via rternalize."""
    p = ro.r('ldpest::ldp_estimate(ldpest::ldp_privatize(rep(c("x", "y", "y"), 500), "laplace", epsilon = 1, '
             'categories = c("x", "y"), seed = 5))')
    assert list(ro.r("function(x) names(dimnames(x))")(p)) == ["category"]
    assert ro.r("function(x) attr(x, 'mechanism')")(p)[0] == "laplace"
    with pytest.raises(Exception, match="epsilon must be a finite number > 0"):
        ro.r('ldpest::ldp_privatize(c("x"), "laplace", epsilon = -2, categories = c("x", "y"))')


def test_embedding_r_does_not_break_child_pythons():
    """After rpy2 started R here, a spawned Python still starts (Dask workers, multiprocessing)."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", "import ssl, ldpest; print('ok')"], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
