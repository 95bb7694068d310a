"""Results of any statistic and their pictures, and how a mechanism finds its family (issue 22)."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import ldpest  # noqa: E402
from ldpest.contract.results import build_dataset  # noqa: E402
from ldpest.io.result_files import result_table  # noqa: E402
from ldpest.plotting import draw_result  # noqa: E402
from ldpest_multinomial.mechanisms import RandomizedResponse  # noqa: E402


def result_of(parts):
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b"])
    return build_dataset(parts, mechanism=mech, estimator=ldpest.estimator("frequency"), n=100)


def legend(figure):
    return [text.get_text() for ax in figure.axes if ax.get_legend() for text in ax.get_legend().get_texts()]


def test_quantiles_are_points_with_whiskers_of_their_own():
    levels = np.array([0.1, 0.5, 0.9])
    result = result_of(ldpest.EstimateParts(variable="quantile", estimate=np.array([1.0, 4.0, 9.0]),
                                            stderr=np.array([0.3, 0.2, 0.5]), dims=("level",),
                                            coords={"level": levels}, units="ms", stderr_method="bootstrap"))
    assert result["quantile"].attrs["units"] == "ms" and result["stderr"].attrs["units"] == "ms"
    assert result["stderr"].attrs["estimate"] == "quantile" and result["stderr"].attrs["method"] == "bootstrap"
    with_ci = ldpest.confidence_interval(result)
    assert with_ci["lower"].attrs["estimate"] == "quantile" and with_ci["lower"].attrs["method"] == "normal"
    figure = draw_result(result)
    assert legend(figure) == ["quantile; quantile, 95% interval (normal)"]
    assert figure.axes[0].get_ylabel() == "quantile [ms]"
    plt.close(figure)
    assert list(result_table(with_ci)["level"]) == [0.1, 0.5, 0.9]


def test_a_band_is_drawn_around_the_estimate_it_belongs_to():
    grid = np.linspace(0, 1, 20)
    projected = {"variable": "cdf", "estimate": grid.copy(), "stderr": np.full(20, 0.05), "dims": ("x",),
                     "coords": {"x": grid}, "projection": "monotone", "unprojected": grid + 0.01}
    figure = draw_result(result_of(ldpest.EstimateParts(**projected)))
    assert legend(figure) == ["cdf (monotone projection)", "unprojected",
                              "unprojected, 95% interval (normal)"]
    plt.close(figure)
    own = ldpest.EstimateParts(**projected, uncertainty_of="cdf", stderr_method="bootstrap")
    figure = draw_result(result_of(own))
    assert legend(figure) == ["cdf (monotone projection)", "cdf, 95% interval (normal)"]  # no unprojected band
    plt.close(figure)


def test_a_0d_result_has_a_one_row_table_and_a_point():
    result = ldpest.confidence_interval(result_of(ldpest.EstimateParts(
        variable="variance", estimate=np.array(2.5), stderr=np.array(0.4), units="s2")))
    table = result_table(result)
    assert list(table.columns) == ["variance", "stderr", "lower", "upper"] and len(table) == 1
    assert result["variance"].attrs["long_name"] == "estimated variance"
    figure = draw_result(result)
    assert figure.axes[0].get_xticklabels()[0].get_text() == "variance"
    plt.close(figure)


def test_uncertainty_of_must_name_the_estimate_or_unprojected():
    with pytest.raises(ldpest.ParameterError, match="uncertainty_of"):
        result_of(ldpest.EstimateParts(variable="mean", estimate=np.array(1.0), stderr=np.array(0.1),
                                       uncertainty_of="count"))
    with pytest.raises(ldpest.ParameterError, match="hold no unprojected"):
        result_of(ldpest.EstimateParts(variable="mean", estimate=np.array(1.0), stderr=np.array(0.1),
                                       uncertainty_of="unprojected"))


class LegacyResponse(RandomizedResponse):
    """A plugin written before families: its family name is its own, and no plugin registers it."""

    name = "legacy-response"
    family = "legacy"


class Nameless(ldpest.Mechanism):
    name = "nameless-family"
    family = "unregistered"

    def __init__(self, *, epsilon):
        self._set_params(epsilon=epsilon)

    def encode_data(self, data):
        return np.asarray(data)

    def _privatize(self, encoded, rng):
        return encoded

    def encode_reports(self, values):
        return np.asarray(values)


def test_a_mechanism_finds_its_family_or_the_built_in_one_it_resembles_or_a_clear_error():
    assert ldpest.family_of(ldpest.mechanism("laplace-histogram", epsilon=1.0, low=[0], high=[1], bins=3)).name \
        == "histogram"
    assert ldpest.family_of(LegacyResponse(epsilon=1.0, categories=["a", "b"])).name == "multinomial"
    with pytest.raises(ldpest.ParameterError, match="register an ldpest.Family"):
        ldpest.family_of(Nameless(epsilon=1.0))


def test_families_are_listed_as_plugins():
    families = {(p.name, p.family) for p in ldpest.plugins() if p.kind == "family"}
    assert {("multinomial", "multinomial"), ("histogram", "histogram"), ("series", "series")} <= families
