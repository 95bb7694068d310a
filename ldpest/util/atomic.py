"""Atomic file writing: a failed write leaves no partial file and never
replaces a good file with garbage."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from .interrupt import raise_if_interrupted


@contextlib.contextmanager
def atomic_path(path, mode: int | None = None):
    """Yield a temporary path beside ``path``; move it into place only on success, with ``mode``
    (default: the usual permissions, 0666 less the umask).

    While it writes, it holds an exclusive lock on ``.<name>.lock`` beside ``path``: a second writer
    of the same file is refused at once (one of two runs would otherwise win silently).  An OS error
    names ``path``, not the hidden temporary file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with _exclusive(target):
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)
        os.close(fd)
        try:
            yield Path(tmp)
            os.chmod(tmp, 0o666 & ~_umask() if mode is None else mode)  # mkstemp creates 0600
            raise_if_interrupted()  # Ctrl-C that Python could not raise where it landed
            os.replace(tmp, target)
        except OSError as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise OSError(exc.errno, f"{exc.strerror or exc} while writing {target}") from None
        except RuntimeError as exc:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            if not str(exc).startswith("NetCDF:"):
                raise
            # the NetCDF library reports a failed write (a full disk) as "NetCDF: HDF error"
            raise OSError(f"{exc} while writing {target}: the file system refused the write (is the disk "
                          "full?); nothing written") from None
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


@contextlib.contextmanager
def _exclusive(target: Path):
    import fcntl

    from .errors import LdpestError

    lock = target.parent / f".{target.name}.lock"
    fd = os.open(lock, os.O_CREAT | os.O_RDWR, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LdpestError(f"{target}: another process is writing this file now; nothing written "
                              "(run again when it has finished, or write elsewhere)") from None
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(lock)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_directory(path):
    """Like :func:`atomic_path` for outputs that are directories (Zarr stores)."""
    import shutil

    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".part", dir=target.parent)) / "store"
    try:
        yield tmp
        raise_if_interrupted()
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
