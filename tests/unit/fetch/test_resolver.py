"""--resolve parsing and the SSRF guard."""

from __future__ import annotations

import asyncio

import pytest

from gossamer.errors import BlockedAddressError, ConfigError
from gossamer.fetch.resolver import GuardedResolver, check_literal, is_public, parse_resolve


def test_parse_forms() -> None:
    assert parse_resolve("example.org:127.0.0.1").address == "127.0.0.1"
    rule = parse_resolve("Example.org:8080:127.0.0.2")
    assert (rule.pattern, rule.port, rule.address) == ("example.org", 8080, "127.0.0.2")
    assert parse_resolve("*.web.test:127.0.0.1").matches("site-001.web.test", 80)
    assert parse_resolve("h:[::1]").address == "::1"


@pytest.mark.parametrize("bad", ["nohost", "host:notanip", ":127.0.0.1", "h:99999:127.0.0.1"])
def test_bad_entries_are_config_errors(bad: str) -> None:
    with pytest.raises(ConfigError):
        parse_resolve(bad)


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("127.0.0.1", False),
        ("10.1.2.3", False),
        ("192.168.0.1", False),
        ("169.254.169.254", False),
        ("224.0.0.1", False),
        ("::1", False),
        ("::ffff:127.0.0.1", False),
        ("fe80::1", False),
        ("2001:4860:4860::8888", True),
    ],
)
def test_is_public(address: str, public: bool) -> None:
    assert is_public(address) is public


def test_literal_private_addresses_are_blocked_unless_opted_in() -> None:
    with pytest.raises(BlockedAddressError):
        check_literal("127.0.0.1", (), allow_private=False)
    with pytest.raises(BlockedAddressError):
        check_literal("[::1]", (), allow_private=False)
    check_literal("127.0.0.1", (), allow_private=True)
    with pytest.raises(BlockedAddressError):  # a rule opts in the names it maps, not the address
        check_literal("127.0.0.1", (parse_resolve("x:127.0.0.1"),), allow_private=False)
    check_literal("127.0.0.1", (parse_resolve("127.0.0.1:127.0.0.1"),), allow_private=False)
    check_literal("example.org", (), allow_private=False)


def test_resolver_uses_rules_and_blocks_private_system_answers() -> None:
    async def scenario() -> None:
        resolver = GuardedResolver((parse_resolve("*.web.test:127.0.0.1"),), allow_private=False)
        try:
            mapped = await resolver.resolve("a.web.test", 80)
            assert mapped[0]["host"] == "127.0.0.1"
            with pytest.raises(BlockedAddressError):
                await resolver.resolve("localhost", 80)
        finally:
            await resolver.close()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    "host",
    ["example.com", "site-000.web.test", "1.2.3", "999.0.0.1", "10.0.0.1.example", "\u0661.1.1.1"],
)
def test_names_and_malformed_literals_are_left_to_the_resolver(host: str) -> None:
    check_literal(host, (), allow_private=False)  # no exception: not an IP literal


@pytest.mark.parametrize("host", ["10.0.0.1", "[fe80::1]", "[::ffff:127.0.0.1]", "0.0.0.0"])
def test_private_literals_are_refused_whatever_their_spelling(host: str) -> None:
    with pytest.raises(BlockedAddressError):
        check_literal(host, (), allow_private=False)
