"""The server's listening socket, bound before anything is announced.

``posekit up`` binds its port first and hands the bound socket to uvicorn, so a busy port
is reported before a URL is printed or a session created, and no other program can take
the port between the check and the start.
"""

from __future__ import annotations

import errno
import socket


class PortInUse(OSError):
    """Another program listens on the port."""


def bind_listener(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``(host, port)`` (IPv6 when ``host`` has a colon), ready for
    uvicorn to listen on.

    Raises:
        PortInUse: the port is taken on that interface.
        OSError: any other reason the address cannot be bound (a host that is not one of
            this machine's addresses, a privileged port).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    # As uvicorn does: a port whose last connections wait in TIME_WAIT can be reused at
    # once; one that has a listener cannot.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as error:
        listener.close()
        if error.errno == errno.EADDRINUSE:
            raise PortInUse(error.errno, f"port {port} is in use") from error
        raise
    return listener
