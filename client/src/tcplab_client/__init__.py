"""tcplab's Python SDK (`Client`) and command line (`tcplab`, in `tcplab_client.cli`)."""

__version__ = "0.1.0"

from tcplab_client.client import Client
from tcplab_client.errors import (
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
