"""The R bridge: conversions between xarray and R objects, and the dispatcher
the R package calls (extra ``r``: rpy2).  See r-bindings/README.md.

Two ways in, one code path:

* **R started first** (``library(ldpest)`` in R or Rscript): the R package puts
  the call's arguments in its environment ``ldpest:::.bridge`` and asks Python,
  through reticulate, to run ``ldpest.rbridge.dispatch(name)``, passing only
  the function name.  Here rpy2, attached to the running R, reads the
  arguments and writes the result (or the error message) back into
  ``.bridge``; no array crosses reticulate (its NumPy 1 ABI cannot read
  numpy 2 arrays).
* **Python started first** (a script, Jupyter's ``%%R``): :func:`register_in_r`
  loads the R package in rpy2's embedded R and registers :func:`dispatch`
  there with ``rternalize``; the R functions then call it directly.

Conversions (also usable on their own):

* :func:`dataarray_to_r` / :func:`r_to_dataarray`: ``xarray.DataArray`` <-> R
  array with ``dim``, named ``dimnames`` (the dims) and the attrs as R
  attributes;
* :func:`dataset_to_r` / :func:`r_to_dataset`: a Dataset <-> an R named list of
  such arrays with the Dataset's attrs in attribute ``attrs``;
* :func:`result_to_r`: an estimate as the R user sees it: the estimate array
  with dimnames, and attributes ``stderr``, ``unprojected``, ``count``, ``lower``,
  ``upper``, ``epsilon``, ``n``, ``estimator``, ``mechanism``, ``projection``,
  ``mechanism_spec`` and ``result_json`` (the whole result, for ``confint`` at another
  level); the R methods compute every table from these values.
* Numbers cross as one block of memory, labels as factors (:func:`_factor`); an R factor
  arrives as a ``pandas.Categorical``.
"""

from __future__ import annotations

import atexit
import json
import traceback

import numpy as np
import scipy.stats  # noqa: F401  (R CMD check's embedded R aborts in rpy2 without it: issue 13's GIL crash)

from .util.errors import DataError, LdpestError, ParameterError
from .util.xarray import xr

_registered = []  # keeps the rternalized dispatcher alive (R would call freed memory otherwise)


def _release_at_exit() -> None:
    """Free R objects while rpy2's modules still exist (else their finalizers fail at exit)."""
    import gc

    _registered.clear()
    gc.collect()


atexit.register(_release_at_exit)


def _ro():
    """rpy2.robjects, imported without leaking R's library path into child processes.

    Starting embedded R prepends R's ``ldpaths`` (which include the system's
    library folder) to LD_LIBRARY_PATH; a Python started afterwards by this
    process (a Dask worker, multiprocessing) would then load the system's
    libpython instead of its own and fail.  The running process is not
    affected by the variable (the loader read it at start-up), so it is restored.
    """
    import os

    before = os.environ.get("LD_LIBRARY_PATH")
    try:
        import rpy2.robjects as ro
    except ImportError:  # pragma: no cover - depends on the environment
        raise ParameterError("the R bridge needs rpy2: pip install 'ldpest[r]'") from None
    finally:
        if before is None:
            os.environ.pop("LD_LIBRARY_PATH", None)
        else:
            os.environ["LD_LIBRARY_PATH"] = before
    return ro


# -- Python -> R ---------------------------------------------------------------------
def _vector(values):
    """An R vector of ``values`` in R's column-major order; numbers are copied as one block of
    memory (no Python object per element: 10^6 values in milliseconds)."""
    ro = _ro()
    import rpy2.rinterface as ri

    values = np.asarray(values)
    flat = values.ravel(order="F")
    if values.dtype.kind == "b":
        return ro.BoolVector(flat.tolist())
    if values.dtype.kind in "iu" and (flat.size == 0 or (flat.min() > -2 ** 31 and flat.max() < 2 ** 31)):
        return ro.vectors.IntVector(ri.IntSexpVector.from_memoryview(memoryview(flat.astype(np.int32))))
    if values.dtype.kind in "iu" and np.abs(flat.astype(np.float64)).max() >= 2.0 ** 53:
        raise ParameterError("integers beyond 2^53 cannot be represented in R")
    if values.dtype.kind in "iuf":
        return ro.vectors.FloatVector(ri.FloatSexpVector.from_memoryview(memoryview(
            np.ascontiguousarray(flat, dtype=np.float64))))
    return ro.StrVector([str(v) for v in flat.tolist()])


