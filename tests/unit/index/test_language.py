"""Language detection with the model shipped in py3langid."""

from __future__ import annotations

from gossamer.index.language import UNDETERMINED, detect_language


def test_common_languages() -> None:
    assert (
        detect_language("The quick brown fox jumps over the lazy dog near the river bank") == "en"
    )
    assert (
        detect_language("Der schnelle braune Fuchs springt über den faulen Hund am Fluss") == "de"
    )
    assert (
        detect_language("Le renard brun rapide saute par-dessus le chien paresseux du village")
        == "fr"
    )


def test_short_text_trusts_the_page_hint() -> None:
    assert detect_language("Hallo", hint="de") == "de"
    assert detect_language("ok") == UNDETERMINED
