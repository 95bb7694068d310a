"""ldpest.util.xarray: labelled arrays are built without importing dask.array, and dask arrays
are still recognised once dask.array is loaded (each check in a fresh interpreter, since the
deferral acts on a process-wide cache)."""

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          check=True).stdout.strip()


def test_estimate_from_a_csv_file_does_not_import_dask_array(tmp_path):
    data = tmp_path / "answers.csv"
    data.write_text("answer\n" + "yes\nno\n" * 50)
    out = _run(f"""
        import sys
        sys.argv = ['ldpest', 'estimate', {str(data)!r}, '-c', 'answer', '-m', 'randomized-response', '-e', '1',
                    '--categories', 'yes,no', '--json']
        import ldpest.cli
        try:
            ldpest.cli.main()
        except SystemExit as exc:
            assert not exc.code, exc.code
        print('dask' in sys.modules, 'xarray' in sys.modules)
        """)
    assert out.splitlines()[-1] == "False True"


def test_dask_arrays_are_still_recognised_after_the_deferral():
    out = _run("""
        import sys
        import numpy as np
        from ldpest.util.xarray import xr
        xr.DataArray(np.arange(3))                      # the deferred answer is cached by now
        assert 'dask' not in sys.modules
        import dask.array as da
        lazy = xr.DataArray(da.ones(6, chunks=2), dims='x')
        assert isinstance(lazy.data, da.Array) and lazy.chunks == ((2, 2, 2),)
        masked = xr.DataArray(da.ma.masked_equal(da.arange(4, chunks=2), 1), dims='x')
        assert bool(np.isnan(masked.values[1])) and masked.chunks is not None
        assert 'dask.array<' in repr(lazy)              # formatting asks xarray for the dask type too
        ds = xr.Dataset({'a': lazy}).mean()
        assert float(ds['a']) == 1.0
        from xarray.namedarray.utils import is_duck_dask_array
        assert is_duck_dask_array(lazy.data) and not is_duck_dask_array(np.arange(2))
        print('ok')
        """)
    assert out == "ok"


def test_nothing_is_patched_when_dask_array_is_already_loaded():
    out = _run("""
        import dask.array
        from ldpest.util.xarray import xr
        from xarray.namedarray import pycompat
        print(type(pycompat._cached_duck_array_modules.get('dask')).__name__)
        """)
    assert out in ("NoneType", "DuckArrayModule")
