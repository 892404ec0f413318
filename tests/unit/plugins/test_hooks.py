"""Issue 33: extraction rules, the hooks that run plugins, and how plugins are loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gossamer.config import (
    CrawlConfig,
    ExtractRule,
    ScopeConfig,
    config_from_json,
    config_to_json,
    load_config,
)
from gossamer.distributed.settings import from_json, to_json
from gossamer.errors import ConfigError
from gossamer.plugins import Link, Page, PageResult, Plugin
from gossamer.plugins.hooks import CrawlHooks, ErrorLog, ItemSink, crawl_hooks
from gossamer.plugins.loading import load_plugin
from gossamer.plugins.rules import RulesPlugin
from gossamer.stats import CrawlStats

HTML = """<html><head><title>Shop</title></head><body>
<h1> Blue   kettle </h1><span class="price">12.50</span><span class="price">9.99</span>
<a href="/a" data-sku="K-1">a</a><a href="/b" data-sku="K-2">b</a></body></html>"""


def _page(url: str = "http://shop.test/product/1") -> Page:
    return Page(url, 200, "text/html", HTML, ("http://shop.test/a", "http://shop.test/b"), 1)


def test_rules_take_css_attributes_and_regex_groups() -> None:
    rules = RulesPlugin(
        [
            ExtractRule("name", css="h1"),
            ExtractRule("prices", css=".price", all=True),
            ExtractRule("first_sku", css="a", attr="data-sku"),
            ExtractRule("skus", regex=r'data-sku="([^"]+)"', all=True),
            ExtractRule("title", regex=r"<title>.*?</title>"),
            ExtractRule("missing", css=".nothing"),
            ExtractRule("only_blog", css="h1", url="/blog/"),
        ]
    )
    result = rules.on_page(_page())
    assert result is not None
    assert result.items == (
        {
            "name": "Blue kettle",
            "prices": ["12.50", "9.99"],
            "first_sku": "K-1",
            "skus": ["K-1", "K-2"],
            "title": "<title>Shop</title>",
            "missing": None,
        },
    )
    assert RulesPlugin([ExtractRule("x", css="h1", url="/blog/")]).on_page(_page()) is None


class _Faulty(Plugin):
    name = "faulty"

    def on_page(self, page: Page) -> PageResult | None:
        if page.url.endswith("/2"):
            raise ValueError("no price here")
        return PageResult(items=({"ok": True}, {"bad": object()}), drop=frozenset({"x"}))

    def keep_link(self, link: Link) -> bool:
        if link.url.endswith("/b"):
            raise RuntimeError("cannot tell")
        return not link.url.endswith("/a")


def _hooks(tmp_path: Path, *plugins: Plugin) -> tuple[CrawlHooks, CrawlStats]:
    stats = CrawlStats()
    hooks = CrawlHooks(
        plugins,
        items=ItemSink(tmp_path / "items.jsonl"),
        errors=ErrorLog(tmp_path / "reports" / "plugin-errors.tsv"),
        stats=stats,
    )
    return hooks, stats


def test_a_raising_hook_is_counted_with_its_url_and_the_rest_goes_on(tmp_path: Path) -> None:
    hooks, stats = _hooks(tmp_path, _Faulty(), RulesPlugin([ExtractRule("name", css="h1")]))
    drop, admit = hooks.page(_page("http://shop.test/product/1"), "shop.test")
    assert (drop, admit) == (frozenset({"x"}), ())
    assert hooks.page(_page("http://shop.test/product/2"), "shop.test") == (frozenset(), ())
    # The link hook: a raise keeps the link; False drops it.
    assert hooks.keep(Link("http://shop.test/b", "http://shop.test/product/1", 2), "shop.test")
    assert not hooks.keep(Link("http://shop.test/a", "http://shop.test/product/1", 2), "h")
    hooks.close()
    lines = [json.loads(line) for line in (tmp_path / "items.jsonl").read_text().splitlines()]
    assert lines == [
        {"url": "http://shop.test/product/1", "source": "faulty", "ok": True},
        {"url": "http://shop.test/product/1", "source": "extract", "name": "Blue kettle"},
        {"url": "http://shop.test/product/2", "source": "extract", "name": "Blue kettle"},
    ]
    # The item that is not JSON, the page that raised, the link that raised.
    assert stats.errors["plugin_error"] == 3 and hooks.failures == 3
    rows = [
        r.split("\t") for r in (tmp_path / "reports" / "plugin-errors.tsv").read_text().splitlines()
    ]
    assert [(r[1], r[2], r[3]) for r in rows] == [
        ("faulty", "on_page", "http://shop.test/product/1"),
        ("faulty", "on_page", "http://shop.test/product/2"),
        ("faulty", "keep_link", "http://shop.test/product/1"),
    ]
    assert rows[1][4] == "ValueError: no price here"


def test_loading_names_what_is_wrong(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text(
        "from gossamer.plugins import Plugin\nclass P(Plugin):\n    name = 'p'\nplugin = P\n"
    )
    assert load_plugin(str(good)).name == "p"
    cases = {
        "none.py": ("x = 1\n", "defines no 'plugin'"),
        "broken.py": ("def (:\n", "failed to load: SyntaxError"),
        "other.py": ("plugin = 42\n", "is not a gossamer.plugins.Plugin (got int)"),
    }
    for name, (text, said) in cases.items():
        (tmp_path / name).write_text(text)
        with pytest.raises(ConfigError, match=said.replace("(", r"\(").replace(")", r"\)")):
            load_plugin(str(tmp_path / name))
    with pytest.raises(ConfigError, match="not found"):
        load_plugin(str(tmp_path / "absent.py"))
    with pytest.raises(ConfigError, match=r"no plugin file or 'gossamer\.plugins' entry point"):
        load_plugin("no-such-plugin")


def _config(tmp_path: Path, toml: str) -> CrawlConfig:
    (tmp_path / "c.toml").write_text(toml)
    return load_config(tmp_path / "seeds", tmp_path / "out", tmp_path / "c.toml", {})


def test_extract_tables_and_plugins_travel_with_the_crawl(tmp_path: Path) -> None:
    plugin = tmp_path / "p.py"
    plugin.write_text("from gossamer.plugins import Plugin\nplugin = Plugin()\n")
    config = _config(
        tmp_path,
        f'plugins = ["{plugin}"]\n[[extract]]\nfield = "price"\ncss = ".price"\n'
        '[[extract]]\nfield = "sku"\nregex = "sku=(\\\\w+)"\nurl = "/product/"\nall = true\n',
    )
    rules = (
        ExtractRule("price", css=".price"),
        ExtractRule("sku", regex=r"sku=(\w+)", url="/product/", all=True),
    )
    assert config.scope.extract == rules and config.scope.plugins == (str(plugin),)
    # crawl.json (--resume, each --workers process) and Redis (a shared crawl's joiners).
    again = config_from_json(json.loads(json.dumps(config_to_json(config))), config.out)
    assert again.scope == config.scope
    assert from_json(to_json(config), config.seeds, config.out).scope == config.scope
    hooks = crawl_hooks(config.scope, tmp_path, CrawlStats())
    assert hooks is not None
    assert crawl_hooks(ScopeConfig(), tmp_path, CrawlStats()) is None


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ('[[extract]]\ncss = "h1"\n', "table 1 needs a field name"),
        ('[[extract]]\nfield = "a"\n', "'a' needs one of css or regex"),
        ('[[extract]]\nfield = "a"\ncss = "h1"\nregex = "x"\n', "'a' needs one of css or regex"),
        ('[[extract]]\nfield = "a"\nregex = "("\n', "'a': regex is not a regular expression"),
        ('[[extract]]\nfield = "a"\ncss = "h1["\n', "'a': css 'h1[' is not a selector"),
        ('[[extract]]\nfield = "a"\ncss = "h1"\ncolour = 1\n', "unknown key 'colour'"),
        ('plugins = ["nowhere.py"]\n', "entry 'nowhere.py' is unusable: plugin file"),
    ],
)
def test_bad_rules_and_plugins_are_one_line(tmp_path: Path, toml: str, said: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _config(tmp_path, toml)
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_an_entry_point_of_the_plugins_group_is_found_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "facts_plugin.py").write_text(
        "from gossamer.plugins import Plugin\nclass Facts(Plugin):\n    name = 'facts'\n"
    )
    info = tmp_path / "facts_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: facts-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[gossamer.plugins]\nfacts = facts_plugin:Facts\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert load_plugin("facts").name == "facts"