def _factor(codes, levels):
    """An R factor from 0-based ``codes`` into ``levels`` (the strings cross once each)."""
    ro = _ro()
    factor = _vector(np.asarray(codes, dtype=np.int64) + 1)
    factor.do_slot_assign("levels", ro.StrVector([str(level) for level in levels]))
    return _classed(factor, "factor")


def _label(value) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.10g}"
    return str(value)


def _r_value(value):
    """A scalar, list or array attribute value as an R object."""
    ro = _ro()
    if isinstance(value, str):
        return ro.StrVector([value])
    if isinstance(value, (bool, np.bool_)):
        return ro.BoolVector([bool(value)])
    if isinstance(value, (int, np.integer)):
        return ro.IntVector([int(value)]) if abs(int(value)) < 2 ** 31 else ro.FloatVector([float(value)])
    if isinstance(value, (float, np.floating)):
        return ro.FloatVector([float(value)])
    return _vector(np.asarray(value))


def dataarray_to_r(array: xr.DataArray):
    """An R array: values in R's column-major order, dimnames named after the dims, attrs as attributes."""
    ro = _ro()
    r_array = _vector(array.values)
    if array.ndim == 0:  # a single number (a mean): an R scalar, no dim
        for key, value in array.attrs.items():
            r_array.do_slot_assign(str(key), _r_value(value))
        return r_array
    r_array.do_slot_assign("dim", ro.IntVector(list(array.shape)))
    names = ro.ListVector.from_length(array.ndim)
    for i, dim in enumerate(array.dims):
        labels = array[dim].values if dim in array.coords else np.arange(1, array.sizes[dim] + 1)
        names[i] = ro.StrVector([_label(v) for v in labels])
    names.do_slot_assign("names", ro.StrVector(list(array.dims)))
    r_array.do_slot_assign("dimnames", names)
    for key, value in array.attrs.items():
        r_array.do_slot_assign(str(key), _r_value(value))
    return r_array


def _attrs_to_r(attrs: dict):
    ro = _ro()
    return ro.ListVector([(str(k), _r_value(v)) for k, v in attrs.items()])


def dataset_to_r(dataset: xr.Dataset):
    """An R named list of arrays (one per data variable), the attrs in attribute ``attrs``."""
    ro = _ro()
    out = ro.ListVector([(name, dataarray_to_r(dataset[name])) for name in dataset.data_vars])
    out.do_slot_assign("attrs", _attrs_to_r(dataset.attrs))
    return out


def table_to_r(frame):
    """A pandas DataFrame as an R data.frame with row names 1..n."""
    ro = _ro()
    columns = {}
    for name in frame.columns:
        values = frame[name].to_numpy()
        columns[str(name)] = _vector(values) if values.dtype.kind in "biuf" else ro.StrVector([str(v) for v in values])
    return ro.DataFrame(columns)


def result_to_r(result: xr.Dataset):
    """An estimate as an R array with dimnames and the attributes listed in the module doc."""
    from .contract.results import estimate_variable

    name = estimate_variable(result)
    main = result[name].copy()
    main.attrs = {}
    r_array = dataarray_to_r(main)
    for extra in ("stderr", "unprojected", "count", "mass", "coefficient", "coefficient_stderr", "lower", "upper"):
        if extra in result:
            plain = result[extra].copy()
            plain.attrs = {}
            r_array.do_slot_assign(extra, dataarray_to_r(plain))
    for key, value in result.attrs.items():
        r_array.do_slot_assign(str(key), _r_value(value))
    for key in ("units", "long_name"):
        if key in result[name].attrs:
            r_array.do_slot_assign(key, _r_value(result[name].attrs[key]))
    if "stderr" in result:
        r_array.do_slot_assign("stderr_of", _r_value(result["stderr"].attrs.get("estimate", name)))
    r_array.do_slot_assign("result_json", _ro().StrVector([_result_json(result)]))
    return _classed(r_array, "ldp_estimate")


def _result_json(result: xr.Dataset) -> str:
    from .io.result_files import json_default

    return json.dumps(result.to_dict(data="list"), default=json_default)


def _classed(obj, name: str):
    """Set an S3 class the way R does (class<- also sets the object bit)."""
    ro = _ro()
    return ro.baseenv["class<-"](obj, ro.StrVector([name]))


