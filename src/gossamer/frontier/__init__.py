"""Frontier: which URL is fetched next, when, and never twice; how long a host waits."""

from gossamer.frontier.backoff import Backoff, Outcome, retry_after
from gossamer.frontier.frontier import Admission, Backlog, Frontier, NoBacklog
from gossamer.frontier.hosts import HostState, Job, RobotsState
from gossamer.frontier.politeness import HostTiming
from gossamer.frontier.seen import SeenSet

__all__ = [
    "Admission",
    "Backlog",
    "Backoff",
    "Frontier",
    "HostState",
    "HostTiming",
    "Job",
    "NoBacklog",
    "Outcome",
    "RobotsState",
    "SeenSet",
    "retry_after",
]
