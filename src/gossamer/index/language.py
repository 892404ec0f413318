"""Index stage, language: which natural language a page's text is written in.

Data flow: extract -> **language** -> index (the ``lang`` field behind the English-only
filter). py3langid is langid.py's naive Bayes model over byte n-grams, shipped inside the
package (4 MB, 97 languages, no download at run time) and about 0.2 ms per page here. Its
first use loads the model (under a second), so the identifier is built once per process.
"""

from __future__ import annotations

from functools import cache

from py3langid.langid import MODEL_FILE, LanguageIdentifier

__all__ = ["UNDETERMINED", "detect_language"]

UNDETERMINED = "und"  # ISO 639-2 code for "no language could be determined"
_SAMPLE_CHARS = 1000  # the start of a page is enough, and keeps the cost flat
_MIN_CHARS = 40  # below this the model guesses; the page's own lang attribute is better
_MIN_CONFIDENCE = 0.5


@cache
def _identifier() -> LanguageIdentifier:
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def detect_language(text: str, hint: str = "") -> str:
    """An ISO 639-1 code for ``text``; ``hint`` (the page's own claim) decides short texts."""
    sample = text[:_SAMPLE_CHARS]
    if len(sample.strip()) < _MIN_CHARS:
        return hint or UNDETERMINED
    lang, confidence = _identifier().classify(sample)
    if confidence < _MIN_CONFIDENCE:
        return hint or str(lang)
    return str(lang)