# -- R -> Python -----------------------------------------------------------------------
def _attribute(obj, name):
    ro = _ro()
    value = ro.baseenv["attr"](obj, name)
    return None if value is ro.NULL or isinstance(value, type(ro.NULL)) else value


def r_to_python(obj, *, whole_numbers_as_int: bool = False):
    """R vectors, matrices, factors, lists and data.frames as Python/numpy values."""
    ro = _ro()
    from rpy2.rinterface import NULLType

    if isinstance(obj, NULLType):
        return None
    if isinstance(obj, ro.vectors.DataFrame):
        return {str(name): r_to_python(obj.rx2(name)) for name in obj.names}
    if isinstance(obj, ro.vectors.ListVector):
        values = [r_to_python(v, whole_numbers_as_int=whole_numbers_as_int) for v in obj]
        names = obj.names
        if names is not ro.NULL and not isinstance(names, NULLType) and all(str(n) for n in names):
            return {str(n): v for n, v in zip(names, values, strict=True)}
        return values
    levels = _attribute(obj, "levels")
    if levels is not None:  # a factor: categorical labels without one Python string per element
        import pandas as pd

        codes = np.asarray(obj, dtype=np.int64)
        if (codes < 1).any():
            raise ParameterError("factor values are NA")
        return pd.Categorical.from_codes(codes - 1, categories=list(levels))
    if isinstance(obj, ro.vectors.StrVector):
        values = np.asarray(list(obj), dtype=object)
    elif isinstance(obj, ro.vectors.BoolVector):
        values = np.asarray(list(obj), dtype=bool)
    elif isinstance(obj, ro.vectors.IntVector):
        values = np.asarray(obj, dtype=np.int64)
        if (values == -2 ** 31).any():
            raise ParameterError("integer values are NA")
    elif isinstance(obj, ro.vectors.FloatVector):
        values = np.asarray(obj, dtype=np.float64)
    else:
        raise ParameterError(f"cannot convert an R object of class {list(obj.rclass)} to Python")
    dim = _attribute(obj, "dim")
    if dim is not None:
        values = values.reshape([int(d) for d in dim], order="F")
    elif whole_numbers_as_int and values.dtype.kind == "f" and np.all(np.isfinite(values)) and \
            np.all(values == np.round(values)) and values.size:
        values = values.astype(np.int64)
    return values


def r_to_dataarray(obj) -> xr.DataArray:
    """An R array with named dimnames (and attributes) as a DataArray."""
    values = np.asarray(r_to_python(obj))
    dimnames = _attribute(obj, "dimnames")
    dims = [f"dim_{i}" for i in range(values.ndim)]
    coords = {}
    if dimnames is not None:
        names = list(dimnames.names) if dimnames.names is not _ro().NULL else dims
        dims = [str(n) if str(n) else dims[i] for i, n in enumerate(names)]
        for dim, labels in zip(dims, dimnames, strict=True):
            labels = list(labels)
            try:
                coords[dim] = np.asarray([float(v) for v in labels])
            except ValueError:
                coords[dim] = np.asarray(labels, dtype=object)
    attrs = {}
    for name in _ro().baseenv["names"](_ro().baseenv["attributes"](obj)):
        if name not in ("dim", "dimnames", "class", "names"):
            value = r_to_python(_attribute(obj, name))
            attrs[name] = value.item() if isinstance(value, np.ndarray) and value.size == 1 else value
    return xr.DataArray(values, dims=dims, coords=coords, attrs=attrs)


def r_to_dataset(obj) -> xr.Dataset:
    variables = {str(name): r_to_dataarray(obj.rx2(name)) for name in obj.names}
    dataset = xr.Dataset({name: (array.dims, array.values, array.attrs) for name, array in variables.items()},
                         coords={k: v for array in variables.values() for k, v in array.coords.items()})
    attrs = _attribute(obj, "attrs")
    if attrs is not None:
        for key, value in r_to_python(attrs).items():
            dataset.attrs[key] = value.item() if isinstance(value, np.ndarray) and value.size == 1 else value
    return dataset


# -- the calls the R package makes -------------------------------------------------------
def _params(args) -> dict:
    raw = args.get("params") or {}
    if isinstance(raw, list):
        raw = {}
    out = {}
    for key, value in raw.items():
        if isinstance(value, np.ndarray):
            value = value.tolist()
            if len(value) == 1 and key not in ("categories", "names", "center", "grid"):
                value = value[0]
        out[key] = value
    return out


