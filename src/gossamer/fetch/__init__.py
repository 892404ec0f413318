"""Fetch: HTTP exchanges with timeouts, size caps, decompression caps and an SSRF guard."""

from gossamer.fetch.faults import LOCAL_FAULTS
from gossamer.fetch.result import FetchResult, Headers

__all__ = ["LOCAL_FAULTS", "FetchResult", "Headers"]
