"""A full disk (issue 26): writing .nc failed with the internal error "RuntimeError: NetCDF: HDF
error". Now every format fails with one line naming the file, exit status 2, no partial file, no
lock left behind, and an older file of that name kept. Proven on a real 256 KiB tmpfs where the
test may mount one (root), and by a failing close of the NetCDF library everywhere."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_cli_safety import run

LDPEST = str(Path(sys.executable).with_name("ldpest"))


@pytest.fixture
def answers(tmp_path):
    path = tmp_path / "answers.csv"
    values = np.random.default_rng(0).choice(["yes", "no"], 200_000)
    path.write_text("answer\n" + "\n".join(values) + "\n")
    return path


@pytest.fixture
def tiny_disk(tmp_path):
    folder = tmp_path / "tiny"
    folder.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(folder)],
                                           capture_output=True).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root (the monkeypatched test below runs everywhere)")
    yield folder
    subprocess.run(["umount", str(folder)], check=True)


@pytest.mark.parametrize("suffix,message", [(".nc", "NetCDF: HDF error while writing"),
                                            (".csv", "No space left on device while writing")])
def test_a_full_disk_is_one_clear_line_and_leaves_nothing(answers, tiny_disk, suffix, message):
    target = tiny_disk / f"reports{suffix}"
    target.write_bytes(b"the old file")
    done = subprocess.run([LDPEST, "privatize", str(answers), "-c", "answer", "-m", "unary-randomized-response",
                           "-e", "1", "--categories", "yes,no", "-o", str(target), "--no-progress"],
                          capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and str(target) in done.stderr and "Traceback" not in done.stderr
    assert target.read_bytes() == b"the old file"
    assert sorted(p.name for p in tiny_disk.iterdir()) == [target.name]  # no .part, no .lock


def test_a_netcdf_write_that_fails_at_close_is_one_clear_line(answers, tmp_path, monkeypatch):
    import netCDF4

    def full(self):
        raise RuntimeError("NetCDF: HDF error")

    monkeypatch.setattr(netCDF4.Dataset, "close", full)
    target = tmp_path / "reports.nc"
    done = run("privatize", answers, "-c", "answer", "-m", "randomized-response", "-e", "1", "--categories", "yes,no",
               "-o", target, "--no-progress")
    assert done.exit_code == 2, done.output
    assert "NetCDF: HDF error while writing" in done.output and "is the disk full?" in done.output
    assert "internal error" not in done.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv"]
