"""Finding plugins: a ``.py`` file named in the config or on the command line, or an entry
point of the ``gossamer.plugins`` group of an installed package.

Data flow: ``scope.plugins`` (checked by ``config_check``, which loads each once so a broken
plugin is one ``ConfigError`` line before the crawl starts) -> **loading** -> ``Plugin``
objects -> the hooks of each crawl process (every ``--workers`` process and every shared
worker loads its own). A file must define ``plugin``: an instance of a
:class:`~gossamer.plugins.api.Plugin` subclass, or the subclass itself (made with no
arguments). An entry point names the same. Nothing is loaded by a dotted string.
"""

from __future__ import annotations

import hashlib
import importlib.util
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from gossamer.errors import ConfigError
from gossamer.plugins.api import Plugin

__all__ = ["GROUP", "load_plugin", "load_plugins", "plugin_problem"]

GROUP = "gossamer.plugins"


def _instance(found: Any, where: str) -> Plugin:
    if isinstance(found, type) and issubclass(found, Plugin):
        found = found()
    if not isinstance(found, Plugin):
        raise ConfigError(f"{where} is not a gossamer.plugins.Plugin (got {type(found).__name__})")
    return found


def _from_file(path: Path) -> Plugin:
    # A module name of its own per file, so two plugins both called rules.py do not collide.
    key = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"gossamer_plugin_{path.stem}_{key}", path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"plugin {path} cannot be loaded as a Python file")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the plugin's own code: any fault of it is the user's to see
        raise ConfigError(f"plugin {path} failed to load: {type(exc).__name__}: {exc}") from exc
    if not hasattr(module, "plugin"):
        raise ConfigError(f"plugin {path} defines no 'plugin' (a Plugin instance or subclass)")
    return _instance(module.plugin, f"'plugin' of {path}")


def _from_entry_point(name: str) -> Plugin:
    found = entry_points(group=GROUP, name=name)
    if not found:
        raise ConfigError(f"no plugin file or {GROUP!r} entry point named {name!r}")
    point = next(iter(found))
    try:
        loaded = point.load()
    except Exception as exc:  # the plugin's own code
        raise ConfigError(f"plugin {name!r} failed to load: {type(exc).__name__}: {exc}") from exc
    return _instance(loaded, f"entry point {name!r}")


def load_plugin(entry: str) -> Plugin:
    """The plugin ``entry`` names: a path ending in ``.py``, else an entry point's name."""
    if entry.endswith(".py"):
        path = Path(entry)
        if not path.is_file():
            raise ConfigError(f"plugin file {entry} not found")
        return _from_file(path.absolute())
    return _from_entry_point(entry)


def load_plugins(entries: tuple[str, ...]) -> list[Plugin]:
    return [load_plugin(entry) for entry in entries]


def plugin_problem(entry: str) -> str | None:
    """Why ``entry`` names no loadable plugin, or None."""
    try:
        load_plugin(entry)
    except ConfigError as exc:
        return f"is unusable: {exc}"
    return None
