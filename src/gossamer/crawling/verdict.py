"""Why a crawl stored nothing, in one line a user can act on.

Role in the data flow: when a whole crawl ends (one process, the coordinator of
``--workers`` over its workers' merged figures, or the ``crawl --frontier`` process of a
shared crawl over the crawl-wide page count) it calls :func:`judge`, which raises the
``SeedError`` the CLI prints as its error line (exit 2) if the crawl ran dry without a single
stored page. It reads only the statistics, so it names what the crawl actually met, most
actionable cause first.
"""

from __future__ import annotations

from gossamer.errors import SeedError
from gossamer.stats import CrawlStats

__all__ = ["judge", "why_nothing"]

# Transport faults, as the fetcher names them, in words (DNS has its own, longer line).
_FAULTS = {
    "connection_refused": "connections were refused",
    "connect_timeout": "connections timed out",
    "tls": "TLS handshakes failed",
}


def _list(items: list[str], most: int = 3) -> str:
    shown = ", ".join(items[:most])
    return shown + (f" and {len(items) - most} more" if len(items) > most else "")


def _unresolved(stats: CrawlStats) -> str:
    """Names that did not resolve, with what to do about it; "" when every name resolved."""
    if not stats.errors.get("dns"):
        return ""
    # The hosts whose robots.txt met the DNS fault (every mode marks them; a worker's
    # figures may not carry them, and then the count alone is said).
    hosts = sorted(
        name for name, host in stats.hosts.items() if host.robots_status.endswith("dns)")
    )
    which = f": {_list(hosts)}" if hosts else ""
    return (
        f"DNS: the host names did not resolve{which} (check the spelling; a name that only"
        " exists on this machine or a test network needs --resolve HOST:IP)"
    )


def why_nothing(stats: CrawlStats) -> str:
    """The causes, joined with '; ', for a crawl that stored no page."""
    causes: list[str] = []
    unresolved = _unresolved(stats)
    if unresolved:
        causes.append(unresolved)
    if stats.errors.get("blocked_address"):
        causes.append(
            "the seed hosts resolve to private or loopback addresses, which are refused"
            " (map them with --resolve HOST:IP to crawl them)"
        )
    if stats.deferred:
        causes.append(
            f"robots.txt of {_list(stats.deferred)} stayed unavailable, so nothing there may"
            " be fetched yet (gossamer crawl --resume DIR tries again)"
        )
    faults = [text for kind, text in _FAULTS.items() if stats.errors.get(kind)]
    if faults:
        causes.append("; ".join(faults))
    # URLs of an origin given up as unreachable count as refused by robots.txt; only a
    # robots.txt that answered can really have refused something.
    if stats.skipped_robots and stats.responses:
        causes.append(f"robots.txt disallowed {stats.skipped_robots} URL(s)")
    statuses = [str(status) for status in sorted(stats.statuses) if status >= 300]
    if statuses:
        causes.append(f"the servers answered HTTP {', '.join(statuses)}")
    if stats.skipped_other:
        causes.append(f"{stats.skipped_other} URL(s) were out of scope")
    return "; ".join(causes) or "no seed led to a page"


RAN_DRY = ("exhausted", "finished")  # a lone or --workers crawl's word, a shared crawl's


def judge(stats: CrawlStats, reason: str, stored: int | None = None) -> None:
    """The end-of-crawl verdict: a crawl that ran dry having stored nothing is a bad seed.
    ``stored``: the pages of the whole crawl when ``stats`` are one worker's of a shared
    crawl (the one that brought the seeds judges it)."""
    pages = stats.pages if stored is None else stored
    if pages == 0 and reason in RAN_DRY:
        raise SeedError(f"bad seed: nothing was crawled: {why_nothing(stats)}")
