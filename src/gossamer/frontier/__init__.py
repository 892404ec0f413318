"""Frontier: which URL is fetched next, when, and never twice."""

from gossamer.frontier.frontier import Admission, Backlog, Frontier, NoBacklog
from gossamer.frontier.hosts import HostState, Job, RobotsState
from gossamer.frontier.seen import SeenSet

__all__ = [
    "Admission",
    "Backlog",
    "Frontier",
    "HostState",
    "Job",
    "NoBacklog",
    "RobotsState",
    "SeenSet",
]
