"""The SSRF guard on IP literals: a --resolve entry opts in names, never the address itself."""

from __future__ import annotations

import asyncio

import pytest

from gossamer.errors import BlockedAddressError, FetchError
from gossamer.fetch.resolver import GuardedResolver, check_literal, parse_resolve

TEST_WEB = (parse_resolve("*.web.test:127.0.0.1"), parse_resolve("*.hostile.test:[::1]"))


@pytest.mark.parametrize(
    "literal", ["127.0.0.1", "[::1]", "10.0.0.1", "169.254.169.254", "[fe80::1]"]
)
def test_rules_for_names_do_not_open_their_address(literal: str) -> None:
    with pytest.raises(BlockedAddressError):
        check_literal(literal, TEST_WEB, allow_private=False)


def test_a_rule_naming_the_literal_opts_it_in() -> None:
    check_literal("127.0.0.1", (parse_resolve("127.0.0.1:127.0.0.1"),), allow_private=False)
    check_literal("127.0.0.1", TEST_WEB, allow_private=True)
    check_literal("8.8.8.8", (), allow_private=False)  # public: nothing to opt into


def test_a_name_that_cannot_be_encoded_is_a_dns_failure() -> None:
    async def scenario() -> None:
        resolver = GuardedResolver((), allow_private=False)
        try:
            # Rejected by the IDNA codec before any query leaves the machine.
            with pytest.raises(FetchError) as info:
                await resolver.resolve("a" * 64 + ".example", 80)
            assert info.value.kind == "dns"
        finally:
            await resolver.close()

    asyncio.run(scenario())
