"""The peers' environment and the call that times them in it.

The peers (pure-ldp, multi-freq-ldpy) are installed from PyPI into their own
virtual environment, bench/.peers, so their pins never touch ldpest's.
"""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEER_ENV = HERE / ".peers"
PEER_PYTHON = PEER_ENV / "bin" / "python"


def ensure_peer_env() -> Path:
    if not PEER_PYTHON.exists():
        venv.create(PEER_ENV, with_pip=True)
    subprocess.run([str(PEER_PYTHON), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "-r", str(HERE / "peer-requirements.txt")], check=True)
    return PEER_PYTHON


def time_peer(task: dict) -> dict:
    """Run bench/peer_worker.py in the peers' environment; returns its JSON."""
    out = subprocess.run([str(PEER_PYTHON), str(HERE / "peer_worker.py"), json.dumps(task)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    ensure_peer_env()
    print(PEER_PYTHON, file=sys.stderr)
