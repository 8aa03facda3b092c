"""``LitellmEmbedder``: remote embedding providers through litellm.

Nothing heavy is imported here at module level: litellm (seconds to import), the OpenAI SDK
and httpx load on the first ``embed``.
"""

from __future__ import annotations

import importlib.util
import os
import threading
import warnings
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from memu_core.errors import ConfigError, EmbeddingError
from memu_core.interfaces import Embedder
from memu_core.types import Fingerprint
from memu_embed_litellm._settings import float_setting, int_setting, setting
from memu_embed_litellm.providers import ProviderSpec, canonical, spec_for
from memu_embed_litellm.retrying import describe, is_retryable, status_of, wait_seconds

__all__ = ["LitellmEmbedder"]

DEFAULT_BATCH_SIZE = 64
DEFAULT_CONCURRENCY = 4
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_ATTEMPTS = 5
RETRY_AFTER_CAP = 30.0
"""A provider asking for a longer pause than this gets this: a commit should fail, not hang."""

_PROBE_TEXT = "memu dimension probe"
_dimension_cache: dict[tuple[str, str, str], int] = {}
"""Dimensions learned in this process, keyed by (provider, model, base URL)."""
_litellm_lock = threading.Lock()


def _import_litellm() -> Any:
    """Import litellm so that importing it contacts no network.

    litellm fetches its model cost map from the internet at import unless told to use the copy
    it ships; with no network that is a multi-second stall, with one it is a surprise request.
    """
    with _litellm_lock:
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        import litellm

        litellm.telemetry = False
        litellm.suppress_debug_info = True
        # litellm re-serialises the SDK's response; a base64 embedding (a str where its model
        # says list[float]) then makes pydantic warn once per vector. Only that warning is muted.
        warnings.filterwarnings(
            "ignore",
            message=r"Pydantic serializer warnings:\s+PydanticSerializationUnexpectedValue"
            r"\(Expected `list\[float\]`",
            category=UserWarning,
        )
        return litellm


def _no_retry_openai_class() -> Any:
    """An ``openai.OpenAI`` whose ``max_retries`` stays 0.

    litellm turns ``max_retries=0`` into its default of 2 (``0 or DEFAULT``) and writes it onto
    the client it is given; memu's own retry loop (with ``Retry-After`` and a cap) must be the
    only one, or one 429 becomes up to 15 requests.
    """
    global _NO_RETRY_OPENAI
    if _NO_RETRY_OPENAI is None:
        import openai

        class NoRetryOpenAI(openai.OpenAI):
            @property
            def max_retries(self) -> int:
                return 0

            @max_retries.setter
            def max_retries(self, value: int) -> None:
                pass

        _NO_RETRY_OPENAI = NoRetryOpenAI
    return _NO_RETRY_OPENAI


_NO_RETRY_OPENAI: Any = None


def _decode_base64(text: str) -> list[float] | None:
    """OpenAI's base64 embedding (little-endian float32) as floats; ``None`` when malformed."""
    import base64
    import binascii

    import numpy as np

    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    if not raw or len(raw) % 4:
        return None
    floats: list[float] = np.frombuffer(raw, dtype="<f4").astype(np.float64).tolist()
    return floats


