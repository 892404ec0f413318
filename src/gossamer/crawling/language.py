"""Language at crawl time: which pages' links a ``--languages`` crawl follows.

Data flow: an HTML page the recorder is about to record -> **language** (the indexer's own
text extraction and language detection, ``index/extract.py`` and ``index/language.py``, so
the crawl and the index never disagree about a page) -> the recorder, which follows the links
of a page in a wanted language only, and counts the others by language
(``CrawlStats.other_languages``). With ``--skip-other-languages`` such a page is not stored
either (:meth:`Recorder.screened <gossamer.crawling.recorder.Recorder.screened>`).

A page whose language cannot be told (too little text, no ``lang`` attribute) is followed:
refusing it would cut a crawl off at every page of pictures or navigation. The detection
needs the search extra (py3langid); the setting is refused at the edge without it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LanguageRule"]


@dataclass(frozen=True, slots=True)
class LanguageRule:
    """The languages whose pages' links are followed, and whether the others are stored."""

    languages: frozenset[str]
    store_others: bool = True

    def other_language(self, content: bytes, content_type: str) -> str | None:
        """The page's language when it is not one of ours; None when its links are followed
        (a wanted language, or one that cannot be told)."""
        # Imported here: only a crawl with --languages needs the search extra.
        from gossamer.index.extract import extract_html  # noqa: PLC0415
        from gossamer.index.language import UNDETERMINED, detect_language  # noqa: PLC0415

        text = extract_html(content, content_type)
        # The indexer's call (index/indexer.py), so a page is given the language it is
        # indexed under.
        lang = detect_language(f"{text.title}\n{text.body}", text.lang_hint)
        if lang == UNDETERMINED or lang in self.languages:
            return None
        return lang