def _reports_to_r(reports):
    ro = _ro()
    mechanism = reports.mechanism
    values = reports.values
    r_values = _factor(values, mechanism.categories) if mechanism.report_kind == "label" else _vector(values)
    if np.ndim(values) == 2:
        r_values.do_slot_assign("dim", ro.IntVector(list(np.shape(values))))
        dimnames = ro.ListVector.from_length(2)
        dimnames[1] = ro.StrVector(mechanism.report_columns())
        r_values.do_slot_assign("dimnames", dimnames)
    out = ro.ListVector([("values", r_values), ("spec", ro.StrVector([reports.spec_json])),
                         ("mechanism", ro.StrVector([mechanism.name])),
                         ("epsilon", ro.FloatVector([mechanism.epsilon])),
                         ("rng", ro.StrVector([reports.data.attrs.get("rng", "")]))])
    return _classed(out, "ldp_reports")


def _mechanism(args):
    from .contract.registry import mechanism_from_spec
    from .engine.api import mechanism

    if args.get("spec") is not None:
        return mechanism_from_spec(json.loads(str(np.asarray(args["spec"]).ravel()[0])))
    name = args.get("mechanism")
    if name is None:
        raise ParameterError("mechanism is needed")
    return mechanism(str(np.asarray(name).ravel()[0]), **_params(args))


def _data(values):
    import pandas as pd

    if isinstance(values, pd.Categorical):
        return values
    values = np.asarray(values)
    if values.dtype == object:
        try:
            return np.asarray(values.tolist(), dtype=float)
        except (TypeError, ValueError):
            return values
    return values


def call_plugins(args):
    from .contract.registry import plugins

    rows = [vars(p) for p in plugins()]
    import pandas as pd

    return table_to_r(pd.DataFrame(rows, columns=["name", "kind", "family", "origin", "version"]))


def _with_data_defaults(args) -> dict:
    """Defaults an R user expects: a factor's levels are the categories, a data.frame's column
    names name the result's dims (for mechanisms that take them)."""
    from .contract.registry import get_registry, parameters_of

    if args.get("spec") is not None or args.get("mechanism") is None:
        return args
    params = dict(args.get("params") or {})
    name = str(np.asarray(args["mechanism"]).ravel()[0])
    if name == "auto":  # the chooser takes epsilon and categories
        takes = {"epsilon", "categories"}
    else:
        try:
            required, optional = parameters_of(get_registry().get("mechanism", name))
        except LdpestError:
            return args  # the call itself names the unknown mechanism
        takes = set(required + optional)
    if args.get("levels") is not None and "categories" in takes and "categories" not in params:
        params["categories"] = [str(v) for v in np.asarray(args["levels"]).ravel()]
    if args.get("columns") is not None and "names" in takes and "names" not in params:
        params["names"] = [str(v) for v in np.asarray(args["columns"]).ravel()]
    return {**args, "params": params}


def _labels_for(values, mechanism, codes: str = "labels"):
    """R factor levels are strings: read them as integers where integers are meant (integer
    categories, or 0-/1-based category codes)."""
    import pandas as pd

    categories = getattr(mechanism, "categories", None)
    if categories and isinstance(values, pd.Categorical) and all(type(c) is bool for c in categories):
        truth = {"true": True, "false": False}  # R's logicals cross as "TRUE"/"FALSE", reports as "True"/"False"
        if all(str(level).lower() in truth for level in values.categories):
            return values.rename_categories([truth[str(level).lower()] for level in values.categories])
        return values
    integers = codes != "labels" or (categories and all(type(c) is int for c in categories))
    if not isinstance(values, pd.Categorical) or not integers:
        return values
    try:
        return values.rename_categories([int(level) for level in values.categories])
    except ValueError:
        return values


