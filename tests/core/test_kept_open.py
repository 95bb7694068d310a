"""Report files read part by part: a NetCDF file is opened once per process and closed when the
estimate is done (ldpest.io.kept_open), a changed file is read afresh, and Zarr parts are cut at
whole stored chunks, all with the in-memory estimate bit for bit."""

import os
from pathlib import Path

import numpy as np
import pytest

import ldpest
from ldpest.io import kept_open as kept
from ldpest.io import sources


def _reports(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    mech = ldpest.mechanism("randomized-response", epsilon=1.0, categories=["a", "b", "c"])
    return mech.privatize(rng.choice(["a", "b", "c"], n, p=[0.2, 0.5, 0.3]), rng=rng)


def _open_descriptors_to(path: Path) -> list[str]:
    folder = Path("/proc/self/fd")
    links = []
    for name in os.listdir(folder):
        try:
            links.append(os.readlink(folder / name))
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return [link for link in links if link == str(path.resolve())]


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files in /proc")
@pytest.mark.parametrize("scheduler", [None, "threads", "synchronous"])
def test_a_netcdf_file_opens_once_for_all_its_parts_and_is_closed_after_the_estimate(tmp_path, monkeypatch,
                                                                                   scheduler):
    reports = _reports()
    path = tmp_path / "reports.nc"
    reports.to_netcdf(path)
    source = ldpest.open_reports(path, part_bytes=4000)
    opened = []
    real = sources._open_dataset

    def counted(where):
        opened.append(where)
        return real(where)

    monkeypatch.setattr(sources, "_open_dataset", counted)
    result = ldpest.estimate(source, scheduler=scheduler)
    expected = ldpest.estimate(reports)
    assert len(source) >= 5 and len(opened) == 1
    for variable in ("unprojected", "stderr"):
        np.testing.assert_array_equal(result[variable].values, expected[variable].values)
    assert not kept._kept and _open_descriptors_to(path) == []
    np.testing.assert_array_equal(source.load().values, reports.values)
    assert len(opened) == 2 and not kept._kept and _open_descriptors_to(path) == []


def test_a_replaced_or_changed_netcdf_file_is_read_afresh(tmp_path):
    path = tmp_path / "reports.nc"
    first, second = _reports(n=300, seed=1), _reports(n=300, seed=2)
    assert not np.array_equal(first.values, second.values)
    first.to_netcdf(path)
    source = ldpest.open_reports(path)
    try:
        np.testing.assert_array_equal(sources.read_part(source, 0), first.values)
        second.to_netcdf(path)  # replaced: written beside it and renamed over it
        np.testing.assert_array_equal(sources.read_part(source, 0), second.values)
        held = next(reversed(kept._kept.values())).dataset
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1))  # touched: maybe changed
        sources.read_part(source, 0)
        assert next(reversed(kept._kept.values())).dataset is not held and len(kept._kept) == 3
    finally:
        kept.close_kept_files()


class _Dataset:
    def __init__(self):
        self.closed = False

    def close(self):
        self.closed = True


def test_at_most_kept_open_files_stay_open_and_one_being_read_closes_when_its_reader_ends(tmp_path):
    paths = [tmp_path / f"file{i}" for i in range(kept.KEPT_OPEN + 2)]
    for path in paths:
        path.touch()
    made = []

    def opener(path):
        made.append((path, _Dataset()))
        return made[-1][1]

    try:
        with kept.kept_open(paths[0], opener) as being_read:
            for path in paths[1:]:
                with kept.kept_open(path, opener):
                    pass
            assert not being_read.closed  # out of the cache, but still being read
        assert being_read.closed
        assert [dataset.closed for _, dataset in made[1:]] == [True] + [False] * kept.KEPT_OPEN
        with kept.kept_open(paths[-1], opener) as again:
            assert again is made[-1][1] and len(made) == len(paths)
        kept.close_kept_files()
        assert all(dataset.closed for _, dataset in made) and not kept._kept
    finally:
        kept.close_kept_files()


def test_a_missing_file_raises_the_openers_error_not_a_bare_os_error(tmp_path):
    reports = _reports(n=100)
    path = tmp_path / "reports.nc"
    reports.to_netcdf(path)
    source = ldpest.open_reports(path)
    path.unlink()
    with pytest.raises(ldpest.DataError, match="no such file"):
        sources.read_part(source, 0)


def _zarr_with_chunks(reports, path, chunk):
    reports.data.to_dataset().to_zarr(path, mode="w", consolidated=False, encoding={"reports": {"chunks": (chunk,)}})
    return path


@pytest.mark.parametrize(("chunk", "part_bytes", "starts_every"), [(1000, 2500, 2000), (10_000, 2500, 2500),
                                                                    (3, 2500, 2499), (1, 2500, 2500)])
def test_zarr_parts_hold_whole_stored_chunks_when_a_chunk_fits_in_a_part(tmp_path, chunk, part_bytes,
                                                                           starts_every):
    reports = _reports()  # one-byte reports: part_bytes is the number of reports per part
    assert reports.values.dtype.itemsize == 1
    path = _zarr_with_chunks(reports, tmp_path / "reports.zarr", chunk)
    source = ldpest.open_reports(path, part_bytes=part_bytes)
    starts = [start for start, _ in source.parts]
    assert starts == list(range(0, reports.n, starts_every))
    assert source.parts[-1][1] == reports.n
    expected = ldpest.estimate(reports)
    for scheduler in (None, "synchronous"):
        np.testing.assert_array_equal(ldpest.estimate(source, scheduler=scheduler)["unprojected"].values,
                                      expected["unprojected"].values)
