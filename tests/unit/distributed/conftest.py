"""Fixtures of the shared-frontier tests (defined in redis_rig, shared with the integration
tests): a real redis-server per module, a fresh crawl name per test. Without the redis client
the test modules skip themselves, saying so."""

try:
    from tests.unit.distributed.redis_rig import crawl_name, fresh_server, redis_server
except ImportError:  # the redis client is missing: every module here is skipped
    pass
else:
    __all__ = ["crawl_name", "fresh_server", "redis_server"]
