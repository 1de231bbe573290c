"""Which LLM a run uses, as a function with LightRAG's model-function signature.

Resolution order: a function passed in by the caller; ``SESSIONS_GRAPH_LLM_FUNC``
naming one as ``module:function`` (how tests and benchmarks drive a real CLI
subprocess with a scripted model); then OpenAI or Anthropic from the settings
(``llm_provider``, or whichever API key is set). Nothing configured raises
``ReconciliationNotConfiguredError`` with what to set.

Our own OpenAI / Anthropic functions (rather than LightRAG's helpers) keep
the retry policy in one place and visible: rate limits, timeouts, connection
errors and 5xx are retried with exponential backoff; anything else (a bad
key, a bad request) fails at once. The SDKs' own retries are turned off so
that the two layers do not multiply.
"""

from __future__ import annotations

import importlib
import os
from typing import Any

from sessions_graph.errors import ConfigError, ReconciliationNotConfiguredError
from sessions_graph.extras import pip_install
from sessions_graph.reconcile.extraction import LLMFunc, note_request
from sessions_graph.settings import Settings

#: Environment variable naming a model function as ``module:function``.
LLM_FUNC_ENV = "SESSIONS_GRAPH_LLM_FUNC"
DEFAULT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-3-5-haiku-latest"}
#: Attempts per call (1 + retries) and the backoff bounds, in seconds.
ATTEMPTS, BACKOFF_MIN, BACKOFF_MAX = 6, 1.0, 60.0
REQUEST_TIMEOUT_S = 120.0
MAX_OUTPUT_TOKENS = 4096

NOT_CONFIGURED = (
    "no LLM configured for reconciliation: set OPENAI_API_KEY (optionally OPENAI_BASE_URL"
    " and SESSIONS_GRAPH_LLM_MODEL) or ANTHROPIC_API_KEY, or `sessions-graph config set"
    " openai_api_key ...`"
)


def load_function(spec: str) -> LLMFunc:
    """Import ``module:function``."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ConfigError(f"{LLM_FUNC_ENV} must look like module:function, got {spec!r}")
    try:
        return getattr(importlib.import_module(module_name), attr)  # type: ignore[no-any-return]
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot load {LLM_FUNC_ENV}={spec}: {exc}") from None


def provider(settings: Settings) -> str | None:
    """The configured provider name, or None."""
    if settings.llm_provider:
        if settings.llm_provider not in DEFAULT_MODELS:
            raise ConfigError(
                f"llm_provider must be 'openai' or 'anthropic', got {settings.llm_provider!r}"
            )
        return settings.llm_provider
    if settings.openai_api_key or settings.openai_base_url:
        return "openai"  # a local OpenAI-compatible server may need no key
    if settings.anthropic_api_key:
        return "anthropic"
    return None


def describe(settings: Settings) -> str | None:
    """``provider/model`` for messages, or None when no LLM is configured."""
    if os.environ.get(LLM_FUNC_ENV):
        return os.environ[LLM_FUNC_ENV]
    name = provider(settings)
    return f"{name}/{settings.llm_model or DEFAULT_MODELS[name]}" if name else None


def missing_package(settings: Settings) -> str | None:
    """The first package an LLM run needs that does not import (LightRAG, the
    provider's SDK: the ``reconcile`` extra), or None. Imported for real, not
    looked up: a run that can use them imports them next anyway."""
    name = provider(settings)
    sdk = [name] if name and not os.environ.get(LLM_FUNC_ENV) else []
    needed = [*sdk, "lightrag"]
    for module in needed:
        try:
            importlib.import_module(module)
        except ImportError:
            return module
    return None


def fallback_note(settings: Settings) -> str | None:
    """Why ``extractor = auto`` runs the local extractor although an LLM is
    configured (a key set on a plain install), in one line; None otherwise."""
    configured = describe(settings)
    missing = missing_package(settings) if configured else None
    if missing is None:
        return None
    return (
        f"{configured} is configured but the {missing} package is missing: reconciling"
        f" with the local extractor ({pip_install('reconcile')} for the LLM)"
    )


def resolve(settings: Settings, llm_model_func: LLMFunc | None = None) -> LLMFunc:
    """The model function a run should use; raise if there is none."""
    if llm_model_func is not None:
        return llm_model_func
    spec = os.environ.get(LLM_FUNC_ENV)
    if spec:
        return load_function(spec)
    name = provider(settings)
    model = settings.llm_model or (DEFAULT_MODELS[name] if name else "")
    if name == "openai" and (settings.openai_api_key or settings.openai_base_url):
        return _openai(settings, model)
    if name == "anthropic" and settings.anthropic_api_key:
        return _anthropic(settings, model)
    raise ReconciliationNotConfiguredError(NOT_CONFIGURED)


def _sdk(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ConfigError(f"the {name} package is missing: {pip_install('reconcile')}") from None


def _retrying(sdk: Any) -> Any:
    """A tenacity decorator retrying the SDK's transient errors."""
    from tenacity import (
        retry,
        retry_if_exception_type,
        stop_after_attempt,
        wait_random_exponential,
    )

    transient = (
        sdk.RateLimitError,
        sdk.APITimeoutError,
        sdk.APIConnectionError,
        sdk.InternalServerError,
    )
    return retry(
        retry=retry_if_exception_type(transient),
        wait=wait_random_exponential(multiplier=BACKOFF_MIN, max=BACKOFF_MAX),
        stop=stop_after_attempt(ATTEMPTS),
        reraise=True,
    )


def _openai(settings: Settings, model: str) -> LLMFunc:
    sdk = _sdk("openai")
    client = sdk.AsyncOpenAI(
        api_key=settings.openai_api_key or "unused",  # local servers need none
        base_url=settings.openai_base_url or None,
        timeout=REQUEST_TIMEOUT_S,
        max_retries=0,
    )

    @_retrying(sdk)
    async def complete(
        prompt: str,
        system_prompt: str | None = None,
        history_messages: list[dict[str, str]] | None = None,
        **_kwargs: Any,
    ) -> str:
        messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
        messages += [*(history_messages or []), {"role": "user", "content": prompt}]
        note_request()  # each attempt is a request paid for, failed or not
        response = await client.chat.completions.create(
            model=model, messages=messages, max_tokens=MAX_OUTPUT_TOKENS, temperature=0
        )
        return response.choices[0].message.content or ""

    return complete


def _anthropic(settings: Settings, model: str) -> LLMFunc:
    sdk = _sdk("anthropic")
    client = sdk.AsyncAnthropic(
        api_key=settings.anthropic_api_key, timeout=REQUEST_TIMEOUT_S, max_retries=0
    )

    @_retrying(sdk)
    async def complete(
        prompt: str,
        system_prompt: str | None = None,
        history_messages: list[dict[str, str]] | None = None,
        **_kwargs: Any,
    ) -> str:
        messages = [*(history_messages or []), {"role": "user", "content": prompt}]
        system = {"system": system_prompt} if system_prompt else {}
        note_request()  # each attempt is a request paid for, failed or not
        # No temperature: the SDK dropped the argument in 1.0 (a TypeError on
        # every call), and the newer models accept only the default.
        response = await client.messages.create(
            model=model, messages=messages, max_tokens=MAX_OUTPUT_TOKENS, **system
        )
        return "".join(getattr(block, "text", "") for block in response.content)

    return complete