def call_privatize(args):
    mech = _mechanism(_with_data_defaults(args))
    seed = args.get("seed")
    rng = "secure" if seed is None else int(np.asarray(seed).ravel()[0])
    data = _labels_for(_data(args["data"]), mech)
    if args.get("users") is None:
        return _reports_to_r(mech.privatize(data, rng=rng))
    import warnings

    from .engine.ledger import privatize_accounted

    encoded = mech.encode_data(data)
    if len(encoded) == 0:
        raise DataError("data is empty: at least one record is needed")
    reports, charges = privatize_accounted(
        mech, encoded, np.asarray(args["users"], dtype=object).ravel(), ledger=_scalar(args, "ledger", str),
        budget=_scalar(args, "budget", float), per=_scalar(args, "per", str) or "day", at=_scalar(args, "at", str),
        state=_scalar(args, "state", str), rng=rng)
    out = _reports_to_r(reports)
    if charges is not None and charges.refused:
        warnings.warn(charges.message(), stacklevel=2)
        out.do_slot_assign("refused", _ro().StrVector(list(charges.refused)))
    return out


def call_ledger(args):
    """``ldp_ledger``: the epsilon spent per user and period, a data.frame."""
    from pathlib import Path

    from .engine.ledger import Ledger

    path = _scalar(args, "ledger", str)
    if not Path(path).exists():
        raise DataError(f"{path}: no such ledger")
    table = Ledger.open(path).table()
    user, period = _scalar(args, "user", str), _scalar(args, "period", str)
    if user is not None:
        table = table[table["user"] == user]
    if period is not None:
        table = table[table["period"] == period]
    return table_to_r(table.reset_index(drop=True))


def _estimate(mech, values, args, weights=None):
    from .contract.registry import estimator as make_estimator
    from .contract.reports import Reports
    from .contract.results import confidence_interval

    codes = args.get("codes")
    codes = "labels" if codes is None else str(np.asarray(codes).ravel()[0])
    reports = Reports.from_array(_labels_for(_data(values), mech, codes), mech, codes=codes)
    name = args.get("estimator")
    name = str(np.asarray(name).ravel()[0]) if name is not None else mech.default_estimator
    estimator_params = args.get("estimator_params") or {}
    if isinstance(estimator_params, list):
        estimator_params = {}
    options = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in estimator_params.items()}
    # length-1 vectors are scalars (grid = 50 is a number of points; a list of points has 2 or more)
    options = {k: (v[0] if isinstance(v, list) and len(v) == 1 else v) for k, v in options.items()}
    if weights is not None:  # design weights: the Hajek frequency estimate (ldpest.engine.weights)
        from .engine.api import estimate

        result = estimate(reports, make_estimator(name, **options), weights=weights)
    else:
        result = make_estimator(name, **options).estimate(reports)
    level = args.get("level")
    if level is not None:
        result = confidence_interval(result, float(np.asarray(level).ravel()[0]))
    return result


def _spec_parameters_to_estimator(args) -> dict:
    """Parameters given to ``ldp_estimate`` with reports that carry their spec: those of the
    estimator reach it; a mechanism parameter (fixed by the spec) or an unknown one is refused."""
    given = _params(args)
    if args.get("spec") is None or not given:
        return args
    from .contract.registry import get_registry, parameters_of

    mech = _mechanism(args)
    name = args.get("estimator")
    name = str(np.asarray(name).ravel()[0]) if name is not None else mech.default_estimator
    required, optional = parameters_of(get_registry().get("estimator", name))
    takes = set(required + optional)
    options = dict(args.get("estimator_params") or {}) if not isinstance(args.get("estimator_params"), list) else {}
    for key, value in given.items():
        if key in takes:
            options[key] = value
        elif key in mech.params:
            raise ParameterError(f"{key} is a parameter of the mechanism {mech.name!r}, which the reports carry "
                                 f"({key} = {json.dumps(mech.params[key])} in their spec): it cannot change after "
                                 f"privatisation")
        else:
            listing = ", ".join(sorted(takes)) or "none"
            raise ParameterError(f"the estimator {name!r} has no parameter {key!r} (its parameters are: {listing})")
    return {**args, "params": {}, "estimator_params": options}


def call_estimate(args):
    args = _spec_parameters_to_estimator(args)
    mech = _mechanism(_with_data_defaults(args))
    by = args.get("by")
    weights = args.get("weights")
    weights = None if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    if by is None:
        return result_to_r(_estimate(mech, args["reports"], args, weights))
    import pandas as pd

    values = _data(args["reports"])
    groups = by if isinstance(by, pd.Categorical) else pd.Categorical(np.asarray(by, dtype=object).astype(str))
    if len(groups) != len(values):
        raise ParameterError(f"by has {len(groups)} value(s) for {len(values)} reports")
    ro = _ro()
    given = args.get("by_levels")
    names = [str(name) for name in (np.asarray(given).ravel().tolist() if given is not None else
                                    sorted(str(c) for c in groups.categories))]
    masks = {name: np.asarray(groups == name) for name in names}
    if weights is not None and len(weights) != len(values):
        raise ParameterError(f"weights has {len(weights)} value(s) for {len(values)} reports")
    out = ro.ListVector([(name, result_to_r(_estimate(mech, values[mask], args,
                                                      None if weights is None else weights[mask])))
                         for name, mask in masks.items() if mask.any()])
    return _classed(out, "ldp_estimates")


