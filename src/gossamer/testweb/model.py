"""The generated test web: hosts, robots.txt variants and resources, all derived from a seed.

Role in the data flow: this is the world the crawler is tested against; nothing in production
imports it. :func:`build_web` turns a :class:`WebSpec` into a :class:`Web`, which the server
renders and the audit uses as ground truth. The generator itself decides which paths each
robots.txt forbids and records that decision as a flag on every resource, so the audit judges a
crawl without ever parsing robots.txt.

Page text is not stored: the server derives it from the seed and the URL when first asked, so a
web of 20,000 pages costs only its link graph in memory.

A web changes over generations (:mod:`gossamer.testweb.changes`): :meth:`Web.at` gives the web
as served at generation ``g``, generation 0 being the web described here, unchanged by the
change knobs of the spec; ``WebSpec(validators=True)`` makes the server send ETag and
Last-Modified and answer conditional requests, except on :meth:`Web.ignoring_hosts`.

Hosts are named without ports; an absolute link says which of the server's sockets it points at
(a :class:`~gossamer.testweb.origins.Via`), and :meth:`Web.expected` turns the walk into URLs
once the server's :class:`~gossamer.testweb.origins.Origins` are known. A URL is the full
``scheme://host:port/path``, so with ``WebSpec(aliases=True)`` the alias host's pages are
expected once per origin the generator links them on: two origins of one host are two URLs to a
crawler, while politeness (the audit's concurrency and Crawl-delay checks) is per host name.
"""

from __future__ import annotations

import random
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING

from gossamer.testweb.origins import Origins, Via, make_url

if TYPE_CHECKING:
    from gossamer.testweb.changes import Generation, Timeline

DOMAIN = "web.test"

# Words for page text, titles and paths; plain lowercase ASCII so they are safe in a path.
# Written as prose because a hundred quoted items would bury the module.
VOCABULARY = (  # noqa: SIM905
    "amber anchor archive arrow atlas autumn badger beacon birch bridge cabin canal canyon "
    "cedar chalk cinder circuit cobalt comet copper coral crane crystal delta desert dune "
    "ember engine falcon fern fjord forest fossil garden glacier granite harbor hazel heron "
    "horizon island ivory jasper juniper kettle lantern larch lattice lemon lichen lighthouse "
    "linen marble meadow mesa meteor mill mineral mirror moss mountain nectar nickel oak "
    "ochre orbit orchard otter paper pebble pepper pine planet prairie quarry quartz quill "
    "raven reef ridge river saffron salt schooner sierra signal slate sparrow spruce summit "
    "tangle thistle timber topaz tundra valley velvet violet walnut willow winter yarrow zephyr"
).split()


class Role(Enum):
    """What a host is for."""

    NORMAL = "normal"  # many ordinary pages; carries the special behaviours
    CRAWL_DELAY = "crawl-delay"  # few pages, robots.txt asks for a Crawl-delay
    ROBOTS_ERROR = "robots-5xx"  # robots.txt answers 500, so nothing may be fetched
    TRAP = "trap"  # infinite calendar and ever-deeper paths


class RobotsVariant(Enum):
    """Which robots.txt a host serves."""

    STANDARD = "standard"  # a couple of plain Disallow prefixes
    WILDCARD = "wildcard"  # Allow overriding Disallow, '*' and '$'
    AGENT_GROUP = "agent-group"  # a stricter 'gossamer' group beside '*'
    MISSING = "missing"  # 404: everything allowed
    REDIRECT = "redirect"  # 301 to a robots file elsewhere on the same host
    SERVER_ERROR = "server-error"  # 500: everything disallowed
    CRAWL_DELAY = "crawl-delay"
    OPEN = "open"  # an empty Disallow


