"""The Promela models of the threaded crawler (``models/``), checked exhaustively by Spin.

Where it sits: beside the threaded engine's own tests (``tests/unit/threads``), this checks
the design those modules implement, abstracted in ``models/pipeline.pml`` (crawlers ->
bounded buffers -> index builders -> URL tree) and ``models/frontier.pml`` (the shared
frontier's strategies).  ``models/README.md`` explains every case and its figures.

Each case generates the verifier (``spin -a``), compiles it (``gcc``) and runs ``pan`` with
a temporary folder as the working directory, so nothing Spin writes (``pan.*``,
``_spin_nvr.tmp``, trails) lands in the repository; then it reads pan's report: the error
count, the states stored, the memory and the time, printed so that ``pytest -s`` shows them.

- The verified models end with "errors: 0" over the full state space, in three modes:
  safety (assertions, invalid end states), liveness (the LTL claim ``terminates`` under weak
  fairness) and, for the frontiers that never wait by spinning, liveness with no fairness.
- The variants with synchronisation removed or the protocol broken are rejected, with the
  violation the README explains.
- Two designs end only under a fair scheduler: the polling retry (``POLL_FOR_ROOM``) and the
  fine-grained queue verify with weak fairness and show a cycle without it.
- The kept counterexample trails still replay, step for step.

Skipped, with the reason, when ``spin`` or ``gcc`` is missing (``make spin`` installs Spin).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

MODELS = Path(__file__).resolve().parents[2] / "models"
TRAILS = MODELS / "trails"
SPIN = shutil.which("spin")
GCC = shutil.which("gcc")
if SPIN is None or GCC is None:
    pytest.skip(
        "Spin model checking needs `spin` and `gcc` on PATH (make spin installs Debian's spin)",
        allow_module_level=True,
    )

SAFETY = "safety"  # assertions and invalid end states, no never claim
LIVENESS = "liveness"  # the LTL claim `terminates`, acceptance cycles under weak fairness
UNFAIR = "unfair"  # the same claim with no fairness: any endless run is a counterexample
NO_DEPTH_LIMIT = "-m200000"  # far beyond the deepest run, so the search is never cut short
CYCLE = "acceptance cycle"


@dataclass(frozen=True, slots=True)
class Check:
    """One pan run: a model with its -D switches, the mode, and what pan must report."""

    name: str
    model: str
    defines: tuple[str, ...]
    mode: str
    violation: str | None = None  # None: must verify; else a phrase pan's report must contain


@dataclass(frozen=True, slots=True)
class PanReport:
    errors: int
    states: int  # stored
    visited: int  # liveness: the nested cycle search revisits states, fairness copies them
    memory_mb: float
    seconds: float
    text: str


def _strategy(number: int, *extra: str) -> tuple[str, ...]:
    return (f"-DSTRATEGY={number}", *extra)


SEMAPHORE, MONITOR, COARSE, FINE = _strategy(2), _strategy(3), _strategy(4), _strategy(5)
POLL = _strategy(2, "-DPOLL_FOR_ROOM")

VERIFIED = [
    Check(f"{name}-{mode}", model, defines, mode)
    for name, model, defines in [
        ("pipeline", "pipeline.pml", ()),
        ("frontier-semaphore", "frontier.pml", SEMAPHORE),
        ("frontier-monitor", "frontier.pml", MONITOR),
        ("frontier-coarse", "frontier.pml", COARSE),
        ("frontier-fine", "frontier.pml", FINE),
    ]
    for mode in (SAFETY, LIVENESS)
] + [
    Check("frontier-semaphore-unfair", "frontier.pml", SEMAPHORE, UNFAIR),
    Check("frontier-monitor-unfair", "frontier.pml", MONITOR, UNFAIR),
    Check("frontier-coarse-unfair", "frontier.pml", COARSE, UNFAIR),
    Check("frontier-poll-for-room-liveness", "frontier.pml", POLL, LIVENESS),
]
REJECTED = [
    Check("pipeline-datarace", "pipeline.pml", ("-DSHOW_DATARACE",), SAFETY, "!(exists[k])"),
    Check("frontier-unsync", "frontier.pml", _strategy(1), SAFETY, "(crawled[u]==1)"),
    Check(
        "frontier-block-with-pending",
        "frontier.pml",
        _strategy(3, "-DBLOCK_WITH_PENDING"),
        SAFETY,
        "(crawled[u]!=0)",
    ),
    Check(
        "frontier-hand-back-room",
        "frontier.pml",
        _strategy(2, "-DHAND_BACK_ROOM"),
        LIVENESS,
        CYCLE,
    ),
]
# They verify under weak fairness (VERIFIED above); with none, a thread can spin for ever.
FAIRNESS_NEEDED = [
    Check("frontier-poll-for-room-unfair", "frontier.pml", POLL, UNFAIR, CYCLE),
    Check("frontier-fine-unfair", "frontier.pml", FINE, UNFAIR, CYCLE),
]


def _run(args: list[str], cwd: Path) -> str:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    return done.stdout + done.stderr


def run_pan(check: Check, work: Path) -> PanReport:
    """Generates, compiles and runs the verifier for one check, all inside `work`."""
    generated = _run([str(SPIN), "-a", *check.defines, str(MODELS / check.model)], work)
    assert (work / "pan.c").exists(), generated
    if check.mode == SAFETY:
        flags, run_flags = ["-DSAFETY", "-DNOCLAIM"], []
    else:
        flags, run_flags = ["-DNFAIR=4"], ["-a", "-f"] if check.mode == LIVENESS else ["-a"]
    compiled = _run([str(GCC), "-O1", *flags, "-o", "pan", "pan.c"], work)
    assert (work / "pan").exists(), compiled
    return parse_pan(_run(["./pan", NO_DEPTH_LIMIT, *run_flags], work))


def parse_pan(text: str) -> PanReport:
    errors = re.search(r"errors: (\d+)", text)
    states = re.search(r"(\d+) states, stored(?: \(([\d.e+]+) visited\))?", text)
    memory = re.search(r"([\d.]+)\s+total actual memory usage", text)
    seconds = re.search(r"pan: elapsed time ([\d.e+]+) seconds", text)
    assert errors and states and memory and seconds, text
    return PanReport(
        errors=int(errors.group(1)),
        states=int(states.group(1)),
        visited=int(float(states.group(2) or states.group(1))),
        memory_mb=float(memory.group(1)),
        seconds=float(seconds.group(1)),
        text=text,
    )


def _show(check: Check, report: PanReport) -> None:
    print(
        f"\n{check.name}: errors {report.errors}, {report.states:,} states stored "
        f"({report.visited:,} visited), "
        f"{report.memory_mb:.0f} MB, {report.seconds:.2f} s"
    )


def _assert_mode(check: Check, report: PanReport) -> None:
    """pan searched what the mode asks for: the claim, and fairness on or off."""
    if check.mode == SAFETY:
        assert "invalid end states\t+" in report.text, report.text
        return
    assert "never claim         \t+ (terminates)" in report.text, report.text
    fairness = "enabled" if check.mode == LIVENESS else "disabled"
    assert f"acceptance   cycles \t+ (fairness {fairness})" in report.text, report.text


@pytest.mark.parametrize("check", VERIFIED, ids=lambda check: check.name)
def test_model_verifies(check: Check, tmp_path: Path) -> None:
    report = run_pan(check, tmp_path)
    _show(check, report)
    _assert_mode(check, report)
    assert report.errors == 0, report.text
    assert "max search depth too small" not in report.text, report.text
    if check.mode == SAFETY:
        # Every statement of every process is reached: the bounds leave nothing vacuous.
        unreached = re.findall(
            r"unreached in (?:proctype \w+|init)\n(.*?)\((\d+) of", report.text, re.S
        )
        assert unreached, report.text
        assert all(count == "0" for _, count in unreached), report.text


@pytest.mark.parametrize("check", REJECTED + FAIRNESS_NEEDED, ids=lambda check: check.name)
def test_model_variant_is_rejected(check: Check, tmp_path: Path) -> None:
    report = run_pan(check, tmp_path)
    _show(check, report)
    _assert_mode(check, report)
    assert report.errors > 0, report.text
    assert check.violation is not None and check.violation in report.text, report.text


def _steps(replay: str) -> int:
    found = re.search(r"trail ends after (\d+) steps", replay)
    assert found, replay
    return int(found.group(1))


@pytest.mark.parametrize(
    ("trail", "model", "defines", "violation"),
    [
        ("pipeline-datarace", "pipeline.pml", ("-DSHOW_DATARACE",), "assert(!(exists[k]))"),
        ("frontier-unsync", "frontier.pml", _strategy(1), "assert((crawled[u]==1))"),
    ],
    ids=["pipeline-datarace", "frontier-unsync"],
)
def test_kept_trail_replays(
    trail: str, model: str, defines: tuple[str, ...], violation: str, tmp_path: Path
) -> None:
    """A trail is tied to the model's state numbers: models/trails/regenerate.sh after a change.

    The replay must end in the same failed assertion, after as many steps as the readable
    copy kept beside it (``<trail>.txt``, which models/README.md explains step by step).
    """
    kept = TRAILS / f"{trail}.pml.trail"
    replay = _run([str(SPIN), "-t", "-k", str(kept), "-p", *defines, str(MODELS / model)], tmp_path)
    assert f"text of failed assertion: {violation}" in replay, replay
    readable = (TRAILS / f"{trail}.txt").read_text(encoding="utf-8")
    assert _steps(replay) == _steps(readable), replay
