"""Index stage, meaning: a page's words as one 256-number vector, from a model in a package.

Data flow: tantivy's stored fields -> **embed** -> ``vectors`` (beside the index) -> the
``hybrid`` ranking of ``gossamer.search``. The same model embeds a query at search time.

The model is WordLlama's ``l2_supercat`` at 256 dimensions: a static table of token
vectors (32,000 tokens of Llama 2's tokenizer, trained by WordLlama's author from the
token embeddings of several large models), averaged over the tokens of a text and scaled
to length 1. Its weights (16 MB) and tokenizer ship inside the ``wordllama`` wheel
(MIT-licensed), so nothing is fetched at run time: the package is told its own folder is
the cache and that downloading is off, and a model missing from it is a fault, not a
download. WordLlama itself looks for the tokenizer under ``wordllama/tokenizer/`` while its
wheel has it in ``tokenizers/``; naming the package folder as the cache finds both.

What a page contributes is its title, headings and description and the start of its main
text (``BODY_WORDS`` words): an average over every word of a long page drifts towards the
mean of the language, and the start says what the page is about.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gossamer.extras import MissingExtraError
from gossamer.index.errors import IndexingError

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "BODY_WORDS",
    "DIMENSIONS",
    "MODEL",
    "Embedder",
    "modules_present",
    "page_text",
    "require_semantic",
    "semantic_installed",
]

MODEL = "wordllama l2_supercat 256"  # written beside the vectors: another model, new vectors
DIMENSIONS = 256
BODY_WORDS = 256  # words of the main text embedded after the title, headings, description
_CONFIG = "l2_supercat"
_BATCH = 64
_SEMANTIC = ("wordllama",)  # the modules of the ``semantic`` extra this stage imports


def semantic_installed() -> bool:
    """Whether the ``semantic`` extra's model package can be imported (no import done)."""
    return modules_present(_SEMANTIC)


def modules_present(names: tuple[str, ...]) -> bool:
    """Whether every module of ``names`` can be imported, as ``gossamer.extras`` asks: found
    by ``find_spec`` without importing it (an extra that module does not know yet)."""
    for name in names:
        if name in sys.modules:
            if sys.modules[name] is None:  # an import of it was blocked
                return False
            continue
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):
            return False
    return True


def require_semantic(what: str) -> None:
    """Raise the one-line ``pip install 'gossamer[semantic]'`` error when it is missing."""
    if not semantic_installed():
        raise MissingExtraError(what, ("semantic",))


def page_text(
    title: str, headings: str, description: str, body: str, body_words: int = BODY_WORDS
) -> str:
    """The text of a page that its vector stands for."""
    start = " ".join(body.split()[:body_words])
    return "\n".join(part for part in (title, headings, description, start) if part)


class Embedder:
    """The model, loaded once; ``embed`` maps texts to unit vectors (float32 rows)."""

    def __init__(self) -> None:
        try:
            import wordllama  # noqa: PLC0415 - the semantic extra, loaded only when embedding
        except ImportError as exc:
            raise MissingExtraError("embedding pages", ("semantic",)) from exc
        folder = Path(wordllama.__file__).parent
        try:
            self._model: Any = wordllama.WordLlama.load(
                config=_CONFIG, dim=DIMENSIONS, cache_dir=folder, disable_download=True
            )
        except (FileNotFoundError, ValueError, OSError) as exc:
            raise IndexingError(f"cannot load the embedding model from {folder}: {exc}") from exc

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """One unit vector per text (a text with no known token is all zeros)."""
        import numpy as np  # noqa: PLC0415 - only where vectors are made

        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        vectors = self._model.embed(list(texts), norm=False, batch_size=_BATCH)
        matrix = np.asarray(vectors, dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        # Divided only where there is a length: an empty text stays the zero vector, which
        # is near nothing, rather than NaN.
        unit: npt.NDArray[np.float32] = np.divide(
            matrix, norms, out=np.zeros_like(matrix), where=norms > 0
        )
        return unit
