"""Scheme normalisation and password redaction (no server needed)."""

from __future__ import annotations

import pytest
from memu_backend_postgres._url import display_url, normalise_url, redact

from memu_core.errors import ConfigError


@pytest.mark.parametrize(
    "given",
    [
        "postgres://u:p@h:5432/db",
        "postgresql://u:p@h:5432/db",
        "postgresql+psycopg://u:p@h:5432/db",
        "  POSTGRESQL://u:p@h:5432/db ",
    ],
)
def test_every_accepted_scheme_becomes_the_psycopg_form(given: str) -> None:
    assert normalise_url(given) == "postgresql+psycopg://u:p@h:5432/db"


def test_a_non_postgres_url_is_a_config_error_without_the_password() -> None:
    with pytest.raises(ConfigError, match="MEMU_DB") as caught:
        normalise_url("mysql://u:hunter22@h/db")
    assert "hunter22" not in str(caught.value)


def test_display_url_masks_userinfo_and_query_passwords() -> None:
    assert display_url("postgresql://u:s3cr%40t@h/db") == "postgresql://u:***@h/db"
    assert display_url("postgresql://u@h/db?password=zz9&sslmode=require") == (
        "postgresql://u@h/db?password=***&sslmode=require"
    )


def test_redact_masks_every_spelling_of_the_password() -> None:
    url = "postgresql://u:s3cr%40t@h/db"
    text = f"failed for {url}, raw s3cr@t, encoded s3cr%40t, driver form postgresql+psycopg://u:s3cr%40t@h/db"
    cleaned = redact(text, url)
    assert "s3cr" not in cleaned
    assert "postgresql://u:***@h/db" in cleaned
