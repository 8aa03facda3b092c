"""``GET /metrics``: request counts and latencies per route, in Prometheus' text format (0.0.4).

Kept by a pure ASGI middleware on the event loop (one thread, so no locks): counts by route,
method and status, a latency histogram per route, requests in flight, commits, and the
figures the server reads at scrape time (waiting and running store calls, refused requests,
search-answer cache hits, the store's generation and size). Routes are labelled by a fixed
set of templates, never by a raw path, so a scan of random URLs cannot grow the output.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable
from typing import Any

BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Histogram upper bounds in seconds (``+Inf`` is added)."""

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

Sample = tuple[str, dict[str, str], float]
"""``(metric name, labels, value)`` read at scrape time (a name ending ``_total`` is a counter)."""


def route_label(path: str, prefixes: Iterable[str]) -> str:
    """The route template for ``path``: an exact API path, a known mount prefix, or ``other``."""
    if path in _EXACT:
        return path
    for prefix in prefixes:
        if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
            return prefix
    return "other"


_EXACT = frozenset(
    {
        "/api/v4/memory",
        "/api/v4/memory/search",
        "/api/v4/memory/forget",
        "/api/v4/memory/whoami",
        "/api/memu/analytics/events",
        "/api/memu/analytics/events/stats",
        "/healthz",
        "/metrics",
        "/openapi.json",
        "/docs",
    }
)


class _Histogram:
    __slots__ = ("count", "counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * len(BUCKETS)
        self.count = 0
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds
        for i, bound in enumerate(BUCKETS):
            if seconds <= bound:
                self.counts[i] += 1
                break


class Metrics:
    """The counters; :meth:`render` writes them in the exposition format."""

    def __init__(self, prefixes: Iterable[str] = ("/templates", "/ui")) -> None:
        self.prefixes = tuple(prefixes)
        self.requests: dict[tuple[str, str, str], int] = {}
        self.latency: dict[str, _Histogram] = {}
        self.in_flight = 0
        self.commits = 0
        self.files_committed = 0
        self.started = time.time()
        self.gauges: list[Callable[[], Iterable[Sample]]] = []

    def record(self, route: str, method: str, status: int, seconds: float) -> None:
        """Count one finished request."""
        key = (route, method, str(status))
        self.requests[key] = self.requests.get(key, 0) + 1
        self.latency.setdefault(route, _Histogram()).observe(seconds)

    def render(self) -> str:
        """Every metric, with ``# HELP`` and ``# TYPE`` lines."""
        out: list[str] = []
        out += _head("memu_server_requests_total", "counter", "HTTP requests answered, by route, method and status.")
        for (route, method, status), n in sorted(self.requests.items()):
            out.append(f"memu_server_requests_total{_labels(route=route, method=method, status=status)} {n}")
        out += _head("memu_server_request_seconds", "histogram", "Time from request to the end of the answer.")
        for route, hist in sorted(self.latency.items()):
            running = 0
            for bound, n in zip(BUCKETS, hist.counts, strict=True):
                running += n
                out.append(f"memu_server_request_seconds_bucket{_labels(route=route, le=_num(bound))} {running}")
            out.append(f"memu_server_request_seconds_bucket{_labels(route=route, le='+Inf')} {hist.count}")
            out.append(f"memu_server_request_seconds_sum{_labels(route=route)} {_num(hist.total)}")
            out.append(f"memu_server_request_seconds_count{_labels(route=route)} {hist.count}")
        out += _head("memu_server_in_flight_requests", "gauge", "Requests being answered now.")
        out.append(f"memu_server_in_flight_requests {self.in_flight}")
        out += _head("memu_server_commits_total", "counter", "Commits that reached the store (changed or not).")
        out.append(f"memu_server_commits_total {self.commits}")
        out += _head("memu_server_committed_files_total", "counter", "Files and resources commits wrote.")
        out.append(f"memu_server_committed_files_total {self.files_committed}")
        out += _head("memu_server_start_time_seconds", "gauge", "When the server started (Unix time).")
        out.append(f"memu_server_start_time_seconds {_num(self.started)}")
        samples: dict[str, list[Sample]] = {}
        for read in self.gauges:
            for sample in read():
                samples.setdefault(sample[0], []).append(sample)
        for name, rows in samples.items():
            kind = "counter" if name.endswith("_total") else "gauge"
            out += _head(name, kind, _READ_HELP.get(name, name.replace("_", " ") + "."))
            out += [f"{n}{_labels(**labels)} {_num(value)}" for n, labels, value in rows]
        return "\n".join(out) + "\n"


_READ_HELP = {
    "memu_server_store_waiting": "Requests waiting for a store worker.",
    "memu_server_store_running": "Store calls running on worker threads.",
    "memu_server_refused_total": "Requests refused with 503 because no worker was free in time.",
    "memu_server_answer_cache_hits_total": "Searches answered from the cache.",
    "memu_server_answer_cache_misses_total": "Searches that ran in the store.",
    "memu_server_answer_cache_entries": "Search answers kept.",
    "memu_server_store_generation": "The store's write counter as last read.",
    "memu_server_store_bytes": "Bytes of the store's files on disk (SQLite).",
}


def _head(name: str, kind: str, text: str) -> list[str]:
    return [f"# HELP {name} {text}", f"# TYPE {name} {kind}"]


def _num(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels: str) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in labels.items()) + "}"


class MetricsMiddleware:
    """Pure ASGI middleware: times every HTTP request and counts it under its route template."""

    def __init__(self, app: Any, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        metrics = self.metrics
        started = time.perf_counter()
        status = 500  # an exception before an answer started is a 500 to the client
        metrics.in_flight += 1

        async def counted(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counted)
        finally:
            metrics.in_flight -= 1
            route = route_label(scope.get("path", ""), metrics.prefixes)
            metrics.record(route, scope.get("method", ""), status, time.perf_counter() - started)