class Kind(Enum):
    """How the server answers a resource."""

    PAGE = "page"
    DUPLICATE = "duplicate"  # same bytes as its siblings
    REDIRECT = "redirect"
    ERROR = "error"  # 404 or 500, per ``Resource.status``
    RETRY = "retry"  # 429 with Retry-After until that time has passed, then a page
    SLOW = "slow"
    GZIP = "gzip"  # gzip-encoded when the request accepts it
    LATIN1 = "latin1"  # latin-1 bytes labelled utf-8
    CP1252 = "cp1252"  # no charset in the header, <meta charset=windows-1252>
    PDF = "pdf"
    LARGE = "large"  # text/html above the crawler's size cap
    PNG = "png"
    ROBOTS = "robots"  # its links are the sitemaps its Sitemap lines name
    SITEMAP_INDEX = "sitemap-index"  # a <sitemapindex> of its links; gzip as file content if .gz
    SITEMAP = "sitemap"  # a <urlset> of its links, each with a <lastmod>; likewise gzipped if .gz


HTML_KINDS = frozenset(
    {Kind.PAGE, Kind.DUPLICATE, Kind.RETRY, Kind.SLOW, Kind.GZIP, Kind.LATIN1, Kind.CP1252}
)
# Kinds a correct crawler must fetch when it reaches them with robots.txt permission.
EXPECTED_KINDS = HTML_KINDS | {Kind.PDF}
# Where a crawler looks for a sitemap that robots.txt does not name; asking for it is always
# legitimate, so it counts as special on every host, sitemap or not.
GUESSED_SITEMAP = "/sitemap.xml"
SITEMAP_KINDS = frozenset({Kind.SITEMAP_INDEX, Kind.SITEMAP})
# Kinds a crawler may legitimately request although they never count as expected.
SPECIAL_KINDS = (
    frozenset({Kind.REDIRECT, Kind.ERROR, Kind.LARGE, Kind.PNG, Kind.ROBOTS}) | SITEMAP_KINDS
)

# How the normal hosts' pages are shared out (``WebSpec.host_sizes``).
HOST_SIZES = ("even", "power")


@dataclass(frozen=True, slots=True)
class WebSpec:
    """The knobs of the generator; the same spec always yields the same web.

    Sitemaps (off by default; see :mod:`gossamer.testweb.sitemaps`): ``sitemap_hosts`` normal
    hosts announce ``/sitemap_index.xml.gz`` in robots.txt, a gzipped index of two gzipped
    sitemaps; ``guessed_sitemap_hosts`` more serve a plain ``/sitemap.xml`` that robots.txt does
    not name. Either way the sitemaps list every page of the host, and the host gets pages no
    page links to, which only the sitemap reaches: :meth:`Web.orphans` names them.

    ``page_bytes=(low, high)`` fills every HTML page with navigation and prose to a size drawn
    between the two (median about 30 KB for 5-40 KB), for benchmarks that need pages of real
    size; the link graph, and so the expected set, is the same as without it.

    ``host_sizes`` shares the normal hosts' pages out: ``"even"`` gives each
    ``pages_per_host``; ``"power"`` gives them sizes following a power law, as on the real web,
    with the same total (see :func:`gossamer.testweb.generate.power_sizes` for the shape).
    """

    seed: int = 1
    hosts: int = 20
    pages_per_host: int = 50  # ordinary pages per normal host
    seed_hosts: int = 5  # how many hosts' roots go in the seeds file
    crawl_delay_hosts: bool = True
    special_hosts: bool = True
    latency: float = 0.0  # seconds of server delay added to every response
    # One normal host, with a Crawl-delay, whose pages link to it over the main http port, a
    # second http port and https; also guarantees a host whose robots.txt answers 5xx.
    aliases: bool = False
    # A host whose robots.txt answers 5xx even without the other special hosts (benchmarks).
    robots_error_host: bool = False
    sitemap_hosts: int = 0
    guessed_sitemap_hosts: int = 0
    # Fill each HTML page to a size drawn between these bytes (see gossamer.testweb.filler);
    # None keeps the short default pages.
    page_bytes: tuple[int, int] | None = None
    changed: float = 0.10
    vanished: float = 0.02
    appeared: float = 0.01
    validators: bool = False
    ignore_conditional: float = 0.2
    host_sizes: str = "even"  # one of HOST_SIZES

    def validate(self) -> None:
        """Raise ``ValueError`` for a spec no web can satisfy."""
        if self.hosts < 1 or self.pages_per_host < 1 or self.seed_hosts < 1:
            raise ValueError("hosts, pages_per_host and seed_hosts must be at least 1")
        if self.latency < 0:
            raise ValueError("latency must not be negative")
        if self.sitemap_hosts < 0 or self.guessed_sitemap_hosts < 0:
            raise ValueError("sitemap_hosts and guessed_sitemap_hosts must not be negative")
        if self.page_bytes is not None and not 0 < self.page_bytes[0] <= self.page_bytes[1]:
            raise ValueError("page_bytes must be (low, high) with 0 < low <= high")
        if self.host_sizes not in HOST_SIZES:
            raise ValueError(f"host_sizes must be one of {', '.join(HOST_SIZES)}")
        shares = (self.changed, self.vanished, self.appeared, self.ignore_conditional)
        if not all(0 <= share <= 1 for share in shares):
            raise ValueError("changed, vanished, appeared and ignore_conditional must be in [0, 1]")
        if self.changed + self.vanished > 1:
            raise ValueError("changed + vanished must not exceed 1")


