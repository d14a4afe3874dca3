"""Users, API tokens, who sees what, and per-user quotas."""

from services.users.access import check_modifiable, check_visible, visible_to
from services.users.identity import Identity, Quotas
from services.users.service import (
    BOOTSTRAP_ADMIN,
    NewToken,
    authenticate,
    create_token,
    create_user,
    get_user,
    identity_of,
    list_tokens,
    list_users,
    queued_runs_of,
    require_admin,
    revoke_token,
    update_user,
)

__all__ = [
    "BOOTSTRAP_ADMIN",
    "Identity",
    "NewToken",
    "Quotas",
    "authenticate",
    "check_modifiable",
    "check_visible",
    "create_token",
    "create_user",
    "get_user",
    "identity_of",
    "list_tokens",
    "list_users",
    "queued_runs_of",
    "require_admin",
    "revoke_token",
    "update_user",
    "visible_to",
]
