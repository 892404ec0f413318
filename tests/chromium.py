"""The one check of the tests that drive Chromium: Playwright and Debian's ``chromium`` are
there, else the calling module is skipped with the reason (``make test`` installs both when
root). Call :func:`require_chromium` at a module's top, before anything imports Playwright."""

from __future__ import annotations

import shutil

import pytest

__all__ = ["require_chromium"]


def require_chromium() -> str:
    """The Chromium executable; skips the calling module when it or Playwright is missing."""
    pytest.importorskip("playwright.async_api", reason="playwright (the render extra) is missing")
    found = shutil.which("chromium")
    if found is None:
        pytest.skip(
            "Debian's chromium is not installed (apt-get install chromium)",
            allow_module_level=True,
        )
    return found
