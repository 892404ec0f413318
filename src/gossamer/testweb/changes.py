"""Test web, changes: the same web at generations 0, 1, 2, ..., for testing recrawls.

Role in the data flow: test tooling only. :meth:`Web.at(g) <gossamer.testweb.model.Web.at>`
gives a :class:`Generation`, the web as served at generation ``g``; the server answers from the
one it is switched to (``ThreadedTestWeb.set_generation``), and tests ask it which URLs
changed, vanished and appeared, and what a complete crawl at ``g`` must fetch. Generation 0 is
the generated web itself.

Each step from ``g - 1`` to ``g`` is drawn from its own random stream (the spec's seed and
``g``), over the *changing pool*: the normal hosts' ``Kind.PAGE`` pages that a crawler may
fetch, roots excepted (they are the seeds), as generated and not yet vanished. Shares are of
the generated pool, at least one page each when the share is above 0:

* **changed** pages get a paragraph naming :func:`marker` of ``g`` (``revisedqx<g>``: letters
  then digits, which the index's tokenizer keeps whole and its Porter stemmer leaves alone, and
  no real text contains). It replaces the marker of an earlier change, so a search for a
  generation's marker finds the pages whose latest change was in that generation.
* **vanished** pages answer 404, a quarter of them 410, from then on. Pages that link to them
  keep their bytes (and their broken link). A page whose vanishing would leave another page
  unreachable stays and another vanishes in its place, so a fresh crawl at ``g`` finds every
  page still there.
* **appeared** pages are new pages under ``/fresh/`` carrying :func:`appeared_marker`; each is
  linked from a page changed at ``g`` on its host (changed pages gain the link, so the page
  that links to a new one always counts as changed). Appeared pages neither change nor vanish.

Every other answer stays byte for byte what it was; robots.txt and sitemaps never change (a
sitemap goes stale: it still lists vanished pages and never the new ones). The renderer keys
its cache by each page's *version*, the generation in which its answer last changed, and
:mod:`gossamer.testweb.validators` dates Last-Modified by it.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from gossamer.testweb.model import VOCABULARY, Kind, Link, Node, Resource, Role
from gossamer.testweb.origins import Origins

if TYPE_CHECKING:
    from gossamer.testweb.model import Web

__all__ = [
    "APPEARED_MARKER",
    "FRESH_PREFIX",
    "GONE_SHARE",
    "MARKER",
    "Generation",
    "Step",
    "Timeline",
    "appeared_marker",
    "marker",
]

MARKER = "revisedqx"  # + the generation number: the word a changed page carries
APPEARED_MARKER = "appearedqx"  # + the generation number: the word a new page carries
FRESH_PREFIX = "fresh"  # new pages live under /fresh/, which no robots.txt variant forbids
GONE_SHARE = 0.25  # of the vanished pages answer 410 Gone, the rest 404

Key = tuple[str, str]  # (host, path)


def marker(generation: int) -> str:
    """The searchable word in the text of every page changed in ``generation``."""
    return f"{MARKER}{generation}"


def appeared_marker(generation: int) -> str:
    """The searchable word in the text of every page that appeared in ``generation``."""
    return f"{APPEARED_MARKER}{generation}"


@dataclass(frozen=True, slots=True)
class Step:
    """What one generation did to the one before, as (host, path) pairs."""

    number: int
    changed: frozenset[Key]
    vanished: frozenset[Key]
    appeared: frozenset[Key]


class Generation:
    """The web as served at one generation: what answers each URL, the version of each
    answer (the generation it last changed in), and what changed since an earlier one."""

    def __init__(
        self,
        web: Web,
        steps: tuple[Step, ...],
        overlay: Mapping[Key, Resource],
        versions: Mapping[Key, int],
        nodes: frozenset[Node],
    ) -> None:
        self.web = web
        self.number = len(steps)
        self.steps = steps  # steps[i] made generation i + 1
        self._overlay = overlay  # answers that differ from generation 0
        self._versions = versions  # pages whose answer changed, with the generation it did
        self._nodes = nodes

    @property
    def marker(self) -> str:
        return marker(self.number)

    @property
    def appeared_marker(self) -> str:
        return appeared_marker(self.number)

    def lookup(self, host: str, target: str) -> tuple[Resource | None, int]:
        """What answers ``target`` on ``host`` (None: 404) and its version; the server's path."""
        key = (host, target)
        found = self._overlay.get(key)
        if found is None:
            return self.web.resource(host, target), 0
        return found, self._versions[key]

    def resource(self, host: str, target: str) -> Resource | None:
        return self.lookup(host, target)[0]

    def version(self, host: str, target: str) -> int:
        """The generation in which this URL's answer last changed (0: never)."""
        return self._versions.get((host, target), 0)

    def expected(self, where: int | Origins) -> set[str]:
        """URLs a complete crawl at this generation fetches with a 200 (or, asked again with
        validators, a 304): generation 0's expected set, less what vanished, plus what appeared."""
        return self.web.urls(self._nodes, where)

    def changed_pages(self, since: int | None = None) -> frozenset[Key]:
        """Pages whose answer differs from generation ``since`` (default: the one before),
        that existed then and still do."""
        earlier = self._earlier(since)
        appeared = self.appeared_pages(since)
        gone = self.vanished_pages(0)
        return frozenset(
            key
            for key, version in self._versions.items()
            if version > earlier.version(*key) and key not in appeared and key not in gone
        )

    def vanished_pages(self, since: int | None = None) -> frozenset[Key]:
        """Pages there at generation ``since`` (default: the one before) and gone now."""
        first = self._since(since)
        return frozenset(key for step in self.steps[first:] for key in step.vanished)

    def appeared_pages(self, since: int | None = None) -> frozenset[Key]:
        """Pages new since generation ``since`` (default: the one before)."""
        first = self._since(since)
        return frozenset(key for step in self.steps[first:] for key in step.appeared)

    def changed(self, where: int | Origins, since: int | None = None) -> set[str]:
        """URLs of :meth:`changed_pages`, each on every origin a crawl at this generation
        reaches it over."""
        return self._urls(self._nodes, self.changed_pages(since), where)

    def vanished(self, where: int | Origins, since: int | None = None) -> set[str]:
        """URLs of :meth:`vanished_pages`, on the origins a crawl at ``since`` reached them over."""
        earlier = self._earlier(since)
        return self._urls(earlier._nodes, self.vanished_pages(since), where)

    def appeared(self, where: int | Origins, since: int | None = None) -> set[str]:
        """URLs of :meth:`appeared_pages`."""
        return self._urls(self._nodes, self.appeared_pages(since), where)

    def _since(self, since: int | None) -> int:
        number = max(self.number - 1, 0) if since is None else since
        if not 0 <= number <= self.number:
            raise ValueError(f"generation {since} is not at or before {self.number}")
        return number

    def _earlier(self, since: int | None) -> Generation:
        # Not for the timeline's own use: it holds the lock that web.at takes.
        number = self._since(since)
        return self if number == self.number else self.web.at(number)

    def _urls(self, nodes: frozenset[Node], keys: frozenset[Key], where: int | Origins) -> set[str]:
        return self.web.urls((node for node in nodes if node[1:] in keys), where)


