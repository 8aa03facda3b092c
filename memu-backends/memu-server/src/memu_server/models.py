"""Request bodies of the v4 API as pydantic models: they validate input and make the OpenAPI schema.

The bounds mirror :mod:`memu_core.v4` (which re-checks everything, so the socket server
and this app refuse exactly the same requests).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memu_core import names, v4

_BLANKS = "\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
NON_BLANK = f"[^{_BLANKS}]"
"""At least one character that Python's ``str.strip`` keeps (names and queries are trimmed).

The blanks are listed as characters, not as ``\\s``: pydantic's Rust regex counts U+0085 as
``\\s`` and JSON Schema's ECMA-262 dialect does not, so a client validating against the
published schema would send names the server then refused."""

ScopeStr = Field(default=None, max_length=v4.MAX_SCOPE_CHARS)


class SearchBody(BaseModel):
    """``POST /api/v4/memory/search``: exact ``user_id``/``agent_id`` only (missing = ``default``)."""

    model_config = ConfigDict(extra="forbid")
    query: str = Field(min_length=1, max_length=v4.MAX_QUERY_CHARS, pattern=NON_BLANK, description="What to look for.")
    user_id: str | None = ScopeStr
    agent_id: str | None = ScopeStr
    top_k: int | None = Field(default=None, ge=1, le=v4.MAX_TOP_K, description="Segments to return (default 5).")


class UserBody(BaseModel):
    """The scope a commit or forget writes to."""

    model_config = ConfigDict(extra="forbid")
    user_id: str | None = ScopeStr
    agent_id: str | None = ScopeStr
    user_name: str | None = Field(default=None, max_length=v4.MAX_SCOPE_CHARS)
    agent_name: str | None = Field(default=None, max_length=v4.MAX_SCOPE_CHARS)


class RecallFileIn(BaseModel):
    """A Markdown memory or skill file. Extra fields (ids, timestamps from a listing) are ignored."""

    model_config = ConfigDict(extra="ignore")
    # The naming rules (memu_core.names) are published in the schema and checked by
    # memu_core.v4, which names the refused name and the rule it breaks (422 INVALID_NAME).
    name: str = Field(
        json_schema_extra={"minLength": 1, "maxLength": names.MAX_NAME_BYTES, "pattern": names.NAME_PATTERN},
        description=f"At most {names.MAX_NAME_BYTES} bytes of UTF-8; no control characters, '/' or '\\'; "
        "not only dots and blanks.",
    )
    track: str | None = Field(default=None, json_schema_extra={"enum": [*names.TRACKS, "", None]})
    description: str | None = Field(default=None, max_length=10_000)
    content: str | None = Field(default=None, max_length=1_000_000)


class ResourceIn(BaseModel):
    """A workspace file path and what it is."""

    model_config = ConfigDict(extra="ignore")
    path: str = Field(min_length=1, max_length=4_096, pattern=NON_BLANK)
    description: str | None = Field(default=None, max_length=10_000)


class CommitBody(BaseModel):
    """``POST /api/v4/memory``: files and resources for one scope, stored idempotently by content."""

    model_config = ConfigDict(extra="forbid")
    user: UserBody | None = None
    recall_files: list[RecallFileIn] = Field(default_factory=list, max_length=v4.MAX_FILES_PER_COMMIT)
    resource: list[ResourceIn] = Field(default_factory=list, max_length=v4.MAX_FILES_PER_COMMIT)


class ForgetBody(BaseModel):
    """``POST /api/v4/memory/forget``: delete one recall file of one scope."""

    model_config = ConfigDict(extra="forbid")
    # No naming rules here: a name stored before them must stay removable.
    name: str = Field(min_length=1, max_length=500, pattern=NON_BLANK)
    track: str | None = Field(default=None, max_length=100)
    user: UserBody | None = None


class ErrorDetail(BaseModel):
    """A machine-readable error code."""

    code: str


class ErrorBody(BaseModel):
    """Every error answer: memU's shape."""

    message: str
    details: list[ErrorDetail]


def plain(model: BaseModel) -> dict[str, Any]:
    """A model as the JSON dict the shared v4 rules take (unset optional fields left out)."""
    return model.model_dump(exclude_unset=True)
