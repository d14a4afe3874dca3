"""Where the client finds its server and token.

The URL: the `base_url` argument (`--url`), else `TCPLAB_URL`, else the config file's `url`,
else `http://127.0.0.1:8000`. The token: the `token` argument (`--token`), else
`TCPLAB_TOKEN`, else the config file's `token` — which is sent only to the config file's own
`url` (a token stored for the lab server is not handed to another server named by `--url`).

The config file is `$XDG_CONFIG_HOME/tcplab/config.toml` (else `~/.config/tcplab/config.toml`),
written by `tcplab login` with mode 0600 in a folder of mode 0700:

    url = "http://lab.example.org:8000"
    token = "…"
"""

from __future__ import annotations

import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8000"


def config_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tcplab" / "config.toml"


@dataclass(frozen=True)
class Config:
    url: str | None = None
    token: str | None = None


def load_config(path: Path | None = None) -> Config:
    """The config file's url and token; an empty Config when there is no file. A file that is
    not TOML is an error naming the file (never silently ignored)."""
    path = path or config_path()
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        return Config()
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        from tcplab_client.errors import TcplabError

        raise TcplabError(f"the config file {path} is not valid TOML: {exc}") from None
    url = data.get("url")
    token = data.get("token")
    return Config(url=str(url) if url else None, token=str(token) if token else None)


def save_config(config: Config, path: Path | None = None) -> Path:
    """Writes the file with mode 0600 (created so: the token is never readable by others, not
    even for a moment), its folder with 0700."""
    path = path or config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lines = []
    if config.url:
        lines.append(f"url = {json.dumps(config.url)}")  # a JSON string is a TOML basic string
    if config.token:
        lines.append(f"token = {json.dumps(config.token)}")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # an existing file keeps its old mode through O_CREAT
        os.write(fd, ("\n".join(lines) + "\n").encode())
    finally:
        os.close(fd)
    return path


def normalize_url(url: str) -> str:
    url = url.strip().rstrip("/")
    if "://" not in url:
        url = "http://" + url
    return url


def resolve(base_url: str | None, token: str | None, config: Config) -> tuple[str, str | None]:
    """(url, token) by the precedence in the module docstring."""
    url = normalize_url(base_url or os.environ.get("TCPLAB_URL") or config.url or DEFAULT_URL)
    if token:
        return url, token
    env_token = os.environ.get("TCPLAB_TOKEN")
    if env_token:
        return url, env_token
    if config.token and config.url and normalize_url(config.url) == url:
        return url, config.token
    return url, None
