"""Test web, generation: draw hosts, pages, links and special cases from one seeded stream.

``build_web`` turns a :class:`~gossamer.testweb.model.WebSpec` into a
:class:`~gossamer.testweb.model.Web`; the same spec always yields the same web, down to every
link and robots.txt rule.

With ``WebSpec(aliases=True)`` one normal host becomes the alias host: its robots.txt asks for
a Crawl-delay of :data:`ALIAS_DELAY`, its root links to itself over the second http port and
https, and every link between its own pages takes one of four forms (root-relative, or absolute
over the main port, the second port or https). Its root also links to the robots-5xx host over
https. Everything it adds draws from the random stream only when the flag is on, so webs without
it are unchanged.

Sitemap hosts (``WebSpec(sitemap_hosts=..., guessed_sitemap_hosts=...)``,
:mod:`gossamer.testweb.sitemaps`) are added last, after every other draw, so a web with them is
the web without them plus orphan pages, sitemap files and a Sitemap line in robots.txt.

With ``WebSpec(host_sizes="power")`` the normal hosts' page counts come from
:func:`power_sizes` instead of all being ``pages_per_host``; with the default ``"even"`` nothing
is drawn for them, so existing webs are unchanged.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from gossamer.testweb.model import (
    DOMAIN,
    EXPECTED_KINDS,
    HTML_KINDS,
    VOCABULARY,
    HostInfo,
    Kind,
    Link,
    Resource,
    RobotsVariant,
    Role,
    Web,
    WebSpec,
)
from gossamer.testweb.origins import Via
from gossamer.testweb.sitemaps import (
    INDEX_PATH,
    ORPHAN_PREFIX,
    ORPHANS_PER_HOST,
    choose_sitemap_hosts,
    sitemap_files,
)


def build_web(spec: WebSpec) -> Web:
    """Generate the web that ``spec`` describes; deterministic in every detail."""
    spec.validate()
    return _Builder(spec).build()


SECTIONS = ("articles", "news", "blog", "guides", "topics", "notes")
CRAWL_DELAYS = (0.1, 0.15, 0.2, 0.25, 0.3)
ALIAS_DELAY = 0.2  # the alias host's Crawl-delay, measured per host name across its origins
# The forms of a link between two pages of the alias host, drawn with equal odds.
_ALIAS_FORMS = ((True, Via.MAIN), (False, Via.MAIN), (False, Via.SECOND), (False, Via.TLS))
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

# The power law of host sizes: the host of rank r (1 = biggest) gets pages in proportion to
# r ** -POWER_EXPONENT, on top of MIN_HOST_PAGES each.
POWER_EXPONENT = 0.8
MIN_HOST_PAGES = 5


def power_sizes(hosts: int, total: int, rng: random.Random) -> list[int]:
    """Page counts for ``hosts`` hosts summing exactly to ``total``, following a power law
    (Zipf's, exponent :data:`POWER_EXPONENT`), shuffled by ``rng`` onto the hosts.

    Every host gets at least :data:`MIN_HOST_PAGES` (or ``total // hosts`` if that is less);
    the rest is shared out in proportion to ``rank ** -0.8``, rounded by largest remainder.
    For 200 hosts of 100 pages on average (20,000 pages) the biggest host holds 1,906 pages
    (9.5%, the real web's "about a tenth"), the second 1,097, the median host 52-53 and the
    smallest 32; the 20 biggest hold 45% of all pages. Within a host each page links to the
    next (so every page is reachable from the root) and to 5-15 others drawn at random, so the
    biggest host's pages are all within 5 links of its root (the benchmarks' 200-host web, seed
    1: every page within 7 links of the seeds).
    """
    floor = min(MIN_HOST_PAGES, total // hosts)
    weights = [rank**-POWER_EXPONENT for rank in range(1, hosts + 1)]
    spare = total - floor * hosts
    shares = [spare * weight / sum(weights) for weight in weights]
    sizes = [floor + int(share) for share in shares]
    # Largest remainders first (ties to the bigger host) take the pages rounding left over.
    order = sorted(range(hosts), key=lambda i: (int(shares[i]) - shares[i], i))
    for index in order[: total - sum(sizes)]:
        sizes[index] += 1
    rng.shuffle(sizes)
    return sizes


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
        self.aliased: set[str] = set()
        self.sizes: dict[str, int] = {}  # normal host -> its ordinary pages, if not even
        self.serial = 0

    def build(self) -> Web:
        infos = self._assign_roles()
        if self.spec.host_sizes == "power":
            # A stream of its own: which host is big changes nothing else the seed decides.
            rng = random.Random(f"gossamer-testweb-sizes:{self.spec.seed}")
            normal = [info.name for info in infos if info.role is Role.NORMAL]
            sizes = power_sizes(len(normal), len(normal) * self.spec.pages_per_host, rng)
            self.sizes = dict(zip(normal, sizes, strict=True))
        for info in infos:
            self.infos.append(info)
            self._populate(info)
        self._link_hosts()
        self._link_aliases()
        if self.spec.special_hosts:
            self._add_specials()
        trap_year = self.rng.randrange(1990, 2030)
        self._add_sitemaps()
        resources = {key: draft.freeze() for key, draft in self.drafts.items()}
        return Web(self.spec, self.infos, resources, trap_year=trap_year)

    def _assign_roles(self) -> list[HostInfo]:
        spec, rng = self.spec, self.rng
        roles = [Role.TRAP, Role.ROBOTS_ERROR] if spec.special_hosts else []
        if (spec.aliases or spec.robots_error_host) and not spec.special_hosts:
            roles.append(Role.ROBOTS_ERROR)  # a 5xx robots.txt is part of the multi-origin case
        if spec.crawl_delay_hosts:
            roles += [Role.CRAWL_DELAY] * min(3, max(1, spec.hosts // 10))
        if len(roles) >= spec.hosts:
            raise ValueError(f"hosts={spec.hosts} leaves no normal host; need {len(roles) + 1}")
        roles += [Role.NORMAL] * (spec.hosts - len(roles))
        rng.shuffle(roles)
        normal_count = roles.count(Role.NORMAL)
        # The alias host is the normal host given the CRAWL_DELAY variant, which no other gets.
        first = [RobotsVariant.CRAWL_DELAY] if spec.aliases else []
        variants = first + list(_NORMAL_VARIANTS[: normal_count - len(first)])
        variants += [RobotsVariant.STANDARD] * (normal_count - len(variants))
        rng.shuffle(variants)
        infos = []
        for index, role in enumerate(roles):
            variant = variants.pop() if role is Role.NORMAL else _FIXED_ROBOTS[role]
            delay = rng.choice(CRAWL_DELAYS) if role is Role.CRAWL_DELAY else 0.0
            aliased = role is Role.NORMAL and variant is RobotsVariant.CRAWL_DELAY
            name = f"site-{index:03d}.{DOMAIN}"
            if aliased:
                delay = ALIAS_DELAY
                self.aliased.add(name)
            infos.append(HostInfo(name, role, variant, delay, aliased))
        return infos

    def _populate(self, info: HostInfo) -> None:
        host = info.name
        if info.role is Role.TRAP:
            open_rules = "User-agent: *\nDisallow:\n"
            self.drafts[(host, "/robots.txt")] = _Draft(Kind.ROBOTS, text=open_rules)
            return
        count = {Role.NORMAL: self.spec.pages_per_host, Role.CRAWL_DELAY: 5}.get(info.role, 4)
        count = self.sizes.get(host, count)
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

    def _link_aliases(self) -> None:
        # Fixed links, drawing nothing: every origin of the alias host is reached from its root.
        closed = [info.name for info in self.infos if info.role is Role.ROBOTS_ERROR]
        for host in sorted(self.aliased):
            root = self.drafts[(host, "/")].links
            root += [Link(host, "/", via=Via.SECOND), Link(host, "/", via=Via.TLS)]
            root += [Link(name, "/", via=Via.TLS) for name in closed]

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

    def _add_sitemaps(self) -> None:
        """Orphans (pages no page links to) and the sitemaps that list them with the rest."""
        spec = self.spec
        announced, guessed = choose_sitemap_hosts(
            self.infos, spec.sitemap_hosts, spec.guessed_sitemap_hosts
        )
        for host in announced + guessed:
            for _ in range(ORPHANS_PER_HOST):
                self._place(host, ORPHAN_PREFIX)
            listed = sorted(
                path
                for (name, path), draft in self.drafts.items()
                if name == host and draft.kind in EXPECTED_KINDS
            )
            for path, res in sitemap_files(host, listed, announced=host in announced).items():
                self.drafts[(host, path)] = _Draft(res.kind, links=list(res.links))
        for host in announced:
            robots = self.drafts[(host, "/robots.txt")]
            if robots.target is not None:  # the REDIRECT variant: the file it moved to
                robots = self.drafts[(host, robots.target.path)]
            robots.links.append(Link(host, INDEX_PATH))

    # Small helpers, all drawing from the one random stream.

    def _word(self) -> str:
        return self.rng.choice(VOCABULARY)

    def _pick(self) -> str:
        return self.rng.choice(self.normal)

    def _path(self, prefix: str, suffix: str = ".html") -> str:
        self.serial += 1
        return f"/{prefix}/{self._word()}-{self.serial}{suffix}"

    def _same_host(self, host: str, path: str) -> Link:
        if host in self.aliased:
            relative, via = self.rng.choice(_ALIAS_FORMS)
            return Link(host, path, relative=relative, via=via)
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
