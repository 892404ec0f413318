"""The generated test web: hosts, robots.txt variants and resources, all derived from a seed.

Role in the data flow: this is the world the crawler is tested against; nothing in production
imports it. :func:`build_web` turns a :class:`WebSpec` into a :class:`Web`, which the server
renders and the audit uses as ground truth. The generator itself decides which paths each
robots.txt forbids and records that decision as a flag on every resource, so the audit judges a
crawl without ever parsing robots.txt.

Page text is not stored: the server derives it from the seed and the URL when first asked, so a
web of 20,000 pages costs only its link graph in memory.
"""

from __future__ import annotations

import random
import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType

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
    ROBOTS = "robots"


HTML_KINDS = frozenset(
    {Kind.PAGE, Kind.DUPLICATE, Kind.RETRY, Kind.SLOW, Kind.GZIP, Kind.LATIN1, Kind.CP1252}
)
# Kinds a correct crawler must fetch when it reaches them with robots.txt permission.
EXPECTED_KINDS = HTML_KINDS | {Kind.PDF}
# Kinds a crawler may legitimately request although they never count as expected.
SPECIAL_KINDS = frozenset({Kind.REDIRECT, Kind.ERROR, Kind.LARGE, Kind.PNG, Kind.ROBOTS})


@dataclass(frozen=True, slots=True)
class WebSpec:
    """The knobs of the generator; the same spec always yields the same web."""

    seed: int = 1
    hosts: int = 20
    pages_per_host: int = 50  # ordinary pages per normal host
    seed_hosts: int = 5  # how many hosts' roots go in the seeds file
    crawl_delay_hosts: bool = True
    special_hosts: bool = True
    latency: float = 0.0  # seconds of server delay added to every response

    def validate(self) -> None:
        """Raise ``ValueError`` for a spec no web can satisfy."""
        if self.hosts < 1 or self.pages_per_host < 1 or self.seed_hosts < 1:
            raise ValueError("hosts, pages_per_host and seed_hosts must be at least 1")
        if self.latency < 0:
            raise ValueError("latency must not be negative")


@dataclass(frozen=True, slots=True)
class Link:
    """A link as written in a page; ``relative`` renders it as a root-relative path."""

    host: str
    path: str
    relative: bool = False


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
    """A host's role, its robots.txt variant and the Crawl-delay that variant asks for."""

    name: str
    role: Role
    robots: RobotsVariant
    crawl_delay: float = 0.0


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
        self._expected = self._walk()

    def info(self, host: str) -> HostInfo | None:
        return self._info.get(host)

    def hosts_with(self, role: Role) -> list[str]:
        return [name for name in self.hosts if self._info[name].role is role]

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
    def url(host: str, target: str, port: int) -> str:
        return f"http://{host}:{port}{target}"

    def seed_hosts(self) -> list[str]:
        return self.hosts_with(Role.NORMAL)[: self.spec.seed_hosts]

    def seeds(self, port: int) -> list[str]:
        return [self.url(host, "/", port) for host in self.seed_hosts()]

    def expected(self, port: int) -> set[str]:
        """URLs a correct crawler with no page or depth limit fetches with a 200."""
        return {self.url(host, target, port) for host, target in self._expected}

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
        if info.role is Role.TRAP or self.is_robots(host, target):
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

    def _walk(self) -> frozenset[tuple[str, str]]:
        # Breadth-first from the seeds, obeying the ground truth exactly as a correct crawler
        # obeys robots.txt: disallowed URLs are neither fetched nor followed.
        queue = deque((host, "/") for host in self.seed_hosts())
        seen = set(queue)
        found: set[tuple[str, str]] = set()
        while queue:
            host, target = queue.popleft()
            info = self._info.get(host)
            if info is None or info.role in (Role.TRAP, Role.ROBOTS_ERROR):
                continue
            res = self.resources.get((host, target))
            if res is None or res.disallowed:
                continue
            if res.kind is Kind.REDIRECT and res.target is not None:
                onward: Iterable[Link] = (res.target,)
            elif res.kind in EXPECTED_KINDS:
                found.add((host, target))
                onward = res.links
            else:
                continue
            for link in onward:
                key = (link.host, link.path)
                if key not in seen:
                    seen.add(key)
                    queue.append(key)
        return frozenset(found)


def build_web(spec: WebSpec) -> Web:
    """Generate the web that ``spec`` describes; deterministic in every detail."""
    spec.validate()
    return _Builder(spec).build()


