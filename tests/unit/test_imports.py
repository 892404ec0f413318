"""The test web is test tooling: the crawler and the CLI never import it at import time."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def loaded_after(module: str) -> set[str]:
    """The ``gossamer`` modules a fresh interpreter holds after ``import module``."""
    code = (
        f"import json, sys, {module}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('gossamer'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    return set(json.loads(out))


@pytest.mark.parametrize("module", ["gossamer.cli", "gossamer.engine", "gossamer.__main__"])
def test_production_imports_leave_the_test_web_and_the_ui_out(module: str) -> None:
    loaded = loaded_after(module)
    assert module in loaded
    assert not {name for name in loaded if name.startswith("gossamer.testweb")}
    assert "gossamer.demo" not in loaded
    # The UI's server side is imported by ``gossamer serve`` alone.
    assert "gossamer.web" not in loaded