class Timeline:
    """The generations of one web, each built from the one before when first asked for."""

    def __init__(self, web: Web) -> None:
        self._web = web
        self._lock = threading.Lock()
        nodes = web.walk(web.resources.get)
        expected = {node[1:] for node in nodes}
        self._pool = sorted(
            key
            for key, res in web.resources.items()
            if res.kind is Kind.PAGE and key[1] != "/" and key in expected and _normal(web, key)
        )
        nothing: Mapping[Key, Resource] = MappingProxyType({})
        self._generations = [Generation(web, (), nothing, MappingProxyType({}), nodes)]

    def at(self, number: int) -> Generation:
        if number < 0:
            raise ValueError(f"generation {number} is negative")
        with self._lock:
            while len(self._generations) <= number:
                self._generations.append(self._next(self._generations[-1]))
            return self._generations[number]

    def _count(self, share: float) -> int:
        return max(1, round(share * len(self._pool))) if share > 0 else 0

    def _next(self, before: Generation) -> Generation:
        web, number = self._web, before.number + 1
        rng = random.Random(f"gossamer-testweb-changes:{web.spec.seed}:{number}")
        gone_before = before.vanished_pages(0)
        alive = [key for key in self._pool if key not in gone_before]
        rng.shuffle(alive)
        vanishing, changing = self._count(web.spec.vanished), self._count(web.spec.changed)
        vanished = alive[:vanishing]
        changed = alive[vanishing : vanishing + changing]
        spare = alive[vanishing + changing :]  # parents of new pages, stand-ins for vanishing
        text = f"Revised in generation {number}: {marker(number)}."
        overlay = dict(before._overlay)
        versions = dict(before._versions)
        appeared: list[Key] = []
        for index in range(self._count(web.spec.appeared)):
            if index >= len(changed):  # more new pages than changed ones: another parent
                if not spare:
                    break
                changed.append(spare.pop(0))
            host, parent = changed[index]
            path = f"/{FRESH_PREFIX}/{rng.choice(VOCABULARY)}-{number}-{index + 1}.html"
            links = (Link(host, "/", relative=True), Link(host, parent, relative=True))
            words = f"New in generation {number}: {appeared_marker(number)}."
            overlay[(host, path)] = Resource(Kind.PAGE, links=links, text=words)
            appeared.append((host, path))
            page = overlay.get((host, parent)) or web.resources[(host, parent)]
            fresh = Link(host, path, relative=True)
            overlay[(host, parent)] = replace(page, links=(*page.links, fresh))
        for key in changed:
            page = overlay.get(key) or web.resources[key]
            overlay[key] = replace(page, text=text)
        for key in changed + appeared:
            versions[key] = number
        vanished, nodes = self._keep_reachable(before, overlay, vanished, spare)
        for key in sorted(vanished):
            overlay[key] = Resource(Kind.ERROR, 410 if rng.random() < GONE_SHARE else 404)
            versions[key] = number
        step = Step(number, frozenset(changed), frozenset(vanished), frozenset(appeared))
        return Generation(
            web, (*before.steps, step), MappingProxyType(overlay), MappingProxyType(versions), nodes
        )

    def _keep_reachable(
        self,
        before: Generation,
        overlay: dict[Key, Resource],
        vanished: list[Key],
        spare: list[Key],
    ) -> tuple[list[Key], frozenset[Node]]:
        """The pages to vanish, none stranding another, and the walk of the web without them.

        A page is stranded when every path to it ran through a vanishing page. Each vanishing
        page that links to a stranded one (directly or through redirects) stays, and the next
        ``spare`` page is tried in its place; when none links to one, all stay. Repeated until
        the walk loses nothing but the vanished pages."""
        web = self._web
        while True:
            gone = set(vanished) | before.vanished_pages(0)

            def lookup(key: Key, gone: set[Key] = gone) -> Resource | None:
                return None if key in gone else overlay.get(key) or web.resources.get(key)

            nodes = web.walk(lookup)
            lost = {node[1:] for node in before._nodes - nodes} - gone
            if not lost:
                return vanished, nodes
            stranding = {key for key in vanished if self._reached(before, key) & lost}
            kept = [key for key in vanished if stranding and key not in stranding]
            stand_ins = spare[: len(stranding)]
            del spare[: len(stranding)]
            vanished = kept + stand_ins

    def _reached(self, before: Generation, key: Key) -> set[Key]:
        """What a page's links lead to, redirects followed (they never change)."""
        page = before.resource(*key)
        queue = [(link.host, link.path) for link in page.links] if page is not None else []
        found: set[Key] = set()
        while queue:
            target = queue.pop()
            if target in found:
                continue
            found.add(target)
            res = self._web.resources.get(target)
            if res is not None and res.kind is Kind.REDIRECT and res.target is not None:
                queue.append((res.target.host, res.target.path))
        return found


def _normal(web: Web, key: Key) -> bool:
    info = web.info(key[0])
    return info is not None and info.role is Role.NORMAL