@dataclass(frozen=True, slots=True)
class Link:
    """A link as written in a page; ``relative`` renders it as a root-relative path, which
    resolves against whichever origin the page was fetched from; ``via`` places the others."""

    host: str
    path: str
    relative: bool = False
    via: Via = Via.MAIN


@dataclass(frozen=True, slots=True)
class Resource:
    """One URL of the web. ``disallowed`` is the ground truth for product token 'gossamer'."""

    kind: Kind
    status: int = 200
    links: tuple[Link, ...] = ()
    target: Link | None = None  # where a redirect points
    disallowed: bool = False
    body_key: str = ""  # seeds the page text; duplicates share one
    text: str = ""  # robots.txt content


@dataclass(frozen=True, slots=True)
class HostInfo:
    """A host's role, its robots.txt variant and the Crawl-delay that variant asks for;
    ``aliased`` marks the host whose pages link to it over several origins."""

    name: str
    role: Role
    robots: RobotsVariant
    crawl_delay: float = 0.0
    aliased: bool = False


# A place in the walk: the origin slot a URL is reached over, its host and its path.
Node = tuple[Via, str, str]
Lookup = Callable[[tuple[str, str]], Resource | None]

_CALENDAR = re.compile(r"/cal/(\d{4})/(\d{2})")
_DEEPER = re.compile(r"(?:/a)+/")