SECTIONS = ("articles", "news", "blog", "guides", "topics", "notes")
CRAWL_DELAYS = (0.1, 0.15, 0.2, 0.25, 0.3)
_FIXED_ROBOTS = {
    Role.CRAWL_DELAY: RobotsVariant.CRAWL_DELAY,
    Role.ROBOTS_ERROR: RobotsVariant.SERVER_ERROR,
    Role.TRAP: RobotsVariant.OPEN,
}
# Every normal host gets one of these first; the rest of the normal hosts are STANDARD.
_NORMAL_VARIANTS = (
    RobotsVariant.STANDARD,
    RobotsVariant.WILDCARD,
    RobotsVariant.AGENT_GROUP,
    RobotsVariant.MISSING,
    RobotsVariant.REDIRECT,
)
_PRIVATE_IS_DISALLOWED = (RobotsVariant.STANDARD, RobotsVariant.AGENT_GROUP, RobotsVariant.REDIRECT)


# Special resources that need nothing but a link from some ordinary page.
_LINKED_SPECIALS = (
    (Kind.RETRY, "busy", ".html"),
    (Kind.GZIP, "compressed", ".html"),
    (Kind.LATIN1, "charset", ".html"),
    (Kind.CP1252, "charset", ".html"),
    (Kind.LARGE, "big", ".html"),
    (Kind.PNG, "img", ".png"),
    *[(Kind.SLOW, "slow", ".html")] * 3,
    *[(Kind.PDF, "docs", ".pdf")] * 3,
)


@dataclass(slots=True)
class _Draft:
    """A resource while the builder is still adding links to it."""

    kind: Kind
    status: int = 200
    links: list[Link] = field(default_factory=list)
    target: Link | None = None
    disallowed: bool = False
    body_key: str = ""
    text: str = ""

    def freeze(self) -> Resource:
        links = tuple(self.links)
        return Resource(
            self.kind, self.status, links, self.target, self.disallowed, self.body_key, self.text
        )


