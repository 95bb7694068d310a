"""Memoisation for repeated collection: per-user secrets and the random words they key
(docs/accounting.md, "Repeated collection").

A mechanism that reports over time (RAPPOR, L-GRR, L-OSUE, dBitFlipPM) draws a *permanent*
response once per user and value and reuses it in every round, so that averaging many rounds
reveals no more than that one response.  The permanent response must be the same in every run of
the client, so its randomness is a pseudo-random function of a per-user secret, as RAPPOR's
client does:

    words = SHAKE-256( HMAC-SHA256(secret, scope || 0x00 || purpose || 0x00 || key) )

read as little-endian 64-bit words.  ``scope`` is the permanent mechanism's spec (another
mechanism, or other permanent parameters, get independent responses), ``purpose`` names the draw
("response", "cohort", "buckets") and ``key`` the value.  HMAC-SHA256 is a PRF keyed by the 32-byte
secret; SHAKE-256 of its output stretches it to as many words as a draw needs.  Without the secret
the words are indistinguishable from fresh uniform words, so the permanent response has the law of
a fresh draw (the conformance kit checks that law on fresh draws; tests/core/test_memo.py checks
that keyed draws have it too).

The secrets live in a small JSON file (:class:`ClientState`) written atomically with mode 0600.
Losing it means new secrets, new permanent responses, and a new epsilon_inf spent for every value
reported again; leaking it lets the reader recompute every permanent response from a guessed
value, so the privacy left is that of the instantaneous response alone (epsilon_1 per report,
adding up over rounds).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets as _secrets
from pathlib import Path

import numpy as np

from ..util.atomic import atomic_path
from ..util.errors import DataError, ParameterError

STATE_FORMAT = "ldpest-client-state"
SECRET_BYTES = 32


def keyed_words(secret: bytes, scope: str, purpose: str, key: str, count: int) -> np.ndarray:
    """``count`` uint64 words, a pseudo-random function of ``secret`` (module docstring)."""
    message = b"\x00".join(part.encode() for part in (scope, purpose, key))
    seed = hmac.new(secret, message, hashlib.sha256).digest()
    return np.frombuffer(hashlib.shake_256(seed).digest(8 * count), dtype="<u8").astype(np.uint64)


class ClientState:
    """Per-user secrets for memoised permanent responses (module docstring).

    ``ClientState.open(path)`` reads the file or starts an empty state; :meth:`secret` creates a
    user's secret from the OS's CSPRNG on first use; :meth:`save` writes the file atomically
    (mode 0600).  ``ClientState()`` without a path holds secrets in memory only (simulations).
    """

    def __init__(self, secrets: dict[str, bytes] | None = None, path=None):
        self._secrets = dict(secrets or {})
        self.path = None if path is None else Path(path)
        self._changed = False

    @classmethod
    def open(cls, path) -> ClientState:
        path = Path(path)
        if not path.exists():
            return cls(path=path)
        try:
            document = json.loads(path.read_text())
            if document.get("format") != STATE_FORMAT:
                raise ValueError(f"format is {document.get('format')!r}, not {STATE_FORMAT!r}")
            secrets = {str(user): bytes.fromhex(text) for user, text in document["secrets"].items()}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise DataError(f"{path}: not an ldpest client state file ({exc})") from None
        if any(len(secret) != SECRET_BYTES for secret in secrets.values()):
            raise DataError(f"{path}: every secret must be {SECRET_BYTES} bytes")
        return cls(secrets, path)

    def __len__(self) -> int:
        return len(self._secrets)

    def __contains__(self, user) -> bool:
        return str(user) in self._secrets

    def secret(self, user) -> bytes:
        """The user's secret, created on first use."""
        user = str(user)
        secret = self._secrets.get(user)
        if secret is None:
            secret = self._secrets[user] = _secrets.token_bytes(SECRET_BYTES)
            self._changed = True
        return secret

    def keyed(self, users, scope: str):
        """A function ``(purpose, keys, count) -> (n, count) uint64 words``, record i's words keyed
        by the secret of ``users[i]`` and by ``keys[i]``: computed once per distinct (user, key)."""
        users = [str(user) for user in np.asarray(users, dtype=object).tolist()]
        secrets = [self.secret(user) for user in users]

        def words(purpose: str, keys, count: int) -> np.ndarray:
            keys = [str(key) for key in np.asarray(keys, dtype=object).tolist()]
            if len(keys) != len(users):
                raise ParameterError(f"{len(keys)} keys for {len(users)} users")
            rows, out = {}, np.empty((len(users), count), dtype=np.uint64)
            for i, pair in enumerate(zip(users, keys, strict=True)):
                row = rows.get(pair)
                if row is None:
                    row = rows[pair] = keyed_words(secrets[i], scope, purpose, pair[1], count)
                out[i] = row
            return out

        return words

    def save(self, path=None) -> None:
        """Write the secrets atomically, readable by the owner only."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise ParameterError("this client state has no file: give save(path)")
        document = {"format": STATE_FORMAT, "version": 1,
                    "secrets": {user: secret.hex() for user, secret in sorted(self._secrets.items())}}
        with atomic_path(target, mode=0o600) as tmp:
            tmp.write_text(json.dumps(document, indent=1) + "\n")
        self.path, self._changed = target, False

    @property
    def changed(self) -> bool:
        """True when a secret was created since the file was read or saved."""
        return self._changed


def fresh_words(rng):
    """The ``(purpose, keys, count) -> words`` function of users seen once: fresh uniform words
    (the law of keyed words without the secret)."""
    from .exact import random_words

    def words(purpose: str, keys, count: int) -> np.ndarray:
        return random_words(rng, (len(keys), count))

    return words


__all__ = ["ClientState", "fresh_words", "keyed_words"]
