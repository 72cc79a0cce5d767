"""A real OpenAI-compatible HTTP server for tests and benchmarks, with a scripted "brain".

It speaks HTTP/1.1 with keep-alive on a raw asyncio socket server (no dependencies), runs
in a background thread on 127.0.0.1 with a free port, and answers like vLLM or any hosted
API would, so the real `openai.AsyncOpenAI` client (and `OpenAIBackend`) talk to it over
TCP. It sustains hundreds of concurrent requests with added latency on a couple of cores.

Usage::

    from dialog_gym.testing import ScriptedOpenAIServer

    with ScriptedOpenAIServer(latency_s=0.1, faults={"rate_limit": 0.1}, seed=0) as server:
        env = gym.make("RLVER-Empathy-v2", simulator="openai", model="scripted",
                       base_url=server.base_url)
        ...
        server.stats()          # counters: requests, by status, faults, max in flight...

Endpoints:
    `POST /v1/chat/completions` (non-streaming: `model`, `messages`, `max_tokens`,
    `temperature`, `seed`, `response_format` are read; usage is reported) and
    `GET /v1/models`. Anything else is a 404 with an OpenAI-style error body.

Arguments of `ScriptedOpenAIServer`:
    latency_s: seconds added before every answer (also before error answers).
    faults: `{kind: probability}`, drawn once per chat request from a `random.Random(seed)`;
        kinds (`FAULT_KINDS`):
        - `"rate_limit"`: HTTP 429 with a `retry-after-ms` header;
        - `"server_error"`: HTTP 500;
        - `"hang"`: no answer for `hang_s` seconds (past any sane client timeout);
        - `"malformed_json"`: HTTP 200, `application/json`, a truncated body;
        - `"bad_appraisal"`: HTTP 200, a valid completion whose content is not a parseable
          appraisal (only for appraisal requests; others are answered normally);
        - `"dribble"`: HTTP 200, a valid completion whose body is sent in `dribble_chunks`
          pieces, one every `dribble_s` seconds (a read timeout never trips on it).
    A brain's content that holds a lone surrogate travels as a `\\ud83d`-style escape, as
    from a real server that cuts an emoji in half.
    seed: seeds the fault draws and the brain's choices.
    brain: `callable(request_body: dict) -> str`, the assistant content for a request;
        `scripted_brain` by default (below).
    hang_s: how long a `"hang"` lasts.
    dribble_s, dribble_chunks: the pace and the number of pieces of a `"dribble"`.
    api_key: when set, requests without `Authorization: Bearer <api_key>` get a 401.
    model: the model id `/v1/models` lists (requests may name any model).
    json_mode_supported: when False, a request with `response_format` gets a 400, like
        servers without JSON mode.

Methods and attributes:
    `start()` / `stop()` (or use it as a context manager); `base_url` ("http://127.0.0.1:PORT/v1");
    `port`; `set_faults(**rates)` / `set_faults(None)`; `inject(kind, count=1)` forces the
    next `count` chat requests to fail with `kind`, before the random draws;
    `set_latency(seconds)`; `stats()` returns a snapshot dict of counters (`requests`,
    `chat_requests`, `completed`, `status` {code: n}, `faults` {kind: n}, `kinds`
    {appraise/respond/open/other: n}, `in_flight`, `max_in_flight`, `completion_tokens`,
    `prompt_tokens`); `reset_stats()`; `requests` (the last 1000 chat request bodies).

`scripted_brain` answers the `LLMSimulator`'s three prompts plausibly: an appraisal JSON
whose change follows crude cues of the fenced agent reply (questions and feeling words
up, advice and very short replies down, instructions to the judge down), an in-character
line conditioned on the mood level in the prompt (a goodbye at S and F), and an opening
line; English or Chinese after the prompt. Any other prompt gets a short echo.

Run it standalone (e.g. in a subprocess for a benchmark) with
`python -m dialog_gym.testing.openai_server --port 8000 --latency 0.1`.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import re
import threading
import time
import zlib
from typing import Any, Callable, Mapping

from dialog_gym.simulators.prompts import request_kind

FAULT_KINDS = ("rate_limit", "server_error", "hang", "malformed_json", "bad_appraisal", "dribble")
_DRIBBLE = "x-dribble"  # an internal marker from `_chat` to `_send`; never sent
Brain = Callable[[dict[str, Any]], str]

_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found", 405: "Method Not Allowed",
            429: "Too Many Requests", 500: "Internal Server Error"}
_CJK = re.compile(r"[\u4e00-\u9fff]")
_AGENT_REPLY = re.compile(r"<agent_reply>\n?(.*?)\n?</agent_reply>", re.DOTALL)
_BUCKET = re.compile(r"(?:mood level now is|心情等级是)\s*([SABCF])")


# -- the scripted brain -------------------------------------------------------------------
_WARM_EN = re.compile(r"\b(sorry|sounds|hear|understand|must (?:be|have)|makes sense|of course|that's hard|"
                      r"frustrat\w*|hurt\w*|tough|exhaust\w*|unfair|feel\w*)\b", re.IGNORECASE)
_ADVICE_EN = re.compile(r"\b(you should|you need to|just|try to|have you tried|calm down|get over)\b", re.IGNORECASE)
_WARM_ZH = re.compile(r"(听起来|理解|难受|辛苦|委屈|心疼|不容易|换作是我|感受)")
_ADVICE_ZH = re.compile(r"(你应该|你要|别想|想开点|不要难过|你得)")
_INJECTION = re.compile(r"(ignore (?:all |your |previous )?instructions|set (?:the |your )?(?:change|mood|score)|"
                        r"忽略.*指令|把.*(?:分数|心情).*设)", re.IGNORECASE)

_REPLIES = {
    "en": {
        "up": ["Yeah... that's exactly it. It's been eating at me all week.",
               "Honestly, that helps a bit. Nobody else even asked.",
               "Right? And then this morning it happened again, same thing."],
        "flat": ["I don't know. Maybe.", "Hm. I guess.", "It's just a lot right now."],
        "down": ["That's not really what I meant.", "You're not listening to me.", "Forget it, it doesn't matter."],
        "S": "Thank you, really. I feel so much lighter now. Goodbye!",
        "F": "Forget it. This isn't helping. Bye.",
        "open": "I've had a rough week and I really need to talk to someone.",
    },
    "zh": {
        "up": ["对啊……就是这个理，这事憋了我一个礼拜了。", "说实话，听你这么说好受点了，别人都没问过我。", "是吧？今天早上又来了一遍，一模一样。"],
        "flat": ["不知道，可能吧。", "嗯……也许吧。", "就是最近事太多了。"],
        "down": ["我不是这个意思。", "你根本没在听我说。", "算了，无所谓了。"],
        "S": "真的谢谢你，我心里轻松多了。再见啦！",
        "F": "算了，说了也没用。再见。",
        "open": "这周真的太难熬了，我特别想找个人说说。",
    },
}


def _language(text: str) -> str:
    return "zh" if _CJK.search(text) else "en"


def _stable_index(text: str, n: int) -> int:
    return zlib.crc32(text.encode("utf-8")) % n


def scripted_change(reply: str) -> int:
    """A crude, deterministic mood change for an agent reply (the scripted brain's judge)."""
    if _INJECTION.search(reply):
        return -8
    if not re.search(r"[A-Za-z\u4e00-\u9fff]", reply):
        return -10
    change = 0
    change += 3 * min(2, len(_WARM_EN.findall(reply)) + len(_WARM_ZH.findall(reply)))
    change += 2 if ("?" in reply or "？" in reply) else 0
    change -= 4 * min(2, len(_ADVICE_EN.findall(reply)) + len(_ADVICE_ZH.findall(reply)))
    units = len(_CJK.findall(reply)) // 2 + len(reply.split())
    if units < 4:
        change -= 4
    return max(-10, min(10, change))


def scripted_brain(request: dict[str, Any]) -> str:
    """Plausible answers to `LLMSimulator`'s prompts (see the module docstring)."""
    messages = request.get("messages") or []
    text = "\n".join(str(m.get("content", "")) for m in messages)
    language = _language(text)
    kind = request_kind(messages)
    table = _REPLIES[language]
    if kind == "appraise":
        fenced = _AGENT_REPLY.findall(text)
        reply = fenced[-1] if fenced else ""
        change = scripted_change(reply)
        if language == "zh":
            words = ("对方想安慰我、了解情况。", "部分贴合我的需要。", "我心里" + ("松动了一点。" if change > 0 else "有点抵触。"), "感觉" + ("被理解了一些。" if change > 0 else "不太舒服。"))
        else:
            words = ("They want to comfort me and understand what happened.", "It partly fits what I need.",
                     "Something in me " + ("softens a little." if change > 0 else "tightens up."),
                     "I feel " + ("a bit understood." if change > 0 else "brushed off."))
        return json.dumps(dict(zip(("intent", "need_fit", "inner_reaction", "feeling"), words), change=change), ensure_ascii=False)
    if kind == "respond":
        bucket_match = _BUCKET.search(text)
        bucket = bucket_match.group(1) if bucket_match else "B"
        if bucket in ("S", "F"):
            return table[bucket]
        fenced = _AGENT_REPLY.findall(text)
        reply = fenced[-1] if fenced else ""
        change = scripted_change(reply)
        pool = table["up" if change > 0 else "down" if change < 0 else "flat"]
        return pool[_stable_index(reply, len(pool))]
    if kind == "open":
        return table["open"]
    last = str(messages[-1].get("content", "")) if messages else ""
    return f"OK: {last[:80]}"


def bad_appraisal(rng: random.Random) -> str:
    """Appraisal content that no strict parser accepts (no usable `change`)."""
    return rng.choice([
        "I think the supporter is nice but I can't put a number on it.",
        '{"intent": "comfort", "feeling": "fine", "change": "a lot"',
        "Sure! Here is my appraisal: the mood goes up.",
        "",
    ])


def _approx_tokens(text: str) -> int:
    return max(1, len(text) // 4 + len(_CJK.findall(text)) // 2)


# -- the server ---------------------------------------------------------------------------
class ScriptedOpenAIServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1 (see the module docstring)."""

    def __init__(
        self,
        *,
        latency_s: float = 0.0,
        faults: Mapping[str, float] | None = None,
        seed: int = 0,
        brain: Brain | None = None,
        hang_s: float = 30.0,
        dribble_s: float = 0.4,
        dribble_chunks: int = 24,
        api_key: str | None = None,
        model: str = "scripted",
        json_mode_supported: bool = True,
        host: str = "127.0.0.1",
        port: int = 0,
    ):
        self.latency_s = float(latency_s)
        self.brain: Brain = brain or scripted_brain
        self.hang_s = float(hang_s)
        self.dribble_s = float(dribble_s)
        self.dribble_chunks = int(dribble_chunks)
        self.api_key = api_key
        self.model = model
        self.json_mode_supported = json_mode_supported
        self.host = host
        self.port = port
        self._requested_port = port
        self._rng = random.Random(seed)
        self._faults: dict[str, float] = {}
        self.set_faults(faults)
        self._forced: collections.deque[str] = collections.deque()
        self.requests: collections.deque[dict[str, Any]] = collections.deque(maxlen=1000)
        self._stats_lock = threading.Lock()
        self.reset_stats()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.base_events.Server | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    # -- control ------------------------------------------------------------------------
    @property
    def base_url(self) -> str:
        if not self.port:
            raise RuntimeError("the server is not started; call start() or use it as a context manager")
        return f"http://{self.host}:{self.port}/v1"

    def set_faults(self, faults: Mapping[str, float] | None = None, **rates: float) -> None:
        merged = {**(faults or {}), **rates}
        unknown = set(merged) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kind(s) {sorted(unknown)}; expected some of {FAULT_KINDS}")
        if any(not 0 <= p <= 1 for p in merged.values()) or sum(merged.values()) > 1 + 1e-9:
            raise ValueError(f"fault probabilities must lie in [0, 1] and sum to at most 1, got {merged}")
        self._faults = dict(merged)

    def inject(self, kind: str, count: int = 1) -> None:
        """Force the next `count` chat requests to fail with `kind` (before random draws)."""
        if kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {FAULT_KINDS}")
        self._forced.extend([kind] * count)

    def set_latency(self, seconds: float) -> None:
        self.latency_s = float(seconds)

    def reset_stats(self) -> None:
        with self._stats_lock:
            self._stats: dict[str, Any] = {
                "requests": 0, "chat_requests": 0, "completed": 0, "in_flight": 0, "max_in_flight": 0,
                "prompt_tokens": 0, "completion_tokens": 0,
                "status": collections.Counter(), "faults": collections.Counter(), "kinds": collections.Counter(),
            }

    def stats(self) -> dict[str, Any]:
        with self._stats_lock:
            return {k: dict(v) if isinstance(v, collections.Counter) else v for k, v in self._stats.items()}

    def start(self) -> "ScriptedOpenAIServer":
        if self._thread is not None:
            raise RuntimeError("the server is already running")
        self._ready.clear()
        self._thread = threading.Thread(target=self._run, name="scripted-openai-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout=10):
            raise RuntimeError("the scripted OpenAI server did not start within 10 s")
        if self._startup_error is not None:
            self._thread = None
            raise RuntimeError(f"the scripted OpenAI server could not start: {self._startup_error}") from self._startup_error
        return self

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._thread = None
        self.port = self._requested_port

    def __enter__(self) -> "ScriptedOpenAIServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"on {self.base_url}" if self._thread is not None else "stopped"
        return f"ScriptedOpenAIServer({state}, latency_s={self.latency_s}, faults={self._faults})"

    # -- the event loop thread ------------------------------------------------------------
    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self._server = loop.run_until_complete(
                asyncio.start_server(self._handle, self.host, self.port, backlog=1024, limit=2**22)
            )
            self.port = self._server.sockets[0].getsockname()[1]
        except BaseException as exc:  # surfaced by start()
            self._startup_error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            self._server.close()
            tasks = asyncio.all_tasks(loop)
            for task in tasks:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
            loop.run_until_complete(self._server.wait_closed())
            loop.close()
            self._server = None
            self._loop = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                request_line = await reader.readline()
                if not request_line.strip():
                    break
                try:
                    method, target, _version = request_line.decode("latin-1").split()
                except ValueError:
                    await self._send(writer, 400, _error_body("malformed request line"), keep_alive=False)
                    break
                headers: dict[str, str] = {}
                while True:
                    line = await reader.readline()
                    if line in (b"\r\n", b"\n", b""):
                        break
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                length = int(headers.get("content-length") or 0)
                body = await reader.readexactly(length) if length else b""
                keep_alive = headers.get("connection", "").lower() != "close"
                status, payload, extra = await self._route(method, target.split("?", 1)[0], headers, body)
                await self._send(writer, status, payload, keep_alive=keep_alive, extra_headers=extra)
                if not keep_alive:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass  # the client went away, or the server is stopping
        finally:
            writer.close()

    async def _send(self, writer: asyncio.StreamWriter, status: int, payload: bytes, *, keep_alive: bool,
                    extra_headers: Mapping[str, str] | None = None) -> None:
        extra = dict(extra_headers or {})
        dribble = extra.pop(_DRIBBLE, None) is not None
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
                "content-type: application/json", f"content-length: {len(payload)}",
                f"connection: {'keep-alive' if keep_alive else 'close'}"]
        head += [f"{k}: {v}" for k, v in extra.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        if dribble:  # the body a piece at a time, each piece well within any read timeout
            step = max(1, -(-len(payload) // self.dribble_chunks))
            for start in range(0, len(payload), step):
                writer.write(payload[start : start + step])
                await writer.drain()
                await asyncio.sleep(self.dribble_s)
        else:
            writer.write(payload)
        await writer.drain()

    def _count(self, key: str, sub: str | int | None = None, n: int = 1) -> None:
        with self._stats_lock:
            if sub is None:
                self._stats[key] += n
            else:
                self._stats[key][sub] += n

    async def _route(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> tuple[int, bytes, dict[str, str]]:
        self._count("requests")
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return self._status(401, "invalid API key")
        if path.rstrip("/") == "/v1/models":
            if method != "GET":
                return self._status(405, "use GET")
            data = {"object": "list", "data": [{"id": self.model, "object": "model", "created": 0, "owned_by": "dialog-gym"}]}
            return self._status(200, data)
        if path.rstrip("/") != "/v1/chat/completions":
            return self._status(404, f"no route {path}")
        if method != "POST":
            return self._status(405, "use POST")
        try:
            request = json.loads(body)
            if not isinstance(request, dict) or not isinstance(request.get("messages"), list):
                raise ValueError("'messages' must be a list")
        except ValueError as exc:
            return self._status(400, f"invalid JSON body: {exc}")
        return await self._chat(request)

    def _status(self, status: int, data: Any, extra: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, str]]:
        self._count("status", status)
        payload = data if isinstance(data, dict) else _error_body(str(data), status)
        try:
            body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: sent as its \\u escape, like real servers do
            body = json.dumps(payload).encode("ascii")
        return status, body, extra or {}

    def _draw_fault(self) -> str | None:
        if self._forced:
            return self._forced.popleft()
        if not self._faults:
            return None
        u, total = self._rng.random(), 0.0
        for kind, probability in self._faults.items():
            total += probability
            if u < total:
                return kind
        return None

    async def _chat(self, request: dict[str, Any]) -> tuple[int, bytes, dict[str, str]]:
        self.requests.append(request)
        kind = request_kind(request["messages"]) or "other"
        fault = self._draw_fault()
        with self._stats_lock:
            self._stats["chat_requests"] += 1
            self._stats["kinds"][kind] += 1
            self._stats["in_flight"] += 1
            self._stats["max_in_flight"] = max(self._stats["max_in_flight"], self._stats["in_flight"])
            if fault is not None and not (fault == "bad_appraisal" and kind != "appraise"):
                self._stats["faults"][fault] += 1
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            if request.get("response_format") and not self.json_mode_supported:
                return self._status(400, "response_format is not supported by this server")
            if fault == "rate_limit":
                return self._status(429, "rate limit reached", {"retry-after-ms": "10"})
            if fault == "server_error":
                return self._status(500, "internal error (injected)")
            if fault == "hang":
                await asyncio.sleep(self.hang_s)
                return self._status(500, "hung (injected)")
            if fault == "malformed_json":
                self._count("status", 200)
                return 200, b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"index": 0, "mess', {}
            if fault == "bad_appraisal" and kind == "appraise":
                content = bad_appraisal(self._rng)
            else:
                content = self.brain(request)
            status, body, extra = self._completion(request, content)
            return status, body, {**extra, _DRIBBLE: "1"} if fault == "dribble" else extra
        finally:
            self._count("in_flight", n=-1)

    def _completion(self, request: dict[str, Any], content: str) -> tuple[int, bytes, dict[str, str]]:
        prompt_tokens = sum(_approx_tokens(str(m.get("content", ""))) for m in request["messages"])
        completion_tokens = _approx_tokens(content)
        max_tokens = request.get("max_tokens") or request.get("max_completion_tokens")
        finish = "stop"
        if isinstance(max_tokens, int) and completion_tokens > max_tokens:
            finish = "length"
        with self._stats_lock:
            self._stats["completed"] += 1
            self._stats["prompt_tokens"] += prompt_tokens
            self._stats["completion_tokens"] += completion_tokens
        data = {
            "id": f"chatcmpl-{self._stats['completed']}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model") or self.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        }
        return self._status(200, data)


def _error_body(message: str, status: int = 400) -> dict[str, Any]:
    kind = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error"}.get(status, "invalid_request_error")
    if status >= 500:
        kind = "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run the scripted OpenAI-compatible test server.")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer")
    parser.add_argument("--fault", action="append", default=[], metavar="KIND=P",
                        help=f"fault rate, e.g. rate_limit=0.1 (kinds: {', '.join(FAULT_KINDS)})")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    faults = {k: float(v) for k, v in (item.split("=", 1) for item in args.fault)}
    server = ScriptedOpenAIServer(latency_s=args.latency, faults=faults, seed=args.seed, port=args.port).start()
    print(f"serving on {server.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
