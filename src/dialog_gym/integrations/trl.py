"""Multi-turn empathy dialogues inside TRL's `GRPOTrainer`.

`GRPOTrainer(rollout_func=...)` hands a rollout function the prompts of a batch and the
trainer; the function plays the episodes and returns token ids. This module's rollout
function plays whole dialogues: the trainer's model writes the supporter's turns, a
dialog-gym simulator answers as the help-seeker and moves the mood, and the conversation
is returned as one completion per prompt::

    prompt_ids      system prompt + the user's opening line (+ the assistant header)
    completion_ids  reply 1 | user turn 2 | reply 2 | user turn 3 | ... | reply N
    env_mask        1 ... 1 | 0  ....  0  | 1 ... 1 | 0  ....  0  | ... | 1 ... 1
    logprobs        the sampling log-probabilities of the reply tokens, 0.0 elsewhere

TRL multiplies its loss mask by `env_mask`, so the simulated user's tokens are context
only and carry no loss. The completion ends on the model's last reply (the user's final
answer only moves the mood, which is the reward).

Usage::

    from dialog_gym.integrations.trl import make_prompt_dataset, make_rollout_func, mood_reward

    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer, args=GRPOConfig(num_generations=8, ...),
        train_dataset=make_prompt_dataset(split="train"),
        rollout_func=make_rollout_func(simulator="calibrated", rules="rlver", max_turns=8),
        reward_funcs=[mood_reward],
    )

Prompts: each dataset prompt is an *episode key*, ``"dialog-gym episode persona=ID
seed=N"`` (see `EpisodeKey`, `make_prompt_dataset`). TRL repeats every prompt
`num_generations` times; the copies, on whatever process they land, replay the same
persona, seed and opening line, so a GRPO group differs only by what the model says. An
episode equals ``EmpathyDialogEnv().reset(seed=N, options={"persona_id": ID})`` followed by
the same replies.

Generation: without vLLM the trainer's model generates each turn with `generate` (batched
over the dialogues still running; the trainer's sampling settings). With `use_vllm=True`
each turn goes through the trainer's vLLM engine. Where generation is collective across
processes (vLLM, FSDP, DeepSpeed ZeRO-3), every process runs exactly `max_turns`
generation rounds, over all its dialogues, finished ones included. Any other
engine can be plugged in with `generate=` (see `TurnGenerator`).

Length: a dialogue stops early when `max_completion_length` tokens are used up; its reward
is then the mood reached so far and `dialog_terminal_reason` is ``"length"``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gymnasium.utils import seeding

from dialog_gym._async import LoopRunner
from dialog_gym.envs.empathy import select_personas
from dialog_gym.episodes import Episode
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.session import DialogConfig, DialogSession, UsesDialogConfig, takes_dialog_config

__all__ = [
    "DialogRollout",
    "EpisodeKey",
    "TurnGenerator",
    "make_prompt_dataset",
    "make_rollout_func",
    "mood_reward",
]

# (new token ids, their sampling log-probabilities) for each sequence of a batch.
TurnGenerator = Callable[[list[list[int]], int], list[tuple[list[int], list[float]]]]
"""`generate(sequences, max_new_tokens)`: continue each token sequence by one model turn.

