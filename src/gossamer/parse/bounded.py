"""Parse, the cost bound: every HTML parse of Gossamer goes through :func:`parse_bounded`.

Data flow: a decoded HTML body -> **bounded** -> a Lexbor tree for the crawl's link
extraction (``parse.html``), the index's text extraction (``index.extract``) and the web UI's
cached copy (``web.links``).

Lexbor follows the HTML standard's tree construction, whose cost grows with the stack of open
elements and the list of active formatting elements: every ``<div>`` looks down the stack for
a ``<p>`` to close, and every piece of text re-opens the formatting elements (``<b>``,
``<font>``...) that a block closed around it. Ordinary pages are 10-30 levels deep and the cost
is linear; 150,000 nested ``<div>`` (0.9 MB) take Lexbor 40 s, and 1,000 copies of
``<div><font a=N></div>`` (30 KB) take 0.3 s, 4,000 take 9 s (see BENCHMARKS.md).

The bound, in three tiers by the number of ``<`` in the page (one ``str.count``, a few
microseconds on an ordinary page):

* Up to ``SAFE_TAGS``: parsed as it is. So few tags cannot be slow (the worst known shapes
  cost ~0.1 s at that size), and nearly every page is here.
* Up to ``SCAN_TAGS``: scanned tag by tag with a model of the parser's stack (implied ends
  of ``<p>``, ``<li>``, table cells; void and raw-text elements; comments; SVG and MathML).
  Past ``MAX_DEPTH`` open elements (the depth at which Chromium's parser stops nesting too),
  start tags are dropped with their end tags, except ``<a>`` (void and raw-text elements
  such as ``<img>``, ``<meta>``, ``<title>``, ``<script>`` never nest and are always kept), so
  the text and the links survive and only the nesting goes. Formatting elements left
  pending by a block are closed explicitly once more than ``_LEAK_CAP`` are pending or their
  re-opening has cost ``_REBUILDS``. A page the scan leaves alone is parsed from the very
  same string; a changed one is marked ``capped``.
* Past ``SCAN_TAGS`` (the scan costs a few microseconds a tag): flattened, every tag dropped
  but links, metadata, comments and raw text, and marked ``capped``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from selectolax.lexbor import LexborDocumentOptions, LexborHTMLParser

__all__ = ["MAX_DEPTH", "SAFE_TAGS", "BoundedHtml", "BoundedTree", "bound_html", "parse_bounded"]

MAX_DEPTH = 512  # open elements the parser is allowed to hold
SAFE_TAGS = 2048  # a page with at most this many "<" is parsed unscanned
_LEAK_CAP = 16  # formatting elements awaiting re-opening, before they are closed explicitly
_REBUILDS = 100_000  # re-openings of pending formatting elements allowed (~1 us each)
SCAN_TAGS = 100_000  # past this many "<", a page is flattened instead of scanned
_NOAH = 3  # the parser keeps at most three identical formatting elements (Noah's Ark clause)
_WALK = 2 * MAX_DEPTH  # entries an end tag looks down the stack before giving up


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_VOID = _words(
    "area base basefont bgsound br col embed frame hr image img input keygen link meta param "
    "source track wbr"
)
_RAW = _words("script style xmp iframe noembed noframes textarea title plaintext")
_NO_PUSH = _words("html head body frameset")  # merged or ignored in the body
_FORMATTING = _words("a b big code em font i nobr s small strike strong tt u")
_HEADINGS = _words("h1 h2 h3 h4 h5 h6")
_CLOSES_P = _words(
    "address article aside blockquote center details dialog dir div dl fieldset figcaption "
    "figure footer header hgroup main menu nav ol p search section summary ul h1 h2 h3 h4 h5 "
    "h6 pre listing form hr xmp plaintext li dd dt"
)
_SCOPE = _words(
    "applet caption html table td th marquee object template mi mo mn ms mtext annotation-xml "
    "foreignobject desc"
)
_BUTTON_SCOPE = _SCOPE | {"button"}
_LIST_SCOPE = _SCOPE | {"ol", "ul"}
_SPECIAL = (
    _SCOPE
    | _CLOSES_P
    | _VOID
    | _RAW
    | _NO_PUSH
    | _words("button colgroup noscript select tbody tfoot thead tr template caption marquee")
)
_TABLE_STOP = frozenset({"table", "template", "html"})
_SECTIONS = frozenset({"tbody", "thead", "tfoot"})
_TABLE_PARTS = _SECTIONS | {"table", "tr", "td", "th", "caption"}
_FOREIGN_ROOTS = frozenset({"svg", "math"})
_INTEGRATION = _words("foreignobject desc title mi mo mn ms mtext annotation-xml")
_BREAKOUT = _words(
    "b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i "
    "img li listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt "
    "u ul var font"
)

# An entry's flags.
_GHOST = 1  # dropped from the output: the parser never sees it
_FOREIGN = 2  # an SVG or MathML element
_HTML_INSIDE = 4  # a foreign element whose children are HTML again

# "<" opening a comment, a tag, or a bogus comment ("<!x", "<?x", "</ x").
_MARKUP = re.compile(r"<(?:(!--)|(/?)([A-Za-z][^\t\n\f\r />]*)|[!?]|/(?![A-Za-z]))")
# What follows a tag name up to its ">": attributes, whose quoted values may hold ">".
_TAG_REST = re.compile(
    r"""(?:[\t\n\f\r /]++|[^\t\n\f\r />][^\t\n\f\r />=]*+"""
    r"""(?:[\t\n\f\r ]*+=[\t\n\f\r ]*+(?:"[^"]*+(?:"|\Z)|'[^']*+(?:'|\Z)|[^\t\n\f\r >]*+))?+)*+"""
    r"""(?:>|\Z)"""
)
# A <font> leaves SVG and MathML only with one of these attributes.
_FONT_BREAKOUT = re.compile(r"[\t\n\f\r /](?:color|face|size)[\t\n\f\r /=>]", re.IGNORECASE)
_COMMENT_END = re.compile(r"--!?>")
_RAW_END = {name: re.compile(rf"</{name}[\t\n\f\r />]", re.IGNORECASE) for name in _RAW}


# Flattening, for a page too long to scan: every tag goes but the tags that carry links or
# metadata (none of which nest), and comments and raw-text elements keep their content. Both
# steps run in C: a split that sets the raw parts aside, and a substitution by nothing.
_RAW_PART = re.compile(
    r"(<!--(?:>|->|.*?(?:--!?>|\Z))"
    r"|<(script|style|textarea|title|xmp|iframe|noembed|noframes)\b[^>]*>.*?(?:</\2\s*>|\Z))",
    re.IGNORECASE | re.DOTALL,
)
_NESTING_TAG = re.compile(r"<(?!(?i:a|area|base|img|meta|link|br)\b|/(?i:a)\b)/?[A-Za-z][^>]*>?")


def _flatten(html: str) -> str:
    parts = _RAW_PART.split(html)  # text, raw part, raw element's name, text, ...
    parts[::3] = [_NESTING_TAG.sub("", text) for text in parts[::3]]
    del parts[2::3]
    return "".join(parts)


@dataclass(frozen=True, slots=True)
class BoundedHtml:
    html: str  # what the parser may be given
    capped: bool  # True when nesting was dropped or formatting elements closed


@dataclass(frozen=True, slots=True)
class BoundedTree:
    tree: LexborHTMLParser
    capped: bool  # the page was over the bound; the tree holds what could be read


def parse_bounded(html: str, *, events: bool = False) -> BoundedTree:
    """Lexbor's tree of ``html``, within the cost bound described above; never raises.

    ``events`` keeps Lexbor's DOM event handling, which a tree that is edited and written out
    again (the cached copy) wants; reading needs none of it.
    """
    bounded = bound_html(html)
    if events:
        return BoundedTree(LexborHTMLParser(bounded.html), bounded.capped)
    tree = LexborHTMLParser(bounded.html, options=LexborDocumentOptions.WO_EVENTS)
    return BoundedTree(tree, bounded.capped)


def bound_html(html: str) -> BoundedHtml:
    """``html`` itself when its parse is cheap, else the same page with nesting past
    ``MAX_DEPTH`` dropped (``capped``)."""
    tags = html.count("<")
    if tags <= SAFE_TAGS:
        return BoundedHtml(html, False)
    if tags > SCAN_TAGS:
        return BoundedHtml(_flatten(html), True)
    scanned = _Scan(html).run()
    return BoundedHtml(html, False) if scanned is None else BoundedHtml(scanned, True)


class _Scan:
    """One pass over a page, keeping a model of the parser's stack of open elements."""

    def __init__(self, html: str) -> None:
        self.html = html
        self.names: list[str] = []
        self.flags: list[int] = []
        # A formatting element's identity, its name and attribute text ("" for others): the
        # parser keeps at most three identical ones pending.
        self.keys: list[str] = []
        self.open: dict[str, int] = {}  # name -> entries in the stack (to skip vain walks)
        self.real = 0  # entries the parser sees
        self.leaked: dict[str, list[str]] = {}  # name -> keys of formatting elements left open
        self.leak_count: dict[str, int] = {}  # key -> how many
        self.leaks = 0  # what the parser would re-open (identical ones counted up to three)
        self.rebuilds = 0  # re-openings of pending formatting elements so far (at most)
        self.strict = False  # once they cost too much, no formatting element is left pending
        self.out: list[str] = []
        self.done = 0  # html[:done] is in out
        self.changed = False

    def run(self) -> str | None:
        """The bounded page, or None when it is the page as it was."""
        html, size, pos = self.html, len(self.html), 0
        while (match := _MARKUP.search(html, pos)) is not None:
            start = match.start()
            if match.group(1):  # <!-- comment -->
                pos = self._comment_end(match.end())
            elif match.group(3) is None:  # bogus comment, up to the next ">"
                end = html.find(">", match.end())
                pos = size if end < 0 else end + 1
            else:
                rest = _TAG_REST.match(html, match.end())
                pos = size if rest is None else rest.end()
                name = match.group(3).lower()
                if match.group(2):
                    self._end_tag(name, start, pos)
                else:
                    pos = self._start_tag(name, start, pos, match.end())
        if not self.changed:
            return None
        self.out.append(html[self.done :])
        return "".join(self.out)

    def _comment_end(self, pos: int) -> int:
        html = self.html
        if html.startswith(">", pos):
            return pos + 1
        if html.startswith("->", pos):
            return pos + 2
        end = _COMMENT_END.search(html, pos)
        return len(html) if end is None else end.end()

    # -- output ------------------------------------------------------------------------------

    def _drop(self, start: int, end: int) -> None:
        self.out.append(self.html[self.done : start])
        self.done = end
        self.changed = True

    def _insert(self, at: int, text: str) -> None:
        self.out.append(self.html[self.done : at])
        self.out.append(text)
        self.done = at
        self.changed = True

    # -- the stack ---------------------------------------------------------------------------

    def _push(self, name: str, flags: int, key: str = "") -> None:
        self.names.append(name)
        self.flags.append(flags)
        self.keys.append(key)
        self.open[name] = self.open.get(name, 0) + 1
        if not flags & _GHOST:
            self.real += 1

    def _pop_to(self, index: int, at: int) -> None:
        """Close the entries above ``index`` and ``index`` itself, for a tag at ``at``.

        A formatting element closed by another element's tag stays pending in the parser,
        which re-opens it at the next text; past ``_LEAK_CAP`` such, it is closed explicitly.
        """
        closes = []
        popped = 0
        for i in range(len(self.names) - 1, index - 1, -1):
            name, key = self.names[i], self.keys[i]
            self.open[name] -= 1
            if self.flags[i] & _GHOST:
                continue
            popped += 1
            if key and i != index:
                if self.strict or self.leaks >= _LEAK_CAP:
                    closes.append(f"</{name}>")
                else:
                    self._leak(name, key)
        self.real -= popped
        del self.names[index:], self.flags[index:], self.keys[index:]
        if popped and self.leaks:
            # The next text inside a new block re-opens every pending formatting element.
            self.rebuilds += self.leaks
            if self.rebuilds > _REBUILDS:
                closes.extend(self._forget_pending())
        if closes:
            self._insert(at, "".join(closes))

    def _forget_pending(self) -> list[str]:
        """End tags that make the parser drop every pending formatting element (an end tag
        of an element not open removes the latest pending one of its name)."""
        closes = [
            f"</{key.partition(chr(0))[0]}>"
            for key, count in self.leak_count.items()
            for _ in range(min(count, _NOAH))
        ]
        self.leaked.clear()
        self.leak_count.clear()
        self.leaks = 0
        self.strict = True
        return closes

    def _leak(self, name: str, key: str) -> None:
        self.leaked.setdefault(name, []).append(key)
        count = self.leak_count.get(key, 0) + 1
        self.leak_count[key] = count
        if count <= _NOAH:
            self.leaks += 1

    def _unleak(self, name: str) -> None:
        keys = self.leaked.get(name)
        if not keys:
            return
        key = keys.pop()
        count = self.leak_count[key]
        self.leak_count[key] = count - 1
        if count <= _NOAH:
            self.leaks -= 1

    def _find(self, name: str, stops: frozenset[str], names: frozenset[str] = frozenset()) -> int:
        """The index of the nearest ``name`` (or of any of ``names``) not behind a ``stops``
        element; -1 when there is none within reach."""
        if not names and not self.open.get(name):
            return -1
        entries = self.names
        lowest = max(0, len(entries) - _WALK)
        for i in range(len(entries) - 1, lowest - 1, -1):
            entry = entries[i]
            if entry == name or entry in names:
                return i
            if entry in stops:
                return -1
        return -1

    # -- tags --------------------------------------------------------------------------------

    def _in_foreign(self) -> bool:
        return bool(self.flags) and self.flags[-1] & (_FOREIGN | _HTML_INSIDE) == _FOREIGN

    def _start_tag(self, name: str, start: int, end: int, name_end: int) -> int:
        """Model a start tag ending at ``end``; the position the scan goes on from."""
        html = self.html
        if self._in_foreign():
            if name not in _BREAKOUT or (
                name == "font" and not _FONT_BREAKOUT.search(html, name_end, end)
            ):
                if html[end - 2 : end] != "/>":
                    flags = _FOREIGN | (_HTML_INSIDE if name in _INTEGRATION else 0)
                    self._open_element(name, flags, start, end)
                return end
            while self._in_foreign():
                self._pop_to(len(self.names) - 1, start)
        if name in _VOID or name in _NO_PUSH:
            return end
        if name in _RAW:
            if name == "plaintext":
                return len(html)
            close = _RAW_END[name].search(html, end)
            return len(html) if close is None else close.start()
        self._implied_ends(name, start)
        if name in _FOREIGN_ROOTS:
            flags = _FOREIGN
            if html[end - 2 : end] == "/>":
                return end
        else:
            flags = 0
        key = f"{name}\0{html[name_end:end]}" if name in _FORMATTING else ""
        self._open_element(name, flags, start, end, key)
        return end

    def _open_element(self, name: str, flags: int, start: int, end: int, key: str = "") -> None:
        if self.real + self.leaks >= MAX_DEPTH and name != "a":
            self._drop(start, end)
            self._push(name, flags | _GHOST)
        else:
            self._push(name, flags, key)

    def _implied_ends(self, name: str, at: int) -> None:
        """The elements a start tag closes before it opens."""
        if name in _CLOSES_P:
            if name in {"li", "dd", "dt"}:
                items = ("li",) if name == "li" else ("dd", "dt")
                self._close_item(items, at)
            found = self._find("p", _BUTTON_SCOPE)
            if found >= 0:
                self._pop_to(found, at)
            if name in _HEADINGS and self.names and self.names[-1] in _HEADINGS:
                self._pop_to(len(self.names) - 1, at)
        elif name in {"a", "nobr"}:
            found = self._find(name, _SPECIAL)
            if found >= 0:
                self._pop_to(found, at)
        elif name in {"td", "th"}:
            found = self._find("", _TABLE_STOP | {"tr"}, frozenset({"td", "th"}))
            if found >= 0:
                self._pop_to(found, at)
        elif name == "tr":
            found = self._find("tr", _TABLE_STOP | _SECTIONS)
            if found >= 0:
                self._pop_to(found, at)
        elif name in _SECTIONS:
            found = self._find("", _TABLE_STOP, _SECTIONS)
            if found >= 0:
                self._pop_to(found, at)
        elif name in {"option", "optgroup"}:
            if self.names and self.names[-1] == "option":
                self._pop_to(len(self.names) - 1, at)
            if name == "optgroup" and self.names and self.names[-1] == "optgroup":
                self._pop_to(len(self.names) - 1, at)

    def _close_item(self, items: tuple[str, ...], at: int) -> None:
        entries = self.names
        for i in range(len(entries) - 1, max(0, len(entries) - _WALK) - 1, -1):
            entry = entries[i]
            if entry in items:
                self._pop_to(i, at)
                return
            if entry in _SPECIAL and entry not in ("address", "div", "p"):
                return

    def _end_tag(self, name: str, start: int, end: int) -> None:
        if self._in_foreign():
            found = len(self.names) - 1
            while found >= 0 and self.flags[found] & _FOREIGN and self.names[found] != name:
                found -= 1
            if found >= 0 and self.flags[found] & _FOREIGN:
                self._close(found, start, end)
                return
        if name in _VOID or name in _RAW or name in _NO_PUSH:
            return
        if name == "p":
            found = self._find("p", _BUTTON_SCOPE)
        elif name == "li":
            found = self._find("li", _LIST_SCOPE)
        elif name in _HEADINGS:
            found = self._find("", _SCOPE, _HEADINGS)
        elif name in _FORMATTING:
            found = self._find(name, _SPECIAL)
            if found < 0 and not self.open.get(name):
                self._unleak(name)  # the parser forgets a pending one it cannot close
        elif name in _TABLE_PARTS:
            found = self._find(name, _TABLE_STOP)  # closes the cells and rows inside
        elif name in _SPECIAL:
            found = self._find(name, _SCOPE - {name})
        else:
            found = self._find(name, _SPECIAL)
        if found >= 0:
            self._close(found, start, end)

    def _close(self, index: int, start: int, end: int) -> None:
        ghost = self.flags[index] & _GHOST
        self._pop_to(index, start)
        if ghost:
            self._drop(start, end)  # the end of a dropped element goes with it
