"""Random generators for privatisation.

Every random call in ldpest takes an explicit generator; there is no global
state.  Two kinds are accepted wherever ``rng`` appears:

* a :class:`numpy.random.Generator` (seeded for simulations and tests: a seeded
  generator makes the noise reproducible, so never use one to privatise real
  people's data);
* :class:`SecureGenerator` (``rng="secure"`` or :func:`secure_rng`), which draws
  every bit from the operating system's cryptographically secure source
  (``os.urandom``), so that whoever receives the reports cannot predict or
  reconstruct the noise.  Use it on the client side in production.

Mechanisms draw through :func:`ldpest.privacy.exact.random_words` (uniform 64-bit
words, compared with integer thresholds wherever privacy depends on the
probability), :meth:`random` (uniform on [0, 1) with 53 random bits, where
only unbiasedness does) and :meth:`integers` (exactly uniform integers), which
both kinds provide, so every mechanism works with either.
"""

from __future__ import annotations

import os

import numpy as np

from ..util.errors import ParameterError

_UNIT = 1.0 / (1 << 53)


class SecureGenerator:
    """A cryptographically secure generator with the subset of the
    :class:`numpy.random.Generator` interface that mechanisms use."""

    kind = "secure"

    def _words(self, count: int) -> np.ndarray:
        return np.frombuffer(bytearray(os.urandom(8 * count)), dtype=np.uint64)  # writable, like numpy's

    def words(self, size) -> np.ndarray:
        """Uniform 64-bit words (uint64) of the given shape (see :func:`ldpest.privacy.exact.random_words`)."""
        count = int(np.prod(size))
        return self._words(count).reshape(size)

    def random(self, size=None):
        """Uniform floats on [0, 1): multiples of 2**-53, each with probability 2**-53."""
        count = int(np.prod(size)) if size is not None else 1
        values = (self._words(count) >> np.uint64(11)).astype(np.float64) * _UNIT
        return values.reshape(size) if size is not None else float(values[0])

    def integers(self, low, high=None, size=None, dtype=np.int64):
        """Exactly uniform integers on [low, high) by rejection (no modulo bias)."""
        if high is None:
            low, high = 0, low
        span = int(high) - int(low)
        if span <= 0:
            raise ValueError("integers: high must be greater than low")
        count = int(np.prod(size)) if size is not None else 1
        limit = np.uint64((1 << 64) // span * span - 1) if span & (span - 1) else None
        out = np.empty(count, dtype=np.uint64)
        filled = 0
        while filled < count:
            words = self._words(count - filled + 16)
            if limit is not None:
                words = words[words <= limit]
            take = min(count - filled, words.size)
            out[filled:filled + take] = words[:take]
            filled += take
        values = (out % np.uint64(span)).astype(np.int64) + int(low)
        values = values.astype(dtype)
        return values.reshape(size) if size is not None else values[0].item()

    def __repr__(self) -> str:
        return "SecureGenerator(os.urandom)"


def secure_rng() -> SecureGenerator:
    """A generator drawing from the operating system's CSPRNG (see module doc)."""
    return SecureGenerator()


def resolve_rng(rng) -> tuple[object, str]:
    """Return ``(generator, kind)`` for an ``rng`` argument.

    ``None`` gives a fresh :func:`numpy.random.default_rng` seeded from OS
    entropy (kind ``"numpy"``); ``"secure"`` gives a :class:`SecureGenerator`;
    an int seeds a numpy generator (kind ``"numpy-seeded"``).
    """
    if rng is None:
        return np.random.default_rng(), "numpy"
    if isinstance(rng, str):
        if rng == "secure":
            return SecureGenerator(), "secure"
        raise ParameterError(f"rng: expected a numpy Generator, an int seed or 'secure', got {rng!r}")
    if isinstance(rng, SecureGenerator):
        return rng, "secure"
    if isinstance(rng, np.random.Generator):
        return rng, "numpy"
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng)), "numpy-seeded"
    raise ParameterError(
        f"rng: expected a numpy Generator, an int seed or 'secure', got {type(rng).__name__}"
    )
