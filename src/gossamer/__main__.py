"""Entry point for ``python -m gossamer``."""

from gossamer.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