def call_interval(args):
    """Intervals of a result at another level (confint): exact where the result's were."""
    from .contract.results import confidence_interval

    result = xr.Dataset.from_dict(json.loads(str(np.asarray(args["result_json"]).ravel()[0])))
    level = float(np.asarray(args["level"]).ravel()[0])
    return result_to_r(confidence_interval(result.drop_vars(["lower", "upper"], errors="ignore"), level))


def call_read(args):
    """A report file (.nc, .zarr, .parquet, or .csv with its spec line) or a result file (.nc, .json)."""
    from pathlib import Path

    from .contract.results import confidence_interval
    from .io.result_files import read_result

    path = Path(str(np.asarray(args["path"]).ravel()[0]))
    kind = _file_kind(path)
    if kind == "reports":
        from .io.sources import open_reports

        return _reports_to_r(open_reports(path).load())
    result = read_result(path)
    if "lower" not in result:
        result = confidence_interval(result, 0.95)
    return result_to_r(result)


def _file_kind(path) -> str:
    from .io.tables import SPEC_PREFIX

    if not path.exists():
        raise DataError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix in (".zarr", ".parquet"):
        return "reports"
    if suffix == ".csv":
        with path.open("r", encoding="utf-8", errors="replace") as handle:
            return "reports" if handle.readline().startswith(SPEC_PREFIX) else "result"
    if suffix == ".nc":
        with xr.open_dataset(path, engine="netcdf4") as opened:
            return "reports" if "reports" in opened.data_vars else "result"
    if suffix == ".json":
        return "result"
    raise ParameterError(f"{path}: ldp_read() reads .nc, .zarr, .csv, .parquet and .json files")


def call_plan(args):
    from .engine.planning import plan

    def scalar(key, kind):
        value = args.get(key)
        return None if value is None else kind(np.asarray(value).ravel()[0])

    table = plan(scalar("mechanism", str) or "all", d=scalar("d", int), epsilon=scalar("epsilon", float),
                 n=scalar("n", int), stderr=scalar("stderr", float), low=scalar("low", float),
                 high=scalar("high", float))
    if "parameters" not in table:  # a plan for a mean
        return table_to_r(table)
    table = table.assign(parameters=[json.dumps(p) if not isinstance(p, str) else p for p in table["parameters"]])
    return table_to_r(table)


def call_simulate(args):
    """``ldp_simulate``: a study as a data.frame (epsilon, n, mean_error, stderr_error) whose attributes
    say the metric, the theoretical slope and how it was simulated."""
    from .engine.simulate import Scenario, run_study

    params = _params(args)
    truth = args.get("truth")
    theta = args.get("theta")
    given = None if theta is None and truth is None else (
        [float(v) for v in np.asarray(theta).ravel()] if theta is not None
        else [str(t) for t in np.asarray(truth).ravel()])
    estimator_params = args.get("estimator_params") or {}
    if isinstance(estimator_params, list):
        estimator_params = {}
    scenario = Scenario(_scalar(args, "mechanism", str), params, _scalar(args, "estimator", str),
                        {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in estimator_params.items()},
                        given)
    epsilons = [float(e) for e in np.asarray(args["epsilon"]).ravel()]
    sizes = [int(round(float(n))) for n in np.asarray(args["n"]).ravel()]
    study = run_study(scenario, epsilons, sizes, _scalar(args, "reps", int) or 20,
                      np.random.default_rng(_scalar(args, "seed", int) or 0))
    table = study[["mean_error", "stderr_error"]].to_dataframe().reset_index()
    out = table_to_r(table)
    ro = _ro()
    for key in ("metric", "theoretical_slope", "simulation", "mechanism", "estimator", "reps"):
        out.do_slot_assign(key, ro.StrVector([str(study.attrs[key])]) if isinstance(study.attrs[key], str)
                           else ro.FloatVector([float(study.attrs[key])]))
    return ro.baseenv["class<-"](out, ro.StrVector(["ldp_simulation", "data.frame"]))


