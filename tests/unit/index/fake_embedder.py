"""A stand-in for the packaged model: words of one meaning share one direction.

Each concept below is a basis vector; a text's vector is the sum of its known words'
concepts, scaled to length 1. So "undo mistake" is near a page about reverting changes
though they share no word, and the tests need neither the model nor its half-second load.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from gossamer.index.embed import DIMENSIONS

CONCEPTS: dict[str, int] = {
    "undo": 0, "revert": 0, "reverses": 0, "rollback": 0,
    "mistake": 1, "change": 1, "changes": 1, "commit": 1,
    "copy": 2, "clone": 2, "duplicate": 2,
    "weather": 3, "rain": 3, "forecast": 3,
    "journal": 4, "log": 4, "logging": 4,
}  # fmt: skip


class FakeEmbedder:
    calls = 0  # texts embedded by every instance, for the incremental tests

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        FakeEmbedder.calls += len(texts)
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                concept = CONCEPTS.get(word.strip(".,:;()"))
                if concept is not None:
                    out[row, concept] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
