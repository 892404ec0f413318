"""Extraction rules without code: the ``[[extract]]`` tables of the config, as one plugin.

Data flow: ``config.ExtractRule`` values (checked by ``config_check``) -> **rules** -> one item
per page that any rule applies to: ``{"field": value, ...}`` with the page's URL added by the
hooks. A rule applies to an HTML page whose URL its ``url`` expression finds (every page when
it has none); ``css`` takes the text of the first element the selector matches (or its
``attr`` attribute; every match as a list with ``all``), ``regex`` searches the page's HTML
and takes group 1 when the expression has a group, else the whole match. A rule that finds
nothing gives null (an empty list with ``all``), so every item of a rule set has the same
keys; a page no rule applies to gives no item. The tree is parsed once per page, for all the
CSS rules together.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from selectolax.lexbor import LexborHTMLParser, LexborNode

from gossamer.config import ExtractRule
from gossamer.plugins.api import Page, PageResult, Plugin

__all__ = ["RulesPlugin"]


@dataclass(frozen=True, slots=True)
class _Compiled:
    rule: ExtractRule
    url: re.Pattern[str] | None
    regex: re.Pattern[str] | None


def _value(node: LexborNode, attr: str) -> str | None:
    if attr:
        return node.attributes.get(attr)
    return " ".join(node.text(separator=" ").split())


def _css(tree: LexborHTMLParser, rule: ExtractRule) -> Any:
    if rule.all:
        return [v for node in tree.css(rule.css) if (v := _value(node, rule.attr)) is not None]
    node = tree.css_first(rule.css)
    return None if node is None else _value(node, rule.attr)


def _regex(html: str, pattern: re.Pattern[str], every: bool) -> Any:
    group = 1 if pattern.groups else 0
    if every:
        return [match.group(group) for match in pattern.finditer(html)]
    match = pattern.search(html)
    return None if match is None else match.group(group)


class RulesPlugin(Plugin):
    """The ``[[extract]]`` tables of one config."""

    name = "extract"

    def __init__(self, rules: Sequence[ExtractRule]) -> None:
        self._rules = tuple(
            _Compiled(
                rule,
                re.compile(rule.url) if rule.url else None,
                re.compile(rule.regex, re.DOTALL) if rule.regex else None,
            )
            for rule in rules
        )

    def on_page(self, page: Page) -> PageResult | None:
        applying = [r for r in self._rules if r.url is None or r.url.search(page.url)]
        if not applying:
            return None
        tree = page.tree() if any(r.rule.css for r in applying) else None
        item: dict[str, Any] = {}
        for compiled in applying:
            rule = compiled.rule
            if compiled.regex is not None:
                item[rule.field] = _regex(page.html, compiled.regex, rule.all)
            elif tree is not None:
                item[rule.field] = _css(tree, rule)
        return PageResult(items=(item,))
