"""docs/CONFIG.md lists every key of the typed config, and stays in step with it."""

from __future__ import annotations

import dataclasses

from gossamer.config import CrawlConfig
from gossamer.config_doc import DOC_PATH, missing_meanings, render


def test_the_file_is_what_the_config_makes() -> None:
    assert DOC_PATH.read_text(encoding="utf-8") == render(), (
        "docs/CONFIG.md is out of step with src/gossamer/config.py:"
        " run 'python -m gossamer.config_doc'"
    )


def test_every_setting_is_listed_and_explained() -> None:
    assert missing_meanings() == []
    text = render()
    for item in dataclasses.fields(CrawlConfig):
        value = item.default_factory() if callable(item.default_factory) else None
        if dataclasses.is_dataclass(value):
            for sub in dataclasses.fields(value):
                assert f"| `{sub.name}` |" in text, f"{item.name}.{sub.name}"
                assert f"## `[{item.name}]`" in text
        elif item.name not in {"seeds", "out"}:
            assert f"| `{item.name}` |" in text
