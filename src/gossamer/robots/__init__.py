"""Robots: whether the frontier may hand out a URL, and how often it may hit the host.

The fetcher brings a host's ``/robots.txt``; :func:`parse_robots` turns it into
:class:`RobotsRules`, which the frontier keeps per host and asks before every URL.
"""

from gossamer.robots.matcher import RobotsRules
from gossamer.robots.parser import parse_robots, product_token

__all__ = ["RobotsRules", "parse_robots", "product_token"]