class _Builder:
    """Draws hosts, pages and links from one random stream, in a fixed order."""

    def __init__(self, spec: WebSpec) -> None:
        self.spec = spec
        self.rng = random.Random(f"gossamer-testweb:{spec.seed}")
        self.infos: list[HostInfo] = []
        self.drafts: dict[tuple[str, str], _Draft] = {}
        self.pages: dict[str, list[str]] = {}  # host -> its ordinary pages, root first
        self.normal: list[str] = []
        self.serial = 0

    def build(self) -> Web:
        for info in self._assign_roles():
            self.infos.append(info)
            self._populate(info)
        self._link_hosts()
        if self.spec.special_hosts:
            self._add_specials()
        resources = {key: draft.freeze() for key, draft in self.drafts.items()}
        return Web(self.spec, self.infos, resources, trap_year=self.rng.randrange(1990, 2030))

    def _assign_roles(self) -> list[HostInfo]:
        spec, rng = self.spec, self.rng
        roles = [Role.TRAP, Role.ROBOTS_ERROR] if spec.special_hosts else []
        if spec.crawl_delay_hosts:
            roles += [Role.CRAWL_DELAY] * min(3, max(1, spec.hosts // 10))
        if len(roles) >= spec.hosts:
            raise ValueError(f"hosts={spec.hosts} leaves no normal host; need {len(roles) + 1}")
        roles += [Role.NORMAL] * (spec.hosts - len(roles))
        rng.shuffle(roles)
        normal_count = roles.count(Role.NORMAL)
        variants = list(_NORMAL_VARIANTS[:normal_count])
        variants += [RobotsVariant.STANDARD] * (normal_count - len(variants))
        rng.shuffle(variants)
        infos = []
        for index, role in enumerate(roles):
            variant = variants.pop() if role is Role.NORMAL else _FIXED_ROBOTS[role]
            delay = rng.choice(CRAWL_DELAYS) if role is Role.CRAWL_DELAY else 0.0
            infos.append(HostInfo(f"site-{index:03d}.{DOMAIN}", role, variant, delay))
        return infos

    def _populate(self, info: HostInfo) -> None:
        host = info.name
        if info.role is Role.TRAP:
            open_rules = "User-agent: *\nDisallow:\n"
            self.drafts[(host, "/robots.txt")] = _Draft(Kind.ROBOTS, text=open_rules)
            return
        count = {Role.NORMAL: self.spec.pages_per_host, Role.CRAWL_DELAY: 5}.get(info.role, 4)
        pages = self._ordinary_pages(host, count)
        if info.role is Role.NORMAL:
            self.normal.append(host)
        if info.robots is RobotsVariant.SERVER_ERROR:
            self.drafts[(host, "/robots.txt")] = _Draft(Kind.ERROR, status=500)
            for path in pages:
                self.drafts[(host, path)].disallowed = True
            return
        text, extras = self._robots_rules(info, pages)
        if info.robots is RobotsVariant.MISSING:
            self.drafts[(host, "/robots.txt")] = _Draft(Kind.ERROR, status=404)
        elif info.robots is RobotsVariant.REDIRECT:
            moved = Link(host, "/robots-real.txt")
            self.drafts[(host, "/robots.txt")] = _Draft(Kind.REDIRECT, 301, target=moved)
            self.drafts[(host, moved.path)] = _Draft(Kind.ROBOTS, text=text)
        else:
            self.drafts[(host, "/robots.txt")] = _Draft(Kind.ROBOTS, text=text)
        # Pages behind the rules are linked from allowed pages, so a careless crawler finds them.
        for path, disallowed in extras:
            self.drafts[(host, path)] = _Draft(
                Kind.PAGE, links=self._sample_links(host, 3), disallowed=disallowed
            )
            for _ in range(self.rng.randint(1, 2)):
                source = self.drafts[(host, self.rng.choice(pages))]
                source.links.append(self._same_host(host, path))

    def _robots_rules(self, info: HostInfo, pages: list[str]) -> tuple[str, list[tuple[str, bool]]]:
        """robots.txt text for a host and the extra pages its rules decide, with the verdict."""
        word = self._word
        variant = info.robots
        if variant is RobotsVariant.WILDCARD:
            text = (
                "User-agent: *\nDisallow: /archive/\nAllow: /archive/public/\n"
                "Disallow: /*.cgi$\nDisallow: /*?print=\n"
            )
            # The query counts when matching: '$' anchors at the end of path plus query.
            return text, [
                (f"/archive/{word()}.html", True),
                (f"/archive/public/{word()}.html", False),
                ("/search.cgi", True),
                (f"/search.cgi?q={word()}", False),
                (f"{pages[-1]}?print=1", True),
            ]
        if variant is RobotsVariant.AGENT_GROUP:
            # The 'gossamer' group replaces '*' entirely, so /beta/ is open to gossamer.
            text = (
                "User-agent: *\nDisallow: /private/\nDisallow: /beta/\n\n"
                "User-agent: otherbot\nDisallow: /\n\n"
                # Capitalised on purpose: product tokens match case-insensitively.
                "User-agent: Gossamer\nDisallow: /private/\nDisallow: /drafts/\n"
                "Disallow: /members\n"
            )
            return text, [
                (f"/private/{word()}.html", True),
                (f"/drafts/{word()}.html", True),
                ("/members.html", True),
                (f"/members/{word()}.html", True),
                (f"/beta/{word()}.html", False),
            ]
        if variant is RobotsVariant.STANDARD:
            text = (
                "# Keep crawlers out of drafts and scratch space.\n"
                "User-agent: *\nDisallow: /private/\nDisallow: /tmp/\n"
            )
            return text, [
                (f"/private/{word()}-1.html", True),
                (f"/private/{word()}-2.html", True),
                (f"/tmp/{word()}.html", True),
                (f"/private-notes/{word()}.html", False),  # shares a prefix, not the directory
            ]
        if variant is RobotsVariant.MISSING:  # robots.txt answers 404: nothing is off limits
            return "", [(f"/private/{word()}.html", False)]
        delay = f"Crawl-delay: {info.crawl_delay}\n" if info.crawl_delay else ""
        return f"User-agent: *\n{delay}Disallow: /private/\n", [(f"/private/{word()}.html", True)]

    def _ordinary_pages(self, host: str, count: int) -> list[str]:
        rng = self.rng
        pages = ["/"] + [
            f"/{rng.choice(SECTIONS)}/{self._word()}-{index}.html" for index in range(1, count)
        ]
        self.pages[host] = pages
        for path in pages:
            self.drafts[(host, path)] = _Draft(Kind.PAGE)
        for index, path in enumerate(pages):
            links = self.drafts[(host, path)].links
            if index + 1 < count:  # the chain keeps every page reachable from the root
                links.append(self._same_host(host, pages[index + 1]))
            for other in rng.sample(range(count - 1), min(count - 1, rng.randint(5, 15))):
                links.append(self._same_host(host, pages[other if other < index else other + 1]))
        return pages

    def _link_hosts(self) -> None:
        rng, normal = self.rng, self.normal
        for position, host in enumerate(normal if len(normal) > 1 else ()):
            # A ring of roots makes every normal host reachable from any seed.
            self.drafts[(host, "/")].links.append(Link(normal[(position + 1) % len(normal)], "/"))
            for path in self.pages[host]:
                for _ in range(rng.randint(1, 3)):
                    pick = rng.randrange(len(normal) - 1)
                    other = normal[pick if pick < position else pick + 1]
                    self.drafts[(host, path)].links.append(
                        Link(other, rng.choice(self.pages[other]))
                    )
        for info in self.infos:
            if info.role is not Role.NORMAL:
                for _ in range(2):
                    self._link_from_anywhere(Link(info.name, "/"))
                for path in self.pages.get(info.name, ()):
                    self.drafts[(info.name, path)].links.append(self._anywhere())

    def _add_specials(self) -> None:
        place, pick, redirect = self._place, self._pick, Kind.REDIRECT
        host = pick()
        place(host, "moved", redirect, 301, Link(host, place(host, "moved-to")), linked=True)
        host = pick()
        relative = Link(host, place(host, "renamed"), relative=True)
        place(host, "old", redirect, 301, relative, linked=True)
        host, other = pick(), pick()
        place(host, "go", redirect, 302, Link(other, place(other, "landing")), linked=True)
        host = pick()
        end = place(host, "hop", redirect, 302, Link(host, place(host, "hop-end")))
        place(host, "hop", redirect, 301, Link(host, end), linked=True)
        host = pick()
        first, second = self._path("loop"), self._path("loop")
        self.drafts[(host, first)] = _Draft(Kind.REDIRECT, 302, target=Link(host, second))
        self.drafts[(host, second)] = _Draft(Kind.REDIRECT, 302, target=Link(host, first))
        self._link_from_anywhere(Link(host, first))
        guarded = [h.name for h in self.infos if h.robots in _PRIVATE_IS_DISALLOWED]
        if guarded:  # a crawler that follows redirects blindly ends up behind robots.txt
            host = self.rng.choice(guarded)
            hidden = place(host, "private", disallowed=True)
            place(host, "shortcut", redirect, 301, Link(host, hidden), linked=True)
        for status in (404, 404, 500):
            place(pick(), "gone" if status == 404 else "broken", Kind.ERROR, status, linked=True)
        for kind, prefix, suffix in _LINKED_SPECIALS:
            place(pick(), prefix, kind, suffix=suffix, linked=True)
        host = pick()
        links = self._sample_links(host, 3)
        key = f"duplicate:{host}:{self.serial}"
        for _ in range(3):
            path = self._path("copy")
            self.drafts[(host, path)] = _Draft(Kind.DUPLICATE, links=links, body_key=key)
            self._link_from_anywhere(Link(host, path))

    # Small helpers, all drawing from the one random stream.

    def _word(self) -> str:
        return self.rng.choice(VOCABULARY)

    def _pick(self) -> str:
        return self.rng.choice(self.normal)

    def _path(self, prefix: str, suffix: str = ".html") -> str:
        self.serial += 1
        return f"/{prefix}/{self._word()}-{self.serial}{suffix}"

    def _same_host(self, host: str, path: str) -> Link:
        return Link(host, path, relative=self.rng.random() < 0.5)

    def _sample_links(self, host: str, count: int) -> list[Link]:
        pages = self.pages[host]
        return [self._same_host(host, p) for p in self.rng.sample(pages, min(count, len(pages)))]

    def _anywhere(self) -> Link:
        host = self._pick()
        return Link(host, self.rng.choice(self.pages[host]))

    def _link_from_anywhere(self, link: Link) -> None:
        source = self._anywhere()
        self.drafts[(source.host, source.path)].links.append(link)

    def _place(
        self,
        host: str,
        prefix: str,
        kind: Kind = Kind.PAGE,
        status: int = 200,
        target: Link | None = None,
        *,
        suffix: str = ".html",
        disallowed: bool = False,
        linked: bool = False,
    ) -> str:
        """A new resource (HTML kinds link back to a few ordinary pages of their host);
        ``linked`` also puts a link to it on some ordinary page."""
        path = self._path(prefix, suffix)
        links = self._sample_links(host, 3) if kind in HTML_KINDS else []
        self.drafts[(host, path)] = _Draft(kind, status, links, target, disallowed)
        if linked:
            self._link_from_anywhere(Link(host, path))
        return path
