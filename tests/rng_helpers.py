"""Generators that script the words a sampler draws, to test its thresholds exactly."""

import numpy as np

import ldpest
from ldpest.privacy.exact import WORD


class ScriptedWords(ldpest.SecureGenerator):
    """A generator whose first 64-bit words are given; everything else comes from numpy
    (a SecureGenerator subclass only so that mechanisms accept it)."""

    def __init__(self, first_words, seed=0):
        self._queue = list(first_words)
        self._rng = np.random.default_rng(seed)

    def words(self, size):
        count = int(np.prod(size))
        head, self._queue = self._queue[:count], self._queue[count:]
        rest = self._rng.integers(0, WORD - 1, size=count - len(head), dtype=np.uint64, endpoint=True)
        return np.concatenate([np.array(head, dtype=np.uint64), rest]).reshape(size)

    def random(self, size=None):
        return self._rng.random(size)

    def integers(self, *args, **kwargs):
        return self._rng.integers(*args, **kwargs)
