"""An https server on loopback with a certificate of its own, for what the sign-in facade fetches
(client ID metadata documents must be https). ``ca_file`` is what a client trusts it through:
``SSL_CERT_FILE``, which ``ssl.create_default_context()`` reads."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

#: path -> (status, content type, body, extra headers); ``None`` for a path answers 404.
Routes = dict[str, tuple[int, str, bytes, dict[str, str]]]


@dataclass
class HttpsServer:
    url: str  # https://127.0.0.1:<port>
    ca_file: Path
    routes: Routes
    requests: list[str]


def _certificate(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = directory / "cert.pem", directory / "key.pem"
    cert_file.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return cert_file, key_file


@contextmanager
def https_server(directory: Path, delay: Callable[[str], float] = lambda path: 0.0) -> Iterator[HttpsServer]:
    """Serve ``server.routes`` (filled by the test) over https on a free loopback port."""
    cert_file, key_file = _certificate(directory)
    routes: Routes = {}
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.path)
            pause = delay(self.path)
            if pause:
                threading.Event().wait(pause)
            found = routes.get(self.path)
            if found is None:
                self.send_error(404)
                return
            status, content_type, body, headers = found
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_file, key_file)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield HttpsServer(f"https://127.0.0.1:{server.server_port}", cert_file, routes, seen)
    finally:
        server.shutdown()
        server.server_close()
