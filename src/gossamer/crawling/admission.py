"""Which found URLs enter the crawl: scope and trap rules, ownership, then the frontier.

Data flow: parse (links), redirects, seeds and other workers' forwards -> **admission** ->
frontier (queued once, by the seen-set) and the ``urls`` table of ``crawl.db``. Every URL the
crawl finds passes through :meth:`Admitter.admit`, in a live crawl and in replay alike, so a
resumed or recovered crawl refuses and counts exactly what the live one did.

The URL families of ``max_family`` (:class:`~gossamer.urls.traps.TrapFamilies`) are kept in
``crawl.db`` (``gossamer.store.families``): each admitter starts from the families kept there
(a worker of a ``--workers`` crawl, from those of the hosts it owns, as it sees every URL of
them), and adds a row when a self-fed family is new or its shallowest depth decreases, in the
batch of the exchange that found the link. So a chain is counted from where it started, over
every run and in replay alike: a link refused before a restart is refused again when
``catch_up`` offers it anew, and a calendar gets ``max_family`` pages however often the crawl
is stopped. The replay of a resume goes through an admitter too; since a family's row is a
minimum, replaying the links that made it changes nothing.

The scope rules (``crawling/scope.py``: ``--scope``, ``--allow-domain``, ``--include``,
``--exclude``, SURT prefixes) are judged here, before a URL is forwarded to the worker that
owns its host, so every mode refuses the same URLs and counts each refusal once, by its rule
(``CrawlStats.skipped_scope``). A redirect target goes through :meth:`Admitter.admit` like a
link: one out of scope is recorded as the redirect's link and not followed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from gossamer.config import ScopeConfig
from gossamer.crawling.scope import scope_of
from gossamer.frontier import Admission, Job
from gossamer.generations import Generations
from gossamer.stats import CrawlStats
from gossamer.store import MetadataDB
from gossamer.urls import host_of
from gossamer.urls.traps import (
    TrapFamilies,
    family_host,
    family_key,
    strip_session_ids,
    trap_reason,
)

if TYPE_CHECKING:
    from gossamer.sites import SiteRules

__all__ = ["KNOWN_URLS", "Admitter", "Queue"]

# URLs whose pure verdicts (host, session ids, trap rules, family) are kept, so a link met on
# page after page (navigation bars) costs a lookup instead of the rules: two generations of
# this many (a URL met in the old one moves back to the young), about 15 MB when both are full.
KNOWN_URLS = 1 << 15


class Owner(Protocol):
    """Which hosts this crawler owns, when it is one worker of a partitioned crawl
    (``engine/partition.Part``), and where the URLs of the others go."""

    def mine_host(self, host: str) -> bool: ...

    def forward(self, url: str, depth: int, referrer: str | None) -> None: ...


class Queue(Protocol):
    """Where admitted URLs go: the crawl's frontier (or the threaded engine's outbox).

    ``seen`` never forgets: once a URL is seen (``add`` returned anything but DUPLICATE for
    it, or it was restored as seen), ``seen`` is True and ``add`` returns DUPLICATE for it
    ever after, with no other effect."""

    def seen(self, url: str) -> bool: ...

    def add(self, job: Job, *, host_budget: int | None = None) -> Admission: ...


class _Facts:
    """What admission works out once per URL: its form after session ids are stripped, its
    host, whether ids were stripped, the trap rule it breaks, the scope rule that refuses it,
    its family; and whether the queue has seen it (which, once True, stays True)."""

    __slots__ = ("family", "host", "out_of_scope", "seen", "stripped", "trap", "url")

    def __init__(  # noqa: PLR0917 - one record of facts, built in one place
        self,
        url: str,
        host: str,
        stripped: bool,
        trap: str | None,
        out_of_scope: str | None,
        family: str | None,
    ) -> None:
        self.url = url
        self.host = host
        self.stripped = stripped
        self.trap = trap
        self.out_of_scope = out_of_scope
        self.family = family
        self.seen = False


class Admitter:
    """Applies the scope rules to every URL found and queues the new ones."""

    def __init__(
        self,
        scope: ScopeConfig,
        *,
        frontier: Queue,
        stats: CrawlStats,
        db: MetadataDB,
        part: Owner | None = None,
        sites: SiteRules | None = None,
    ) -> None:
        self._scope = scope
        # A host's URL budget: its [[site]] tables' max_pages, else max_pages_per_host.
        self._sites = sites if sites else None
        self._frontier = frontier
        self._stats = stats
        self._db = db
        self._part = part  # set when this crawler is one worker of a partitioned crawl
        self._rules = scope_of(scope)
        # Kept by the worker that owns a host: it sees every URL of that host, whoever found it.
        self._families = _families(scope.max_family, db, part)
        # URL as found -> what the rules say of it, for links met on page after page.
        self._known: Generations[str, _Facts] = Generations(KNOWN_URLS)

    @property
    def scope(self) -> ScopeConfig:
        """The scope this admitter applies (the recorder reads its extraction rules and
        plugins from it, so every engine that admits also runs them)."""
        return self._scope

    def admit(
        self,
        url: str,
        depth: int,
        referrer: str | None,
        *,
        hops: int = 0,
        fallbacks: tuple[str, ...] = (),
    ) -> bool:
        """Apply the scope rules and queue ``url`` if it is new; True if it was queued."""
        facts = self._known.get_or(url, self._learn)
        host = facts.host
        if facts.stripped:
            # Before dedup: a fresh session id in every link would make every URL new. The
            # cleaned URL goes on, so this counts a normalisation, not an error.
            self._stats.session_ids_stripped += 1
        url = facts.url
        if facts.trap is not None:
            self._stats.skipped_other += 1
            self._stats.record_error(facts.trap, host)
            return False
        rule = facts.out_of_scope
        if rule is None and depth > 0 and not self._rules.follows_links:
            rule = "seeds"
        if rule is not None:
            # Not an error of the host: the user drew the line. Counted by rule, before the
            # URL is forwarded, so each worker counts only what it found.
            self._stats.skip_scope(rule)
            return False
        scope = self._scope
        if scope.max_depth is not None and depth > scope.max_depth:
            self._stats.skipped_other += 1
            return False
        if self._part is not None and not self._part.mine_host(host):
            # Another worker owns this host: it deduplicates and records the URL.
            self._part.forward(url, depth, referrer)
            return False
        families = self._families
        if families is not None and families.verdict_of(facts.family, depth, referrer):
            # A self-feeding family too far: counted unless the URL was queued before the
            # chain grew too long (then it is a duplicate, not a trap).
            if not self._seen(facts):
                self._stats.skipped_other += 1
                self._stats.record_error("trap_family", host)
            return False
        if self._seen(facts):
            return False
        job = Job(
            url=url, host=host, depth=depth, referrer=referrer, hops=hops, fallbacks=fallbacks
        )
        queued = self._queue(job)
        facts.seen = True  # queued, refused over budget or a duplicate: seen from now on
        return queued

    def _learn(self, url: str) -> _Facts:
        """Work out and keep what the rules say of ``url`` whatever page it is met on."""
        scope = self._scope
        stripped = strip_session_ids(url) if scope.strip_session_ids else url
        trap = trap_reason(
            stripped,
            max_length=scope.max_url_length,
            max_depth=scope.max_path_depth,
            max_repeats=scope.max_path_repeats,
        )
        out = self._rules.refusal(stripped) if trap is None else None
        family = (
            family_key(stripped)
            if self._families is not None and trap is None and out is None
            else None
        )
        return _Facts(stripped, host_of(url), stripped != url, trap, out, family)

    def _seen(self, facts: _Facts) -> bool:
        if not facts.seen:
            facts.seen = self._frontier.seen(facts.url)
        return facts.seen

    def _queue(self, job: Job) -> bool:
        sites = self._sites
        budget = (
            self._scope.max_pages_per_host if sites is None else sites.for_host(job.host).max_pages
        )
        admission = self._frontier.add(job, host_budget=budget)
        if admission is Admission.DUPLICATE:
            return False
        if admission is Admission.OVER_BUDGET:
            self._stats.skipped_other += 1
            self._stats.record_error("trap_host_budget", job.host)
            return False
        self._stats.discovered += 1
        self._db.add_discovered(
            [(job.url, job.host, job.depth, job.referrer)], spilled=admission is Admission.SPILLED
        )
        return True

    def fall_back(self, job: Job) -> None:
        """A URL that could not be reached: queue its next form (a seed's https -> http)."""
        if job.fallbacks:
            self.admit(job.fallbacks[0], job.depth, job.referrer, fallbacks=job.fallbacks[1:])


def _families(max_family: int | None, db: MetadataDB, part: Owner | None) -> TrapFamilies | None:
    """The trap families this admitter judges by: those ``crawl.db`` keeps (of the hosts
    ``part`` owns), telling ``db`` of every change worth keeping."""
    if max_family is None:
        return None

    def keep(family: str, depth: int) -> None:
        db.add_family(family, family_host(family), depth)

    families = TrapFamilies(max_family, keep=keep)
    families.restore(
        (family, depth)
        for family, host, depth in db.trap_families()
        if part is None or part.mine_host(host)
    )
    return families
