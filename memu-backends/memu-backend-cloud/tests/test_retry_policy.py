"""The wait between attempts: Retry-After (seconds or HTTP date vs the response's Date), capped."""

from __future__ import annotations

import httpx
from hypothesis import given
from hypothesis import strategies as st
from memu_backend_cloud import retry


def test_backoff_doubles_and_caps() -> None:
    assert [retry.backoff(n) for n in range(1, 6)] == [0.25, 0.5, 1.0, 2.0, 2.0]


def test_retry_after_seconds_and_cap() -> None:
    assert retry.delay(1, httpx.Headers({"Retry-After": "3"})) == 3.0
    assert retry.delay(1, httpx.Headers({"Retry-After": "3600"})) == retry.MAX_RETRY_AFTER
    assert retry.delay(1, httpx.Headers({"Retry-After": "-5"})) == 0.0
    assert retry.delay(2, httpx.Headers({})) == 0.5


def test_retry_after_date_is_measured_against_the_response_date() -> None:
    headers = httpx.Headers(
        {"Retry-After": "Wed, 21 Oct 2015 07:28:05 GMT", "Date": "Wed, 21 Oct 2015 07:28:00 GMT"}
    )
    assert retry.delay(1, headers) == 5.0
    no_date = httpx.Headers({"Retry-After": "Wed, 21 Oct 2015 07:28:05 GMT"})
    assert retry.delay(3, no_date) == retry.backoff(3)


@given(st.text(max_size=40))
def test_any_retry_after_value_gives_a_bounded_wait(value: str) -> None:
    try:
        headers = httpx.Headers({"Retry-After": value})
    except (UnicodeEncodeError, ValueError):
        return
    wait = retry.delay(1, headers)
    assert 0.0 <= wait <= retry.MAX_RETRY_AFTER
