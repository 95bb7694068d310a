"""Atomic file writing: a failed write leaves no partial file and never
replaces a good file with garbage."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path, mode: int | None = None):
    """Yield a temporary path beside ``path``; move it into place only on success, with ``mode``
    (default: the usual permissions, 0666 less the umask)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask() if mode is None else mode)  # mkstemp creates 0600
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


@contextlib.contextmanager
def atomic_directory(path):
    """Like :func:`atomic_path` for outputs that are directories (Zarr stores)."""
    import shutil

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)) / "store"
    try:
        yield tmp
        if target.exists():
            old = tmp.parent / "old"
            os.replace(target, old)  # keep the good store until the new one is in place
        os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp.parent, ignore_errors=True)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