def _scalar(args, key, kind):
    value = args.get(key)
    return None if value is None else kind(np.asarray(value).ravel()[0])


def call_shuffle(args):
    """``ldp_shuffle_epsilon``: the bound as a named list (``bounds`` a data.frame)."""
    import pandas as pd

    from .engine.accounting import shuffle_epsilon

    if args.get("mechanism") is None:
        local = _scalar(args, "epsilon", float)
        if local is None:
            raise ParameterError("give epsilon (any epsilon-LDP randomiser) or a mechanism with its parameters")
    else:
        local = _mechanism({**args, "params": {**_params(args), "epsilon": _scalar(args, "epsilon", float)}})
    result = shuffle_epsilon(local, _scalar(args, "n", float), _scalar(args, "delta", float)).to_dict()
    bounds = pd.DataFrame([{"bound": name, **values} for name, values in result.pop("bounds").items()])
    result["parameters"] = json.dumps(result["parameters"])
    ro = _ro()
    fields = [(key, ro.NULL if value is None else _r_value(value)) for key, value in result.items()]
    return _classed(ro.ListVector([*fields, ("bounds", table_to_r(bounds))]), "ldp_shuffle")


def call_plan_shuffle(args):
    import pandas as pd

    from .engine.accounting import plan_shuffle

    mechanism = _scalar(args, "mechanism", str)
    d = _scalar(args, "d", int)
    row = plan_shuffle(_scalar(args, "shuffle", float), _scalar(args, "delta", float), n=_scalar(args, "n", float),
                       epsilon=_scalar(args, "epsilon", float),
                       mechanism=None if mechanism in (None, "all") else mechanism,
                       **({} if d is None else {"categories": list(range(d))}))
    row = {key: (float("nan") if value is None else value) for key, value in row.items()}
    return table_to_r(pd.DataFrame([row]))


CALLS = {"plugins": call_plugins, "privatize": call_privatize, "estimate": call_estimate,
         "interval": call_interval, "read": call_read, "plan": call_plan, "shuffle": call_shuffle,
         "plan_shuffle": call_plan_shuffle, "ledger": call_ledger,
         "simulate": call_simulate}


def dispatch(name: str) -> None:
    """Run ``name`` with the arguments in ``ldpest:::.bridge$args``; write ``result``, or ``error``
    (the message only: R users get one condition), and the Python ``warnings`` raised."""
    import warnings

    ro = _ro()
    bridge = ro.r("ldpest:::.bridge")
    bridge["error"] = ro.NULL
    bridge["warnings"] = ro.NULL
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            args = r_to_python(bridge["args"], whole_numbers_as_int=True) if "args" in list(bridge.keys()) else {}
            if isinstance(args, list):
                args = {}
            if str(name) not in CALLS:
                raise ParameterError(f"unknown bridge call {name!r}")
            bridge["result"] = CALLS[str(name)](args)
        except LdpestError as exc:
            message = str(exc)
            if isinstance(exc, DataError) and exc.row is not None:  # R counts from 1
                message = f"{exc.message} (first at element {exc.row + 1})"
            bridge["error"] = ro.StrVector([message])
        except Exception as exc:  # a bug: one R error naming it; the traceback only on request
            detail = f"\n{traceback.format_exc()}" if _debugging() else " (options(ldpest.debug = TRUE) shows where)"
            bridge["error"] = ro.StrVector([f"internal error {type(exc).__name__}: {exc}{detail}"])
    messages = list(dict.fromkeys(str(w.message) for w in caught))
    if messages:
        bridge["warnings"] = ro.StrVector(messages)


def _debugging() -> bool:
    ro = _ro()
    flag = ro.baseenv["getOption"]("ldpest.debug")
    return not isinstance(flag, type(ro.NULL)) and bool(flag[0])


def register_in_r() -> None:
    """Python first: load the R package in rpy2's embedded R and route its calls here."""
    ro = _ro()
    import rpy2.rinterface as ri

    ro.r("suppressPackageStartupMessages(library(ldpest))")

    @ri.rternalize
    def _dispatch(name):
        dispatch(str(name[0]))
        return ri.NULL

    _registered.append(_dispatch)
    ro.r("ldpest:::.bridge")["dispatch"] = _dispatch