Returns, per sequence, the new token ids (ending with an end-of-turn token unless cut by
`max_new_tokens`) and one log-probability per new token. Pass one as `generate=` to use
an inference engine of your own (an SGLang or vLLM server, ...).
"""

_KEY = re.compile(r"^dialog-gym episode persona=(?P<persona>\S+) seed=(?P<seed>-?\d+)$")


@dataclass(frozen=True)
class EpisodeKey:
    """What a `GRPOTrainer` prompt stands for: a persona and a seed."""

    persona_id: str
    seed: int

    def encode(self) -> str:
        if not self.persona_id or any(c.isspace() for c in self.persona_id):
            raise ValueError(f"persona id {self.persona_id!r} cannot be encoded in a prompt (empty or with spaces)")
        return f"dialog-gym episode persona={self.persona_id} seed={int(self.seed)}"

    @classmethod
    def parse(cls, prompt: Any) -> "EpisodeKey":
        """Read a key from a prompt: the key string, or a conversation whose last message is one."""
        text = prompt
        if isinstance(prompt, list) and prompt and isinstance(prompt[-1], dict):
            text = prompt[-1].get("content")
        match = _KEY.match(text.strip()) if isinstance(text, str) else None
        if match is None:
            raise ValueError(
                f"prompt {str(prompt)[:120]!r} is not a dialog-gym episode key; build the train dataset with "
                "dialog_gym.integrations.trl.make_prompt_dataset() (prompts like "
                "'dialog-gym episode persona=ID seed=N')"
            )
        return cls(match["persona"], int(match["seed"]))


def make_prompt_dataset(
    personas: Any = None,
    *,
    split: str | None = "train",
    language: str | None = None,
    n_prompts: int | None = None,
    seed: int = 0,
):
    """A `datasets.Dataset` of episode keys for `GRPOTrainer(train_dataset=...)`.

    Arguments:
        personas: None (the bundled sets), a path, a `PersonaSet` or a list of `Persona`s.
        split, language: filter the personas.
        n_prompts: how many prompts; None gives one per persona. Personas are used in
            turn, each prompt with its own seed (`seed`, `seed + 1`, ...).
        seed: the first episode seed.

    Columns: `prompt` (the key), `persona_id`, `seed`.
    """
    from datasets import Dataset

    pool = select_personas(personas, split, language)
    count = len(pool) if n_prompts is None else int(n_prompts)
    if count < 1:
        raise ValueError(f"n_prompts must be >= 1, got {n_prompts!r}")
    keys = [EpisodeKey(pool[i % len(pool)].id, seed + i) for i in range(count)]
    return Dataset.from_dict(
        {
            "prompt": [key.encode() for key in keys],
            "persona_id": [key.persona_id for key in keys],
            "seed": [key.seed for key in keys],
        }
    )


def mood_reward(prompts: Sequence[Any] | None = None, completions: Sequence[Any] | None = None, **kwargs: Any) -> list[float | None]:
    """The RLVER reward of each dialogue: final mood / 100 (from the rollout's extra fields).

    A dialogue that ended in a simulator error gets None: TRL leaves it out of its group's
    baseline and gives it no advantage, rather than training on an invented score.
    """
    if "dialog_reward" not in kwargs:
        raise KeyError(
            "mood_reward needs the 'dialog_reward' field of dialog_gym's rollout_func; pass "
            "rollout_func=make_rollout_func(...) to GRPOTrainer"
        )
    return list(kwargs["dialog_reward"])


# -- one dialogue's tokens ----------------------------------------------------------------
@dataclass
class _Trace:
    key: EpisodeKey
    session: DialogSession
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    env_mask: list[int] = field(default_factory=list)
    stopped: str | None = None  # "length" when the token budget ran out first

    @property
    def finished(self) -> bool:
        return self.session.done or self.stopped is not None

    def extend(self, ids: Sequence[int], logprobs: Sequence[float] | None, policy: bool) -> None:
        """Append tokens: the policy's (with their log-probabilities) or the environment's."""
        self.completion_ids.extend(int(i) for i in ids)
        self.logprobs.extend([float(x) for x in logprobs] if logprobs is not None else [0.0] * len(ids))
        self.env_mask.extend([1 if policy else 0] * len(ids))


class DialogRollout(UsesDialogConfig):
    """A `rollout_func` for `GRPOTrainer`: plays dialogues with the trainer's model.

    Arguments:
        config: the dialogue set-up, a `DialogConfig`; or give its fields (`simulator`,
            `simulator_options`, `rules`, `style`, `think`, `system_prompt`, `reply_guard`)
            as keyword arguments, as for `EmpathyDialogEnv`. The reward is the final mood
            (`reward_mode="terminal"`, no `format_penalty`): shape it in your own reward
            functions.
        personas: where episode keys are looked up (None: the bundled sets).
        max_turns: overrides the preset's turn limit (model replies per dialogue).
        max_tokens_per_turn: the most tokens one model reply may use.
        generate: a `TurnGenerator`; None uses the trainer's model (or its vLLM engine).
        on_episode: called with each finished dialogue's `Episode` record.
    """

    @takes_dialog_config
    def __init__(
        self,
        config: DialogConfig | Mapping[str, Any] | None = None,
        *,
        personas: Any = None,
        max_turns: int | None = None,
        max_tokens_per_turn: int = 256,
        generate: TurnGenerator | None = None,
        on_episode: Callable[[Episode], None] | None = None,
    ):
        assert isinstance(config, DialogConfig)  # resolved by takes_dialog_config
        if max_tokens_per_turn < 1:
            raise ValueError(f"max_tokens_per_turn must be >= 1, got {max_tokens_per_turn}")
        if config.reward_mode != "terminal" or config.format_penalty:
            raise ValueError(
                "the TRL rollout's reward is the final mood (mood_reward): reward_mode='dense' and format_penalty "
                "do not apply; add your own reward function to GRPOTrainer(reward_funcs=[...]) for shaping"
            )
        if max_turns is not None:
            config = dataclasses.replace(config, rules=config.rules.with_overrides(max_turns=int(max_turns)))
        self.config = config
        self.personas = PersonaSet.load(personas)
        self.max_tokens_per_turn = int(max_tokens_per_turn)
        self.generate = generate
        self.on_episode = on_episode
        self._runner = LoopRunner()  # one loop for every call: async clients stay bound to it
        self._played = 0
        self.__name__ = "dialog_gym_rollout"

    def __repr__(self) -> str:
        return (
            f"DialogRollout(simulator={self.simulator.identity()!r}, rules={self.rules.name!r}, "
            f"max_turns={self.rules.max_turns}, personas={len(self.personas)})"
        )

    def close(self) -> None:
        """Close the simulator (if it holds connections) and the event loop."""
        self._runner.run(self.config.aclose())
        self._runner.close()

    # -- the rollout ----------------------------------------------------------------------
    def __call__(self, prompts: list[Any], trainer: Any) -> dict[str, list[Any]]:
        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        template = _ChatTemplate(
            tokenizer,
            chat_template=getattr(trainer, "chat_template", None),
            template_kwargs=dict(getattr(trainer, "chat_template_kwargs", None) or {}),
        )
        budget = int(trainer.max_completion_length)
        generate = self.generate or default_generator(trainer)
        fixed_rounds = bool(getattr(generate, "collective", False))
        eos_ids = set(_eos_token_ids(trainer, tokenizer))

        keys = [EpisodeKey.parse(p) for p in prompts]
        sessions = self._runner.run(self._start([self._persona(k.persona_id) for k in keys], keys))
        traces = [_Trace(k, s, template.prompt_ids(s.messages)) for k, s in zip(keys, sessions)]

        for _ in range(self.rules.max_turns):
            running = [t for t in traces if not t.finished]
            if not running and not fixed_rounds:
                break
            asked = traces if fixed_rounds else running
            room = [max(1, budget - len(t.completion_ids)) for t in asked]
            outputs = generate([t.prompt_ids + t.completion_ids for t in asked], min(self.max_tokens_per_turn, max(room)))
            if len(outputs) != len(asked):
                raise ValueError(f"the turn generator returned {len(outputs)} outputs for {len(asked)} sequences")
            replies: list[tuple[_Trace, str]] = []
            for trace, limit, (ids, logprobs) in zip(asked, room, outputs):
                if trace.finished:
                    continue  # a collective round: this dialogue is over, its output is discarded
                ids, logprobs = list(ids)[:limit], list(logprobs)[:limit]
                if len(logprobs) != len(ids):
                    raise ValueError(f"the turn generator returned {len(logprobs)} log-probabilities for {len(ids)} tokens")
                trace.extend(ids, logprobs, policy=True)
                replies.append((trace, tokenizer.decode(ids, skip_special_tokens=True).strip()))
            self._runner.run(self._step(replies))
            for trace, _ in replies:
                if trace.session.done:
                    continue
                suffix = template.user_turn_ids(trace.session.history[-1]["content"])
                if not trace.completion_ids or trace.completion_ids[-1] not in eos_ids:  # cut: close the turn
                    suffix = [template.end_of_turn_id, *suffix]
                if len(trace.completion_ids) + len(suffix) >= budget:
                    trace.stopped = "length"  # no room left for another reply
                    continue
                trace.extend(suffix, None, policy=False)

        if self.on_episode is not None:
            for trace in traces:
                self._played += 1
                self.on_episode(
                    Episode.from_session(
                        trace.session, seed=trace.key.seed, group_id=trace.key.seed,
                        episode_id=f"trl-{trace.key.persona_id}-s{trace.key.seed}-{self._played}",
                    )
                )
        return self._output(traces, tokenizer)

    def _persona(self, persona_id: str) -> Persona:
        try:
            return self.personas.get(persona_id)
        except KeyError:
            raise KeyError(
                f"persona {persona_id!r} of a training prompt is not in the rollout's persona set; pass the same "
                "personas= to make_prompt_dataset() and make_rollout_func()"
            ) from None

    async def _start(self, personas: list[Persona], keys: list[EpisodeKey]) -> list[DialogSession]:
        """One dialogue per prompt, seeded by its key. The copies of a prompt (a GRPO group)
        may land on different processes, so each opens on its own; seeded alike, they draw
        the same opening line. A failed opening is a simulator_error dialogue."""
        sessions = [self.config.session(p, seeding.np_random(k.seed)[0]) for p, k in zip(personas, keys)]
        await asyncio.gather(*(session.start() for session in sessions))
        return sessions

    @staticmethod
    async def _step(replies: list[tuple[_Trace, str]]) -> None:
        await asyncio.gather(*(trace.session.step(reply) for trace, reply in replies))

    def _output(self, traces: list[_Trace], tokenizer: Any) -> dict[str, list[Any]]:
        for trace in traces:
            if not trace.completion_ids:  # only when the opening failed: one masked end-of-turn token
                trace.extend([tokenizer.eos_token_id], None, policy=False)
        return {
            "prompt_ids": [t.prompt_ids for t in traces],
            "completion_ids": [t.completion_ids for t in traces],
            "logprobs": [t.logprobs for t in traces],
            "env_mask": [t.env_mask for t in traces],
            "dialog_reward": [
                None if t.session.terminal_reason == "simulator_error" else self.rules.reward(t.session.mood)
                for t in traces
            ],
            "dialog_final_mood": [t.session.mood for t in traces],
            "dialog_turns": [t.session.turn for t in traces],
            "dialog_terminal_reason": [t.session.terminal_reason or t.stopped for t in traces],
            "dialog_emotion_deltas": [[turn.delta for turn in t.session.turns] for t in traces],
            "dialog_persona_id": [t.key.persona_id for t in traces],
        }


def make_rollout_func(*args: Any, **kwargs: Any) -> DialogRollout:
    """A `rollout_func` for `GRPOTrainer`: `DialogRollout(...)` (see it for the arguments)."""
    return DialogRollout(*args, **kwargs)


make_rollout_func.__signature__ = inspect.signature(DialogRollout)  # type: ignore[attr-defined]


# -- chat template arithmetic -------------------------------------------------------------
class _ChatTemplate:
    """Token ids of a conversation's start and of each further user turn.

    User turns are rendered once against a fixed dummy exchange (the method TRL uses for
    tool results): the tokens after the assistant's end-of-turn token up to and including
    the next assistant header. The model's own tokens are never re-tokenised.
    """

    _DUMMY = [{"role": "user", "content": "dummy"}, {"role": "assistant", "content": "dummy"}]

    def __init__(self, tokenizer: Any, *, chat_template: str | None, template_kwargs: dict[str, Any]):
        if getattr(tokenizer, "chat_template", None) is None and chat_template is None:
            raise ValueError("the trainer's tokenizer has no chat template; dialog-gym rollouts need one")
        self.tokenizer = tokenizer
        self.chat_template = chat_template
        self.template_kwargs = template_kwargs
        if tokenizer.eos_token_id is None:
            raise ValueError("the trainer's tokenizer has no eos_token_id (needed to close a model turn)")
        self.end_of_turn_id = int(tokenizer.eos_token_id)
        self._prefix = self._render(self._DUMMY, generation_prompt=False)
        ends = [i for i, tok in enumerate(self._prefix) if tok == self.end_of_turn_id]
        if not ends:
            raise ValueError(
                "the chat template does not close an assistant turn with the tokenizer's eos token "
                f"({tokenizer.eos_token!r}); set tokenizer.eos_token to the end-of-turn token"
            )
        self._prefix = self._prefix[: ends[-1] + 1]

    def _render(self, messages: list[dict[str, str]], *, generation_prompt: bool) -> list[int]:
        ids = self.tokenizer.apply_chat_template(
            messages,
            add_generation_prompt=generation_prompt,
            tokenize=True,
            return_dict=False,
            chat_template=self.chat_template,
            **self.template_kwargs,
        )
        if ids and isinstance(ids[0], list):  # a processor's batched output
            ids = ids[0]
        return [int(i) for i in ids]

    def prompt_ids(self, messages: list[dict[str, str]]) -> list[int]:
        return self._render([dict(m) for m in messages], generation_prompt=True)

    def user_turn_ids(self, content: str) -> list[int]:
        full = self._render([*self._DUMMY, {"role": "user", "content": content}], generation_prompt=True)
        if full[: len(self._prefix)] != self._prefix:
            raise ValueError(
                "the chat template is not prefix-preserving (rendering a further user turn changes the tokens "
                "before it); use a training chat template (see trl.chat_template_utils.get_training_chat_template)"
            )
        return full[len(self._prefix) :]


def _eos_token_ids(trainer: Any, tokenizer: Any) -> list[int]:
    ids = list(getattr(trainer, "eos_token_ids", None) or [])
    if tokenizer.eos_token_id is not None and tokenizer.eos_token_id not in ids:
        ids.append(tokenizer.eos_token_id)
    return [int(i) for i in ids]


# -- turn generators ----------------------------------------------------------------------
def default_generator(trainer: Any) -> TurnGenerator:
    """The trainer's own engine: its vLLM engine when `use_vllm=True`, else `model.generate`."""
    if getattr(trainer, "use_vllm", False):
        return VLLMTurnGenerator(trainer)
    return TransformersTurnGenerator(trainer)


class TransformersTurnGenerator:
    """One batched `generate` per turn with the trainer's model and sampling settings.

    Log-probabilities are those of the processed distribution the token was sampled from
    (after temperature, top-k/top-p), like vLLM's ``processed_logprobs``.
    """

    def __init__(self, trainer: Any):
        self.trainer = trainer

    @property
    def collective(self) -> bool:
        """Whether every process must call `generate` equally often (sharded weights:
        FSDP or DeepSpeed ZeRO-3 gather them in each call)."""
        trainer = self.trainer
        if getattr(trainer.accelerator, "num_processes", 1) <= 1:
            return False
        if getattr(trainer, "is_fsdp_enabled", False):
            return True
        plugin = getattr(trainer.accelerator.state, "deepspeed_plugin", None)
        return plugin is not None and getattr(plugin, "zero_stage", 0) == 3

    def __call__(self, sequences: list[list[int]], max_new_tokens: int) -> list[tuple[list[int], list[float]]]:
        import torch
        from transformers import GenerationConfig
        from trl.models.utils import unwrap_model_for_generation

        trainer = self.trainer
        tokenizer = getattr(trainer.processing_class, "tokenizer", trainer.processing_class)
        device = trainer.accelerator.device
        pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        width = max(len(s) for s in sequences)
        input_ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(sequences), width), dtype=torch.long)
        for row, seq in enumerate(sequences):  # left padding
            input_ids[row, width - len(seq) :] = torch.tensor(seq, dtype=torch.long)
            attention_mask[row, width - len(seq) :] = 1
        config = GenerationConfig.from_dict(trainer.generation_config.to_dict())
        config.max_new_tokens = int(max_new_tokens)
        config.output_scores = True
        config.return_dict_in_generate = True
        eos_ids = set(_eos_token_ids(trainer, tokenizer))
        summon = getattr(getattr(trainer, "_dist", None), "summon_full_params", None)
        with (
            unwrap_model_for_generation(
                trainer.model_wrapped,
                trainer.accelerator,
                gather_deepspeed3_params=trainer.args.ds3_gather_for_generation,
                generation_kwargs=getattr(trainer, "generation_kwargs", None),
                gradient_checkpointing_kwargs=trainer.args.gradient_checkpointing_kwargs,
            ) as model,
            torch.no_grad(),
            summon(trainer.model_wrapped, recurse=False) if summon is not None else contextlib.nullcontext(),
        ):
            out = model.generate(
                input_ids=input_ids.to(device), attention_mask=attention_mask.to(device), generation_config=config
            )
        new_tokens = out.sequences[:, width:].cpu()
        step_logprobs = torch.stack(
            [
                torch.log_softmax(scores.float(), dim=-1).gather(1, new_tokens[:, i : i + 1].to(scores.device)).squeeze(1).cpu()
                for i, scores in enumerate(out.scores)
            ],
            dim=1,
        )
        results = []
        for row in range(len(sequences)):
            ids = new_tokens[row].tolist()
            end = next((i + 1 for i, tok in enumerate(ids) if tok in eos_ids), len(ids))
            results.append((ids[:end], step_logprobs[row, :end].tolist()))
        return results


class VLLMTurnGenerator:
    """One call to the trainer's vLLM engine per turn (server or colocate mode).

    vLLM generation in TRL is collective across processes, so the rollout calls it for
    every dialogue in every round (finished dialogues' outputs are discarded). A turn may
    use up to the trainer's `max_completion_length` tokens; the rollout trims it to the
    dialogue's remaining budget. Not exercised by dialog-gym's CPU test suite.
    """

    collective = True

    def __init__(self, trainer: Any):
        self.trainer = trainer

    def __call__(self, sequences: list[list[int]], max_new_tokens: int) -> list[tuple[list[int], list[float]]]:
        _, completion_ids, logprobs, _ = self.trainer.vllm_generation.generate(
            prompts=sequences, images=None, num_generations=1
        )
        results = []
        for ids, lps in zip(completion_ids, logprobs):
            top1 = [float("nan") if lp is None or lp[0] is None else float(lp[0]) for lp in lps] if lps is not None else [0.0] * len(ids)
            results.append((list(ids)[:max_new_tokens], top1[:max_new_tokens]))
        return results
