"""Monitor, charts: matplotlib figures drawn as SVG text, for the crawl report and the
dashboard's live chart.

Data flow: ``Timeline``, ``Histogram`` and the counters (``CrawlStats`` or a status) ->
**charts** -> inline ``<svg>`` in ``reports/report.html`` (``monitor/report.py``) and
``/crawl/chart.svg`` of ``gossamer serve``.

matplotlib takes about a second to import, so it is imported on the first drawing, never by
the crawl's start-up, and only its object API is used (``Figure``, no ``pyplot``, no GUI
backend; ``Agg`` is selected in case anything asks pyplot). Settings apply through
``rc_context`` around each drawing, not to the process; one drawing at a time (a lock), since
rc settings are matplotlib-wide. Text stays text in the SVG (``svg.fonttype: none``) and ids
are salted with a fixed string, so the same data gives the same bytes. Each chart places its
axes itself (``add_axes``): matplotlib's automatic layouts draw everything twice, which made a
report take seconds.

matplotlib is the charts extra: without it each chart is a line of text in its place naming
the extra to install, so a lean crawler still writes report.html (and the Crawl page still
shows where its chart would be).
"""

from __future__ import annotations

import functools
import html
import io
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, ParamSpec

from gossamer import extras
from gossamer.monitor.series import LATENCY_BOUNDS, Histogram, Timeline

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["activity_chart", "domain_chart", "latency_chart", "outcome_chart", "pages_chart"]

_LOCK = threading.Lock()
BLUE, RED, GREY = "#3c4ba0", "#c0392b", "#7f8c8d"
_P = ParamSpec("_P")


def _no_chart() -> str:
    note = html.escape(str(extras.MissingExtraError("this chart", ("charts",))))
    return (
        '<svg xmlns="http://www.w3.org/2000/svg" width="640" height="32" role="img">'
        f'<text x="0" y="20" font-family="sans-serif" font-size="13" fill="{GREY}">'
        f"{note}</text></svg>"
    )


def _drawn(chart: Callable[_P, str]) -> Callable[_P, str]:
    """``chart``, or without matplotlib the line that says which extra draws it."""

    @functools.wraps(chart)
    def draw(*args: _P.args, **kwargs: _P.kwargs) -> str:
        return chart(*args, **kwargs) if extras.installed("charts") else _no_chart()

    return draw


def warm() -> None:
    """Import what drawing takes (about half a second) ahead of the first chart: called on a
    thread of its own at a crawl's start (``warm_in_background``), it takes the import off the
    crawl's end. Without the charts extra it does nothing."""
    if not extras.installed("charts"):
        return
    with _LOCK:
        import matplotlib  # noqa: PLC0415

        matplotlib.use("Agg")
        import matplotlib.backends.backend_svg  # noqa: PLC0415 - what savefig writes with
        from matplotlib.figure import Figure  # noqa: F401, PLC0415


def warm_in_background() -> threading.Thread:
    """``warm`` on a thread of its own, started; the caller may join it (it is not a daemon:
    an interpreter never exits in the middle of an import)."""
    thread = threading.Thread(target=warm, name="gossamer-charts-warm")
    thread.start()
    return thread


@contextmanager
def _figure(width: float, height: float) -> Iterator[Figure]:
    import matplotlib  # noqa: PLC0415 - a second of import, paid only when drawing

    matplotlib.use("Agg")
    from matplotlib.figure import Figure  # noqa: PLC0415

    settings = matplotlib.rc_context(
        {
            "svg.fonttype": "none",
            "svg.hashsalt": "gossamer",
            "font.size": 9,
            "font.family": "sans-serif",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            # A fixed title height: matplotlib otherwise measures every axis of a chart to
            # lift a title over tick labels on top, which these charts never have.
            "axes.titley": 1.0,
            "grid.alpha": 0.3,
        }
    )
    with _LOCK, settings:
        # Margins are set per chart: an automatic layout draws every chart twice.
        yield Figure(figsize=(width, height))


def _pair(figure: Figure, *, left: float, gap: float) -> tuple[Axes, Axes]:
    """Two axes side by side, ``left`` and ``gap`` (figure fractions) kept for their labels."""
    width = (0.98 - left - gap) / 2
    return (
        figure.add_axes((left, 0.15, width, 0.75)),
        figure.add_axes((left + width + gap, 0.15, width, 0.75)),
    )


def _svg(figure: Figure) -> str:
    out = io.StringIO()
    figure.savefig(out, format="svg", metadata={"Date": None})
    text = out.getvalue()
    return text[text.index("<svg") :]  # inline: no XML declaration, no DOCTYPE


def _empty(axes: Axes, text: str) -> None:
    axes.text(0.5, 0.5, text, ha="center", va="center", transform=axes.transAxes, color=GREY)
    axes.set_xticks([])
    axes.set_yticks([])


