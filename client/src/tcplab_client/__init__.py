"""tcplab's Python SDK (`Client`) and command line (`tcplab`, in `tcplab_client.cli`)."""

__version__ = "0.1.0"

from tcplab_client.client import Client  # noqa: E402
from tcplab_client.errors import (  # noqa: E402
    Conflict,
    FieldError,
    InvalidInput,
    NotFound,
    ServerError,
    TcplabError,
    Unauthorized,
    Unavailable,
    WaitTimeout,
)

__all__ = [
    "Client",
    "Conflict",
    "FieldError",
    "InvalidInput",
    "NotFound",
    "ServerError",
    "TcplabError",
    "Unauthorized",
    "Unavailable",
    "WaitTimeout",
]
