"""WHATWG conformance: every case of urltestdata.json through resolve().

The data file is vendored in ``tests/conformance/url/`` (origin and licence in
``tests/conformance/README.md``). All test cases run,
not only the http(s) ones, because resolve() is a plain WHATWG parse.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gossamer.urls import resolve

DATA_FILE = Path(__file__).resolve().parents[2] / "conformance" / "url" / "urltestdata.json"


def _load_cases() -> list[Any]:
    if not DATA_FILE.is_file():
        return [
            pytest.param(
                None,
                marks=pytest.mark.skip(reason=f"WHATWG URL test data not found at {DATA_FILE}"),
                id="missing-data",
            )
        ]
    entries = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    # Plain strings in the file are section comments; the dicts are the cases.
    cases = [entry for entry in entries if isinstance(entry, dict)]
    return [
        pytest.param(case, id=f"{index:03d}-{ascii(case['input'])[1:-1][:40]}")
        for index, case in enumerate(cases)
    ]


CASES = _load_cases()


@pytest.mark.parametrize("case", CASES)
def test_resolve_matches_whatwg(case: dict[str, Any]) -> None:
    expected = None if case.get("failure") else case["href"]
    assert resolve(case["input"], case.get("base")) == expected


def test_case_count() -> None:
    if not DATA_FILE.is_file():
        pytest.skip(f"WHATWG URL test data not found at {DATA_FILE}")
    assert len(CASES) >= 800