class LitellmEmbedder(Embedder):
    """Embeds through a remote provider (``MEMU_EMBED_PROVIDER``) with litellm.

    Texts are cut into batches of ``batch_size`` and sent ``concurrency`` at a time; each batch
    is retried on 408/429/5xx and transport errors. Vectors come back in input order and
    L2-normalised.
    """

    name: ClassVar[str] = "litellm"

    def __init__(
        self,
        provider: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        batch_size: int = DEFAULT_BATCH_SIZE,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = DEFAULT_TIMEOUT,
        proxy: str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        retry_after_cap: float = RETRY_AFTER_CAP,
        dimension: int | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        """Configure without any I/O. ``api_key`` ``None`` reads the provider's own variable.

        ``sleep`` replaces ``time.sleep`` between retries (tests record the waits with it).
        """
        self.spec: ProviderSpec = spec_for(provider)
        if self.spec.needs_package is not None:
            module, requirement = self.spec.needs_package
            if importlib.util.find_spec(module) is None:
                raise ConfigError(
                    f"MEMU_EMBED_PROVIDER={self.spec.name} needs the {module} "
                    f"package: pip install '{requirement}'"
                )
        self.model = model or self.spec.default_model
        if not self.model:
            raise ConfigError(
                f"MEMU_EMBED_PROVIDER={self.spec.name} has no default model: set MEMU_EMBED_MODEL"
            )
        self.base_url = (base_url or self.spec.default_base_url or "").rstrip("/") or None
        if self.spec.name == "openai-compatible" and not self.base_url:
            raise ConfigError("MEMU_EMBED_PROVIDER=openai-compatible needs a server: set MEMU_BASE_URL")
        self._api_key, self.key_source = self._resolve_key(api_key)
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.timeout = timeout
        self.proxy = proxy
        self.max_attempts = max_attempts
        self.retry_after_cap = retry_after_cap
        self._sleep = sleep
        # base64 float32 is ~4x smaller than JSON floats and, above all, spares the OpenAI SDK
        # from building one Python object per float (90% of the CPU time of a 2,000-text commit).
        # Servers that refuse it get floats from then on (see _embed_batch).
        self._base64 = self.spec.transport == "openai" and self.spec.name in ("openai", "openai-compatible")
        self._dimension = dimension or _dimension_cache.get(self._cache_key())
        self._client: Any = None
        self._client_lock = threading.Lock()

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def from_settings(cls, settings: Any) -> LitellmEmbedder:
        """Build from ``MEMU_EMBED_PROVIDER``, ``MEMU_EMBED_MODEL``, ``MEMU_API_KEY``,
        ``MEMU_BASE_URL``, ``MEMU_EMBED_BATCH_SIZE``, ``MEMU_EMBED_CONCURRENCY``,
        ``MEMU_EMBED_TIMEOUT`` and ``MEMU_HTTP_PROXY`` (``settings`` ``None``: the environment)."""
        provider = setting(settings, "embed_provider", "MEMU_EMBED_PROVIDER") or setting(
            settings, "llm_provider", "MEMU_LLM_PROVIDER", "openai"
        )
        base_url = setting(settings, "base_url", "MEMU_BASE_URL")
        if canonical(str(provider)) in ("litellm", "remote"):
            # "litellm" names the plugin, not a provider: an OpenAI-compatible server or OpenAI.
            provider = "openai-compatible" if base_url else "openai"
        return cls(
            str(provider),
            model=setting(settings, "embed_model", "MEMU_EMBED_MODEL"),
            api_key=setting(settings, "api_key", "MEMU_API_KEY"),
            base_url=base_url,
            batch_size=int_setting(settings, "embed_batch_size", "MEMU_EMBED_BATCH_SIZE", DEFAULT_BATCH_SIZE),
            concurrency=int_setting(
                settings, "embed_concurrency", "MEMU_EMBED_CONCURRENCY", DEFAULT_CONCURRENCY
            ),
            timeout=float_setting(settings, "embed_timeout", "MEMU_EMBED_TIMEOUT", DEFAULT_TIMEOUT),
            proxy=setting(settings, "http_proxy", "MEMU_HTTP_PROXY"),
        )

    def _resolve_key(self, explicit: str | None) -> tuple[str | None, str | None]:
        """The key and the variable it came from. memU sent the variable's *name* as the key
        (its bug B1); memu reads the variable's value."""
        if explicit:
            return explicit, "MEMU_API_KEY"
        env = self.spec.key_env
        if env and os.environ.get(env):
            return os.environ[env], env
        keyless = self.spec.name == "openai" and self.base_url is not None
        if self.spec.key_required and not keyless:
            raise ConfigError(
                f"MEMU_EMBED_PROVIDER={self.spec.name} needs an API key: set MEMU_API_KEY or {env}"
            )
        return None, None

    def _cache_key(self) -> tuple[str, str, str]:
        return (self.spec.name, self.model, self.base_url or "")

    # -- identity -------------------------------------------------------------------------
    @property
    def fingerprint(self) -> Fingerprint:
        """(provider, model, dimension); the dimension is learned from one short probe the
        first time it is needed (then cached for the process)."""
        if self._dimension is None:
            self.embed([_PROBE_TEXT])
        assert self._dimension is not None
        return Fingerprint(provider=self.spec.name, model=self.model, dimension=self._dimension)

    def describe(self) -> dict[str, Any]:
        """What doctor shows: provider, model, endpoint and where the key came from (never the key)."""
        return {
            "embedder": self.name,
            "provider": self.spec.name,
            "model": self.model,
            "base_url": self.base_url,
            "api_key_from": self.key_source,
            "batch_size": self.batch_size,
            "concurrency": self.concurrency,
        }

    # -- embedding ------------------------------------------------------------------------
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order; ``[]`` for ``[]`` without a request."""
        if not texts:
            return []
        batches = [list(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        if len(batches) == 1 or self.concurrency == 1:
            results = [self._embed_batch(b) for b in batches]
        else:
            results = self._embed_concurrently(batches)
        vectors = [v for batch in results for v in batch]
        return self._normalise(vectors)

    def _embed_concurrently(self, batches: list[list[str]]) -> list[list[list[float]]]:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(
            max_workers=min(self.concurrency, len(batches)), thread_name_prefix="memu-embed"
        ) as pool:
            futures = [pool.submit(self._embed_batch, b) for b in batches]
            try:
                return [f.result() for f in futures]
            except BaseException:
                # One batch failed: the commit fails as a whole, so drop what has not started.
                for f in futures:
                    f.cancel()
                raise

    def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        import tenacity

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception(is_retryable),
            stop=tenacity.stop_after_attempt(self.max_attempts),
            wait=lambda state: wait_seconds(
                state.attempt_number,
                state.outcome.exception() if state.outcome is not None else None,
                self.retry_after_cap,
            ),
            sleep=self._sleep or tenacity.nap.sleep,
            reraise=True,
        )
        try:
            try:
                response = retrying(self._request, batch)
            except Exception as exc:
                if not (self._base64 and status_of(exc) in (400, 422)):
                    raise
                # An OpenAI-compatible server that does not speak base64: ask for floats.
                self._base64 = False
                response = retrying(self._request, batch)
        except EmbeddingError:
            raise
        except Exception as exc:
            raise self._translate(exc) from exc
        return self._parse(response, len(batch))

    def _request(self, batch: list[str]) -> Any:
        litellm = _import_litellm()
        kwargs: dict[str, Any] = {
            "model": self._route_model(),
            "input": batch,
            "timeout": self.timeout,
            # memu owns retries (with Retry-After and a cap); the SDKs must not retry underneath.
            "max_retries": 0,
            "num_retries": 0,
        }
        if self._api_key:
            kwargs["api_key"] = self._api_key
        elif self.spec.transport == "openai":
            # The OpenAI SDK refuses to start without some key; keyless local servers ignore it.
            kwargs["api_key"] = "memu-no-key"
        if self.base_url:
            kwargs["api_base"] = self.base_url
        if self._base64:
            kwargs["encoding_format"] = "base64"
        client = self._get_client()
        if client is not None:
            kwargs["client"] = client
        return litellm.embedding(**kwargs)

    def _route_model(self) -> str:
        prefix = self.spec.route + "/"
        return self.model if self.model.startswith(prefix) else prefix + self.model

    def _get_client(self) -> Any:
        """memu's own HTTP client for the provider (timeouts, proxies), built once."""
        if self.spec.transport == "own":
            return None
        with self._client_lock:
            if self._client is None:
                from memu_embed_litellm.transport import build_client

                target = self.base_url or (
                    "https://api.openai.com/v1" if self.spec.transport == "openai" else None
                )
                http = build_client(target, self.proxy, self.timeout)
                if self.spec.transport == "openai":
                    self._client = _no_retry_openai_class()(
                        api_key=self._api_key or "memu-no-key",
                        base_url=target,
                        http_client=http,
                        max_retries=0,
                        timeout=self.timeout,
                    )
                else:
                    _import_litellm()
                    from litellm.llms.custom_httpx.http_handler import HTTPHandler

                    self._client = HTTPHandler(timeout=self.timeout, client=http)
            return self._client

    def _parse(self, response: Any, expected: int) -> list[list[float]]:
        data = response.get("data") if isinstance(response, dict) else getattr(response, "data", None)
        if not isinstance(data, list):
            raise EmbeddingError(
                f"embedding provider {self.spec.name} returned no 'data' list for model {self.model}: "
                "check MEMU_BASE_URL points at an embeddings API"
            )
        if len(data) != expected:
            raise EmbeddingError(
                f"embedding provider {self.spec.name} returned {len(data)} vectors for {expected} texts "
                f"(model {self.model}): nothing was stored; retry, or lower MEMU_EMBED_BATCH_SIZE"
            )
        items: list[dict[str, Any]] = [
            d
            if isinstance(d, dict)
            else {"index": getattr(d, "index", None), "embedding": getattr(d, "embedding", None)}
            for d in data
        ]
        # memU trusted list order; the API's own ``index`` is the authority when present.
        if all(isinstance(it.get("index"), int) for it in items):
            items.sort(key=lambda it: int(it["index"]))
        vectors = []
        for it in items:
            vec = it.get("embedding")
            if isinstance(vec, str):
                vec = _decode_base64(vec)
            if not isinstance(vec, list) or not vec:
                raise EmbeddingError(
                    f"embedding provider {self.spec.name} returned a malformed vector for model {self.model}"
                )
            vectors.append(vec)
        return vectors

    def _normalise(self, vectors: list[list[float]]) -> list[list[float]]:
        import numpy as np

        matrix = np.asarray(vectors, dtype=np.float64) if vectors else np.zeros((0, 0))
        if matrix.ndim != 2:
            raise EmbeddingError(
                f"embedding provider {self.spec.name} returned vectors of "
                f"different lengths for model {self.model}"
            )
        dimension = int(matrix.shape[1])
        if self._dimension is None:
            self._dimension = dimension
            _dimension_cache[self._cache_key()] = dimension
        elif dimension != self._dimension:
            raise EmbeddingError(
                f"embedding provider {self.spec.name} model {self.model} returned {dimension}-dim vectors, "
                f"expected {self._dimension}: check MEMU_EMBED_MODEL"
            )
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        normalised: list[list[float]] = (matrix / norms).tolist()
        return normalised

    def _translate(self, exc: Exception) -> EmbeddingError:
        """One line that says what failed and what to do about it."""
        status = status_of(exc)
        where = self.base_url or self.spec.name
        detail = describe(exc)
        if status in (401, 403):
            var = "MEMU_API_KEY" + (f" or {self.spec.key_env}" if self.spec.key_env else "")
            source = f" (the key came from {self.key_source})" if self.key_source else " (no key was set)"
            return EmbeddingError(
                f"embedding provider {self.spec.name} at {where} refused the API key with HTTP {status}"
                f"{source}: set {var} to a valid key"
            )
        if status == 429:
            return EmbeddingError(
                f"embedding provider {self.spec.name} kept rate-limiting after {self.max_attempts} attempts: "
                "retry later or lower MEMU_EMBED_CONCURRENCY"
            )
        if (status is not None and status >= 500) or status == 408:
            return EmbeddingError(
                f"embedding provider {self.spec.name} at {where} failed with HTTP {status} after "
                f"{self.max_attempts} attempts: {detail}"
            )
        if status is None or is_retryable(exc):
            return EmbeddingError(
                f"could not reach embedding provider {self.spec.name} at "
                f"{where} ({detail}): check MEMU_BASE_URL, "
                f"the network or MEMU_HTTP_PROXY, or raise MEMU_EMBED_TIMEOUT (now {self.timeout:g} s)"
            )
        return EmbeddingError(
            f"embedding provider {self.spec.name} rejected the request for model {self.model} "
            f"with HTTP {status}: {detail}; check MEMU_EMBED_MODEL and MEMU_BASE_URL"
        )
