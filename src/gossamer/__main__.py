"""Entry point for ``python -m gossamer``."""

from gossamer.cli import main

raise SystemExit(main())
