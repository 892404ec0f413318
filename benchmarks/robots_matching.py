"""Time of robots.txt matching against pathological patterns and paths (issue 18).

    python benchmarks/robots_matching.py --repeat 10

The unit tests bound the work of these cases by counting the searches the matcher makes
(tests/unit/robots/test_parser.py, test_canonical_rules.py); this prints how long they take.

* many rules: 3,000 wildcard Disallow rules, 3,000 Allow prefixes and one rule of eight
  ``*a`` pieces, asked about a path of 100,000 ``a``;
* many stars: one rule of 5,000 ``*{`` pieces (kept to a few spellings), asked about a path of
  10,000 ``x``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

from gossamer.robots import RobotsRules, parse_robots


def many_rules() -> tuple[RobotsRules, str]:
    lines = ["User-agent: gossamer"]
    lines += [f"Disallow: /section-{n}/*item*{n}$" for n in range(3000)]
    lines += [f"Allow: /page-{n}" for n in range(3000)]
    lines.append("Disallow: /*a*a*a*a*a*a*a*a*b")
    return parse_robots("\n".join(lines).encode(), "gossamer"), "/" + "a" * 100_000


def many_stars() -> tuple[RobotsRules, str]:
    robots_txt = "User-agent: *\nDisallow: /" + "*{" * 5000 + "\n"
    return parse_robots(robots_txt.encode(), "gossamer"), "/" + "x" * 10_000


def timed(case: Callable[[], tuple[RobotsRules, str]], repeat: int) -> dict[str, float]:
    started = time.perf_counter()
    rules, path = case()
    parsed = time.perf_counter()
    for _ in range(repeat):
        rules.is_allowed(path)
    asked = time.perf_counter()
    return {"parse_s": parsed - started, "per_question_ms": (asked - parsed) / repeat * 1000}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    report = {
        "many_rules": timed(many_rules, args.repeat),
        "many_stars": timed(many_stars, args.repeat),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
