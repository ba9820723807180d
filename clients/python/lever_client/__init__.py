"""Python client for ``lever daemon``, the Lever resource manager.

>>> from lever_client import Client
>>> with Client() as c:                                    # doctest: +SKIP
...     with c.hold([(0x44008100, 1958400)]):  # Silver min freq 1.9 GHz
...         pass

The socket is ``$LEVER_SOCKET``, else ``/run/lever/lever.sock``.
"""

from .client import DEFAULT_SOCKET, Client, socket_path
from .protocol import SIGNAL_UNTIL_RELEASED, ErrorCode, LeverError, ProtocolError

PRIORITY_THIRD_PARTY_LOW = 0
PRIORITY_THIRD_PARTY_HIGH = 1
PRIORITY_SYSTEM_LOW = 2
PRIORITY_SYSTEM_HIGH = 3

__version__ = "0.1.0"

__all__ = [
    "Client",
    "DEFAULT_SOCKET",
    "ErrorCode",
    "LeverError",
    "ProtocolError",
    "socket_path",
    "SIGNAL_UNTIL_RELEASED",
    "PRIORITY_THIRD_PARTY_LOW",
    "PRIORITY_THIRD_PARTY_HIGH",
    "PRIORITY_SYSTEM_LOW",
    "PRIORITY_SYSTEM_HIGH",
]
