"""Web: the search UI served by ``gossamer serve``.

Data flow: index -> rank -> search -> **web**. ``app`` holds the routes and the security
policy, ``pages`` and ``render`` produce the HTML, ``cached`` reads archived copies.
"""

from gossamer.web.app import CACHED_POLICY, PAGE_POLICY, make_app, serve

__all__ = ["CACHED_POLICY", "PAGE_POLICY", "make_app", "serve"]
