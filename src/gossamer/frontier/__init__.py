"""Frontier: which URL is fetched next, when, and never twice."""

from gossamer.frontier.frontier import Frontier
from gossamer.frontier.hosts import HostState, Job, RobotsState

__all__ = ["Frontier", "HostState", "Job", "RobotsState"]
