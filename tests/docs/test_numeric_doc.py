"""docs/numeric.md: its examples run as written, and its table is the closed forms'."""

import re
from pathlib import Path

import pytest

from ldpest_numeric.lattice import continuous_duchi_variance, continuous_hybrid_variance, continuous_piecewise_variance

PAGE = Path(__file__).resolve().parents[2] / "docs" / "numeric.md"


@pytest.mark.parametrize("marker", ["latency = ", "age = "])
def test_each_example_runs(marker, capsys):
    example = next(b for b in re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S) if marker in b)
    exec(compile(example, str(PAGE), "exec"), {"__name__": "numeric_doc"})
    assert capsys.readouterr().out.strip()


def test_the_variance_example_runs_after_the_telemetry_one(capsys):
    blocks = re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
    namespace = {"__name__": "numeric_doc"}
    for marker in ("latency = ", "spread = "):
        exec(compile(next(b for b in blocks if marker in b), str(PAGE), "exec"), namespace)
    spread, latency = namespace["spread"], namespace["latency"]
    assert spread["variance"].attrs["units"] == "ms^2"
    assert abs(float(spread["unprojected"]) - latency.var()) < 5 * float(spread["stderr"])
    assert float(spread["lower"]) < float(spread["upper"])


def test_the_variance_table_is_the_closed_forms():
    first_section = PAGE.read_text().split("## What each report is")[0]
    rows = re.findall(r"^\| (\d+(?:\.\d+)?) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", first_section, flags=re.M)
    assert len(rows) == 5
    for epsilon, *shown in rows:
        for text, form in zip(shown, (continuous_duchi_variance, continuous_piecewise_variance,
                                      continuous_hybrid_variance), strict=True):
            digits = len(text.split(".")[1])
            assert round(form(float(epsilon)), digits) == float(text)


def test_the_ranges_example_runs(capsys):
    example = next(b for b in re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
                   if "hierarchical-histogram" in b)
    exec(compile(example, str(PAGE), "exec"), {"__name__": "numeric_doc"})
    assert "P(latency >= 200 ms)" in capsys.readouterr().out


def test_the_multidimensional_example_runs(capsys):
    example = next(b for b in re.findall(r"```python\n(.*?)```", PAGE.read_text(), flags=re.S)
                   if "multidimensional" in b)
    exec(compile(example, str(PAGE), "exec"), {"__name__": "numeric_doc"})
    assert "latency" in capsys.readouterr().out
