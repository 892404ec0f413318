"""Rank stage, defaults: PageRank's damping factor and stop criterion, kept apart from the
solver so that the command line can show them without importing numpy and scipy."""

from __future__ import annotations

__all__ = ["DAMPING", "TOLERANCE"]

DAMPING = 0.85
TOLERANCE = 1e-9  # L1 norm of the change between two iterations
