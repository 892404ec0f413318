"""A proxy's faults leave no row in crawl.db, so the figures of a --workers crawl (or a
resumed one), recounted from the rows, must carry them over from the workers' snapshots, as
they carry the other errors no row records."""

from __future__ import annotations

from gossamer.engine.resume import carry_runs


def test_proxy_errors_survive_the_recount() -> None:
    runs = [{"errors": {"proxy_error": 2}}, {"errors": {"proxy_error": 1}}]
    assert carry_runs(None, runs, 1.0)["errors"].get("proxy_error") == 3


def test_local_faults_survive_the_recount() -> None:
    runs = [{"errors": {"local_fault": 1}}, {"errors": {"local_fault": 4}}]
    assert carry_runs({"errors": {"local_fault": 2}}, runs, 1.0)["errors"]["local_fault"] == 7
