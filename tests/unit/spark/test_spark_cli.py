"""``--engine spark`` on the command line: one error line when PySpark or Java is missing, and
the local engine's refusal of several folders (``rank`` and ``index`` alike)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gossamer import extras
from gossamer.cli import main

from ..index.fake_crawl import FakePage, html, make_crawl
from ..without import gossamer_without


def _folder(tmp_path: Path) -> Path:
    return make_crawl(tmp_path / "crawl", [FakePage("http://a.test/", html("A", "a"))])


def test_without_pyspark_the_spark_engine_names_the_extra(tmp_path: Path) -> None:
    ran = gossamer_without(("pyspark",), "rank", str(_folder(tmp_path)), "--engine", "spark")
    assert ran.returncode == 2
    assert ran.stderr.strip() == (
        "gossamer: error: gossamer rank --engine spark needs the spark extra:"
        " pip install 'gossamer[spark]'"
    )


def test_without_java_the_spark_engine_says_so_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    assert main(["rank", str(folder), "--engine", "spark"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("gossamer: error: gossamer rank --engine spark runs on Spark,")
    assert "openjdk-17-jre-headless" in err and "\n" not in err
    assert not (folder / "rank").exists()


@pytest.mark.parametrize("command", ["rank", "index"])
def test_the_local_engine_reads_one_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    assert main([command, str(_folder(tmp_path)), str(tmp_path), "--engine", "local"]) == 2
    assert "merge the workers' folders first" in capsys.readouterr().err
    assert main([command, str(_folder(tmp_path)), "--out", str(tmp_path / "o")]) == 2
    assert "--out needs --engine spark" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", ["rank", "index"])
def test_several_folders_on_spark_need_an_output_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    assert main([command, str(_folder(tmp_path)), str(tmp_path), "--engine", "spark"]) == 2
    assert "needs --out DIR" in capsys.readouterr().err


def test_the_spark_extra_is_pyprojects_and_outside_all() -> None:
    import tomllib  # noqa: PLC0415

    root = Path(__file__).parents[3]
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    optional = project["optional-dependencies"]
    assert [spec.split(">")[0] for spec in optional["spark"]] == list(extras.APART["spark"])
    assert "spark" not in optional["all"][0]
    assert "'.[all,dev,spark]'" in (root / "Makefile").read_text(encoding="utf-8")