def _per_second(times: Sequence[float], values: Sequence[int]) -> list[float]:
    rates = [0.0]
    for i in range(1, len(times)):
        span = times[i] - times[i - 1]
        rates.append((values[i] - values[i - 1]) / span if span > 0 else 0.0)
    return rates


@_drawn
def pages_chart(timeline: Timeline) -> str:
    """Pages stored over the crawl's time, and their rate."""
    with _figure(7.5, 3.2) as figure:
        total, rate = _pair(figure, left=0.09, gap=0.12)
        if len(timeline.times) < 2:
            _empty(total, "no samples yet")
            _empty(rate, "no samples yet")
            return _svg(figure)
        pages = timeline.column("pages")
        total.plot(timeline.times, pages, color=BLUE)
        total.set(title="Pages stored", xlabel="crawl time (s)", ylabel="pages")
        rate.plot(timeline.times, _per_second(timeline.times, pages), color=BLUE)
        rate.set(title="Pages per second", xlabel="crawl time (s)", ylabel="pages/s")
        return _svg(figure)


@_drawn
def activity_chart(timeline: Timeline) -> str:
    """Pages and errors per second over the crawl's time (the dashboard's live chart)."""
    with _figure(7.5, 2.6) as figure:
        axes = figure.add_axes((0.08, 0.18, 0.9, 0.76))
        if len(timeline.times) < 2:
            _empty(axes, "no samples yet")
            return _svg(figure)
        axes.plot(
            timeline.times,
            _per_second(timeline.times, timeline.column("pages")),
            color=BLUE,
            label="pages/s",
        )
        axes.plot(
            timeline.times,
            _per_second(timeline.times, timeline.column("errors")),
            color=RED,
            label="errors/s",
        )
        axes.set(xlabel="crawl time (s)", ylabel="per second")
        axes.legend(loc="upper left", frameon=False)
        return _svg(figure)


@_drawn
def outcome_chart(statuses: Mapping[str, int], errors: Mapping[str, int]) -> str:
    """Responses by HTTP status, and errors by kind (the 12 most frequent)."""
    with _figure(7.5, 3.2) as figure:
        left, right = _pair(figure, left=0.2, gap=0.3)
        _bars(left, {f"HTTP {k}": v for k, v in statuses.items()}, BLUE, "Responses by status")
        top = dict(sorted(errors.items(), key=lambda item: -item[1])[:12])
        _bars(right, top, RED, "Errors by kind")
        return _svg(figure)


def _bars(axes: Axes, counts: Mapping[str, int], color: str, title: str) -> None:
    axes.set_title(title)
    if not counts:
        _empty(axes, "none")
        return
    labels = list(counts)
    axes.barh(labels, [counts[k] for k in labels], color=color)
    axes.invert_yaxis()
    axes.set_xlabel("count")


@_drawn
def domain_chart(pages_per_host: Sequence[int]) -> str:
    """Pages per host, hosts ranked by pages on log axes: the crawl's long tail."""
    with _figure(7.5, 3.0) as figure:
        axes = figure.add_axes((0.09, 0.16, 0.88, 0.74))
        ranked = sorted((n for n in pages_per_host if n > 0), reverse=True)
        if not ranked:
            _empty(axes, "no pages")
            return _svg(figure)
        ranks = range(1, len(ranked) + 1)
        axes.plot(ranks, ranked, marker="." if len(ranked) < 60 else "", color=BLUE)
        axes.set_xscale("log")
        axes.set_yscale("log")
        _plain_ticks(axes)
        axes.set(title=f"Pages per host ({len(ranked)} hosts)", xlabel="host rank", ylabel="pages")
        return _svg(figure)


def _plain_ticks(axes: Axes) -> None:
    """Log axes labelled 1, 10, 100 rather than in mathtext (which costs a tenth of a second)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: PLC0415

    for axis in (axes.xaxis, axes.yaxis):
        axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))  # 1 2 5 10 20 50 ...
        axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
        axis.set_minor_formatter(NullFormatter())


@_drawn
def latency_chart(histogram: Histogram) -> str:
    """How long responses took, in the histogram's buckets."""
    with _figure(7.5, 3.0) as figure:
        axes = figure.add_axes((0.09, 0.27, 0.88, 0.63))
        if not histogram.count:
            _empty(axes, "no responses")
            return _svg(figure)
        labels = [f"≤{_seconds(b)}" for b in LATENCY_BOUNDS] + [f">{_seconds(LATENCY_BOUNDS[-1])}"]
        axes.bar(labels, histogram.counts, color=BLUE)
        axes.tick_params(axis="x", labelrotation=45)
        mean = histogram.total / histogram.count
        axes.set(
            title=f"Response times ({histogram.count} responses, mean {mean:.3f} s)",
            ylabel="responses",
        )
        return _svg(figure)


def _seconds(bound: float) -> str:
    return f"{bound * 1000:g} ms" if bound < 1 else f"{bound:g} s"
