"""Lazy package exports (PEP 562): a package names its public values without importing the
modules that hold them until one is first used.

A command imports only what it runs: ``gossamer search`` reaches ``gossamer.store`` for the
document store and must not pay for the WARC writer's and the fetcher's imports (aiohttp),
nor the indexer's (pypdf, selectolax) or the ranker's (scipy). Each package keeps its names
under ``TYPE_CHECKING`` for the type checker and gives this module the map from name to
submodule.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["exports"]


def exports(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package``: ``homes`` maps each public name to the submodule
    that defines it; a value found once is kept in the package, so it is looked up once."""

    def find(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return find
