"""Robots: whether the frontier may hand out a URL, and how often it may hit the host.

The fetcher brings a host's ``/robots.txt``; :func:`lasting` and :func:`lasting_answer` say
what the answer implies (RFC 9309 2.3.1), :func:`parse_robots` turns a body into
:class:`RobotsRules`, which the frontier keeps per origin and asks before every URL.
"""

from gossamer.robots.matcher import RobotsRules
from gossamer.robots.parser import parse_robots, product_token
from gossamer.robots.status import UNCONNECTABLE, RobotsAnswer, lasting, lasting_answer

__all__ = [
    "UNCONNECTABLE",
    "RobotsAnswer",
    "RobotsRules",
    "lasting",
    "lasting_answer",
    "parse_robots",
    "product_token",
]
