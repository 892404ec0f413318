"""Values produced by the fetch stage and consumed by parse and store.

Header values are kept as the bytes the server sent, one character per byte (Latin-1), so the
WARC writer can give the bytes back. Reading a header that carries a URL (:data:`URL_HEADERS`)
through :meth:`FetchResult.header` decodes it as UTF-8 when its bytes are valid UTF-8, as
browsers and curl do: ``Location: /caf\xc3\xa9`` means ``/café``, not ``/cafÃ©``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Headers = tuple[tuple[str, str], ...]
URL_HEADERS = frozenset({"location", "content-location", "link", "refresh"})


def url_header_text(value: str) -> str:
    """A URL-bearing header value as text: its bytes read as UTF-8 when they are valid UTF-8.

    ``value`` holds one character per byte received; a value that does not (one read back
    from a WARC file by a reader that decoded it already) is returned as it is.
    """
    try:
        return value.encode("latin-1").decode("utf-8")
    except UnicodeError:
        return value


@dataclass(frozen=True, slots=True)
class FetchResult:
    """One HTTP exchange, as seen on the wire.

    ``body`` holds the payload exactly as received after de-chunking (still content-encoded);
    ``content`` holds the decoded entity (gzip, br, ... removed). ``error`` is set, with
    ``status`` 0, when the fetch failed below HTTP; then no WARC record is written.
    ``content_type`` is the type the crawl goes by: the Content-Type header, or the sniffed
    type when the header gives none or calls a PDF something else (see ``fetch/sniff.py``);
    the header as sent stays in ``response_headers``.
    """

    url: str
    status: int
    reason: str = ""
    http_version: str = "1.1"
    request_headers: Headers = ()
    response_headers: Headers = ()
    body: bytes = b""
    content: bytes = b""
    content_type: str = ""
    started_at: float = 0.0  # wall clock, seconds since the epoch
    elapsed: float = 0.0  # seconds from request to last byte
    remote_ip: str = ""
    error: str = ""  # error kind for statistics, e.g. "timeout", "too_large", "dns"
    error_detail: str = ""
    truncated: bool = False
    skipped_body: bool = False  # body not read: type not kept or too large by headers
    # A rendered page (gossamer.render): how its rendering ended, and its DOM (UTF-8 HTML),
    # archived beside the response and parsed for links instead of ``content``.
    render: str = ""
    rendered: bytes | None = None
    screenshot: bytes | None = None  # a PNG of the rendered page, if asked for
    extra: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    def header(self, name: str) -> str | None:
        """First value of a response header, case-insensitively; a URL-bearing one as text
        (:func:`url_header_text`)."""
        lname = name.lower()
        for key, value in self.response_headers:
            if key.lower() == lname:
                return url_header_text(value) if lname in URL_HEADERS else value
        return None

    @property
    def is_redirect(self) -> bool:
        return self.status in (301, 302, 303, 307, 308)