class Web:
    """A generated web: lookups for the server, seeds and the expected set for the audit."""

    def __init__(
        self,
        spec: WebSpec,
        hosts: Iterable[HostInfo],
        resources: Mapping[tuple[str, str], Resource],
        trap_year: int,
    ) -> None:
        self.spec = spec
        self._info = {info.name: info for info in hosts}
        self.hosts: list[str] = sorted(self._info)
        self.resources: Mapping[tuple[str, str], Resource] = MappingProxyType(dict(resources))
        self.trap_year = trap_year
        self._listed: dict[str, list[Link]] = {}  # host -> the pages its sitemaps list
        for (host, _), res in sorted(self.resources.items()):
            if res.kind is Kind.SITEMAP:
                self._listed.setdefault(host, []).extend(res.links)
        self._expected = self._walk(sitemaps=True)
        # Pages a crawler that ignores sitemaps never finds; none when no host has sitemaps.
        self._orphans = self._expected - self._walk(sitemaps=False) if self._listed else frozenset()
        self._ignoring = frozenset(self._draw_ignoring())
        self._timeline: Timeline | None = None  # later generations, built when first asked for
        self._timeline_lock = threading.Lock()

    def info(self, host: str) -> HostInfo | None:
        return self._info.get(host)

    def hosts_with(self, role: Role) -> list[str]:
        return [name for name in self.hosts if self._info[name].role is role]

    def aliased_hosts(self) -> list[str]:
        """Hosts linked over several origins (one with ``WebSpec(aliases=True)``, else none)."""
        return [name for name in self.hosts if self._info[name].aliased]

    def host_with_robots(self, variant: RobotsVariant) -> str | None:
        return next((n for n in self.hosts if self._info[n].robots is variant), None)

    def find(self, kind: Kind) -> list[tuple[str, str]]:
        """Every stored (host, path) of one kind, in a stable order."""
        return sorted(key for key, res in self.resources.items() if res.kind is kind)

    def resource(self, host: str, target: str) -> Resource | None:
        """What answers ``target`` (path and query) on ``host``; None means 404."""
        found = self.resources.get((host, target))
        if found is not None:
            return found
        info = self._info.get(host)
        if info is not None and info.role is Role.TRAP:
            return self._trap_page(host, target)
        return None

    @staticmethod
    def url(host: str, target: str, port: int, scheme: str = "http") -> str:
        return make_url(scheme, host, port, target)

    def link_url(self, link: Link, where: int | Origins, via: Via | None = None) -> str:
        """The absolute URL of ``link``; a relative one resolves against origin ``via``."""
        scheme, port = Origins.of(where).resolve(
            via if link.relative and via is not None else link.via
        )
        return make_url(scheme, link.host, port, link.path)

    def seed_hosts(self) -> list[str]:
        return self.hosts_with(Role.NORMAL)[: self.spec.seed_hosts]

    def seeds(self, where: int | Origins) -> list[str]:
        """Roots of the seed hosts on the main http port (a bare port or the server's origins)."""
        return [self.url(host, "/", Origins.of(where).http) for host in self.seed_hosts()]

    def expected(self, where: int | Origins) -> set[str]:
        """URLs a correct crawler with no page or depth limit fetches with a 200: each
        (scheme, host, port, path) it is linked on, so one page of the alias host may count
        once per origin. A bare port means a single-port server."""
        return self.urls(self._expected, where)

    def orphans(self, where: int | Origins) -> set[str]:
        """The expected URLs that only a sitemap reaches: no page a crawler can get links them."""
        return self.urls(self._orphans, where)

    def sitemap_roots(self) -> dict[str, str]:
        """Hosts with sitemaps, each with the path of its top one: a gzipped index that
        robots.txt names, or a plain ``/sitemap.xml`` that a crawler finds only by guessing."""
        indexed = {
            (link.host, link.path)
            for res in self.resources.values()
            if res.kind is Kind.SITEMAP_INDEX
            for link in res.links
        }
        return {
            host: path
            for (host, path), res in sorted(self.resources.items())
            if res.kind in SITEMAP_KINDS and (host, path) not in indexed
        }

    def at(self, generation: int) -> Generation:
        """The web as served at ``generation`` (0 is this web as generated); see
        :mod:`gossamer.testweb.changes`. Built on first request and kept; thread-safe."""
        with self._timeline_lock:
            if self._timeline is None:
                # A late import: changes builds on this module's types.
                from gossamer.testweb.changes import Timeline  # noqa: PLC0415

                self._timeline = Timeline(self)
        return self._timeline.at(generation)

    def walk(self, lookup: Lookup) -> frozenset[Node]:
        """The expected nodes when resources are looked up through ``lookup`` (a later
        generation's view): what :meth:`expected` names, as (via, host, path)."""
        return self._walk(sitemaps=True, lookup=lookup)

    def urls(self, nodes: Iterable[Node], where: int | Origins) -> set[str]:
        """The URLs of walk nodes on the server's origins (a bare port: a single-port server)."""
        origins = Origins.of(where)
        return {self.link_url(Link(host, path, via=via), origins) for via, host, path in nodes}

    def sends_validators(self, host: str) -> bool:
        """Does ``host`` send ETag and Last-Modified and answer conditional requests?"""
        return self.spec.validators and host not in self._ignoring

    def ignoring_hosts(self) -> list[str]:
        """Normal hosts that ignore conditional requests (with ``WebSpec(validators=True)``):
        no ETag, no Last-Modified, always 200 with the full body."""
        return sorted(self._ignoring)

    def crawl_delay(self, host: str) -> float:
        info = self._info.get(host)
        return info.crawl_delay if info is not None else 0.0

    def is_robots(self, host: str, target: str) -> bool:
        if target == "/robots.txt":
            return True
        found = self.resources.get((host, target))
        return found is not None and found.kind is Kind.ROBOTS

    def is_disallowed(self, host: str, target: str) -> bool:
        """The generator's own verdict: may 'gossamer' fetch this URL? Robots files are free."""
        info = self._info.get(host)
        if info is None or self.is_robots(host, target):
            return False
        if info.robots is RobotsVariant.SERVER_ERROR:
            return True
        found = self.resources.get((host, target))
        return found is not None and found.disallowed

    def is_special(self, host: str, target: str) -> bool:
        """True for URLs a crawler may request although they are never expected."""
        info = self._info.get(host)
        if info is None:
            return False
        if info.role is Role.TRAP or self.is_robots(host, target) or target == GUESSED_SITEMAP:
            return True
        found = self.resources.get((host, target))
        return found is not None and found.kind in SPECIAL_KINDS

    def _trap_page(self, host: str, target: str) -> Resource | None:
        if target == "/":
            first = f"/cal/{self.trap_year}/01"
            return Resource(Kind.PAGE, links=(Link(host, first), Link(host, "/a/")))
        calendar = _CALENDAR.fullmatch(target)
        if calendar is not None:
            year, month = int(calendar[1]), int(calendar[2])
            if not 1 <= month <= 12:
                return None
            year, month = (year + 1, 1) if month == 12 else (year, month + 1)
            return Resource(Kind.PAGE, links=(Link(host, f"/cal/{year:04d}/{month:02d}"),))
        if _DEEPER.fullmatch(target) is not None:
            return Resource(Kind.PAGE, links=(Link(host, f"{target}a/", relative=True),))
        return None

    def _draw_ignoring(self) -> list[str]:
        # A stream of its own, so the choice changes nothing else the seed decides.
        normal = self.hosts_with(Role.NORMAL)
        count = round(self.spec.ignore_conditional * len(normal))
        return random.Random(f"gossamer-testweb-ignoring:{self.spec.seed}").sample(normal, count)

    def _walk(self, *, sitemaps: bool, lookup: Lookup | None = None) -> frozenset[Node]:
        # Breadth-first from the seeds, obeying the ground truth exactly as a correct crawler
        # obeys robots.txt: disallowed URLs are neither fetched nor followed. A node is an
        # origin slot with a host and a path, because a relative link stays on its page's origin.
        # With ``sitemaps``, the first URL met on a host also queues what its sitemaps list, as
        # a crawler reads them beside robots.txt, before its first fetch from the host.
        # ``lookup`` answers for a later generation; sitemaps stay as generated.
        get = self.resources.get if lookup is None else lookup
        queue = deque((Via.MAIN, host, "/") for host in self.seed_hosts())
        seen = set(queue)
        read: set[str] = set()  # hosts whose sitemaps are queued
        found: set[Node] = set()
        while queue:
            via, host, target = queue.popleft()
            info = self._info.get(host)
            if info is None or info.role in (Role.TRAP, Role.ROBOTS_ERROR):
                continue
            onward: list[Link] = []
            if sitemaps and host not in read:
                read.add(host)
                onward += self._listed.get(host, ())
            res = get((host, target))
            if res is not None and not res.disallowed:
                if res.kind is Kind.REDIRECT and res.target is not None:
                    onward.append(res.target)
                elif res.kind in EXPECTED_KINDS:
                    found.add((via, host, target))
                    onward += res.links
            for link in onward:
                key = (via if link.relative else link.via, link.host, link.path)
                if key not in seen:
                    seen.add(key)
                    queue.append(key)
        return frozenset(found)
