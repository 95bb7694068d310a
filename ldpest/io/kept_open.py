"""NetCDF report files kept open between the parts one process reads.

Opening a NetCDF file through xarray and closing it again costs 5-6 ms, against 8 ms to read a
part of 2^20 reports from it (cProfile of ``_aggregate_part`` over the 96 parts of the file that
``bench/bench_files.py --n 100000000`` writes, session 25: 13.9 ms a part, of which ``open_dataset``
3.4 ms and the close about 2 ms).  So a process keeps the last
:data:`KEPT_OPEN` files open, as xarray's own file cache does, keyed by the file's identity and
change time: a file replaced or changed since is opened afresh.  A file is closed when it
leaves the cache and no reader holds it, or by :func:`close_kept_files`, which an estimate
calls when it is done, so no file stays open in the caller's process.  Dask workers keep
theirs until they exit.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from pathlib import Path

KEPT_OPEN = 4

_lock = threading.Lock()
_kept: OrderedDict[tuple, _Entry] = OrderedDict()


class _Entry:
    __slots__ = ("dataset", "readers", "kept")

    def __init__(self, dataset):
        self.dataset, self.readers, self.kept = dataset, 0, True


@contextlib.contextmanager
def kept_open(path: Path, opener):
    """``opener(path)``, or the dataset this process opened for ``path`` before, unchanged since."""
    try:
        status = path.stat()
    except OSError:
        opener(path)  # its own error for a file that is gone or unreadable
        raise
    key = (str(path), status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
    with _lock:  # opening under the lock too: HDF5 serialises its calls anyway
        entry = _kept.pop(key, None) or _Entry(opener(path))
        entry.readers += 1
        _kept[key] = entry
        while len(_kept) > KEPT_OPEN:
            _release(_kept.popitem(last=False)[1])
    try:
        yield entry.dataset
    finally:
        with _lock:
            entry.readers -= 1
            if not entry.kept and not entry.readers:
                entry.dataset.close()


def close_kept_files() -> None:
    """Close every file this process keeps open (those being read close when their readers end)."""
    with _lock:
        while _kept:
            _release(_kept.popitem()[1])


def _release(entry: _Entry) -> None:
    entry.kept = False
    if not entry.readers:
        entry.dataset.close()
