"""Parse: from a fetched HTML body to a title, robots directives and outgoing links.

Sits between fetch and the frontier: the engine hands each HTML response to
:func:`parse_html` and queues the returned links that are not ``nofollow``.
"""

from gossamer.parse.charset import decode_html
from gossamer.parse.html import MAX_LINKS, Link, ParsedPage, parse_html

__all__ = ["MAX_LINKS", "Link", "ParsedPage", "decode_html", "parse_html"]
