"""Frontier.visiting: seed 001's "in visit" flag, for the domain registry."""

from __future__ import annotations

from gossamer.robots import RobotsRules

from .test_frontier import Clock, job, make


def test_a_host_is_in_visit_from_hand_out_to_done() -> None:
    frontier, _ = make(Clock(), delay=0.0)
    frontier.add(job("http://a", "/x"))
    frontier.add(job("http://b", "/y"))
    assert frontier.visiting() == frozenset()  # queued only

    robots = frontier.pop_ready()  # handed out: leased, not fetched yet
    assert robots is not None and robots.robots
    assert frontier.visiting() == {robots.host}

    frontier.set_robots(f"http://{robots.host}", RobotsRules.allow_all())
    frontier.done(robots, success=True)
    assert frontier.visiting() == frozenset()

    both = [frontier.pop_ready(), frontier.pop_ready()]
    assert {j.host for j in both if j is not None} == frontier.visiting() == {"a", "b"}
    for handed in both:
        assert handed is not None
        frontier.done(handed, success=True)
    assert frontier.visiting() == frozenset()
