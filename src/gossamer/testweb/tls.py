"""Test web, TLS: a throwaway certificate authority and a certificate for every test host.

Role in the data flow: none in production. A test that serves the web over https as well calls
:func:`make_certificates`: it creates a CA with ``trustme`` (a development dependency, imported
only when the function runs, so production code never needs it), issues one certificate for
``*.web.test`` and ``web.test``, and writes the CA's PEM to a file, which is what the crawler's
``--ca-file`` reads. The server context goes to ``TestWebServer(ssl_context=...)``; clients in
tests trust the CA through :meth:`WebCertificates.client_context`.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

from gossamer.testweb.model import DOMAIN

CA_FILE_NAME = "testweb-ca.pem"


@dataclass(frozen=True, slots=True)
class WebCertificates:
    """A server context for the test web's https socket and the CA that signed it."""

    server_context: ssl.SSLContext
    ca_file: Path  # the CA certificate as PEM

    def client_context(self) -> ssl.SSLContext:
        """A client context that trusts the test CA (and nothing else)."""
        return ssl.create_default_context(cafile=str(self.ca_file))


def make_certificates(directory: Path) -> WebCertificates:
    """A fresh CA and server certificate; the CA's PEM goes to ``directory/testweb-ca.pem``."""
    import trustme  # noqa: PLC0415  # development dependency: tests only

    authority = trustme.CA()
    issued = authority.issue_cert(f"*.{DOMAIN}", DOMAIN)
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    issued.configure_cert(server)
    ca_file = directory / CA_FILE_NAME
    authority.cert_pem.write_to_path(str(ca_file))
    return WebCertificates(server, ca_file)
