"""The peers' environment (bench/.peers: pure-ldp, multi-freq-ldpy, OpenDP, made by
`python bench/peers.py`): run a script there and read the JSON it prints."""

import json
import os
import subprocess
from pathlib import Path

import pytest

PEER_PYTHON = Path(__file__).resolve().parents[1] / "bench" / ".peers" / "bin" / "python"


def peer_python() -> Path:
    """The peers' python; a failure when the test command requires it (LDPEST_REQUIRE_PEERS), else a skip."""
    if not PEER_PYTHON.exists():
        if os.environ.get("LDPEST_REQUIRE_PEERS"):
            pytest.fail(f"{PEER_PYTHON} is missing: run `python bench/peers.py` (scripts/test.sh does)")
        pytest.skip("the peers' environment bench/.peers is not set up (python bench/peers.py)")
    return PEER_PYTHON


def run_peer_json(script: str, *args: str):
    """What ``script`` (run by the peers' python with ``args``) prints as JSON."""
    done = subprocess.run([str(peer_python()), "-c", script, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)
