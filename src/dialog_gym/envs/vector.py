"""`EmpathyVectorEnv`: N dialogues stepped together, every simulator call of a step concurrent."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dialog_gym._async import LoopRunner, gather_or_cancel
from dialog_gym.envs.copying import CopyableEnv
from dialog_gym.envs.empathy import MAX_TEXT_LENGTH, select_personas
from dialog_gym.envs.spaces import UnicodeText
from dialog_gym.session import DialogConfig, DialogSession, UsesDialogConfig, takes_dialog_config

_RESET_OPTIONS = {"persona_id", "persona_ids", "group_size", "reset_mask"}


class EmpathyVectorEnv(CopyableEnv, UsesDialogConfig, VectorEnv):
    """
    ## Description
    `num_envs` independent `EmpathyDialogEnv` dialogues behind one Gymnasium vector API,
    sharing one simulator (one HTTP client and connection pool) and one event loop. All the
    simulator calls of a `step` (or `reset`) run concurrently, so with an LLM simulator a
    step of 256 sub-envs takes about as long as one simulator reaction, not 256 of them.
    Created by `gym.make_vec(env_id, num_envs=N, vectorization_mode="vector_entry_point")`
    (the default vectorization mode of every dialog-gym env id).

    ## Action Space
    `Tuple` of `num_envs` `UnicodeText(65536)`: one reply (`str`) per sub-env, as a list or a
    tuple. A sub-env that is not stepped this time (it is being autoreset, or it has
    finished with autoreset disabled) ignores its action, which may then be `None`. Every
    action of a step is checked (a `str`, text that UTF-8 can encode unless `reply_guard`
    repairs it) before any sub-env moves, so a step that raises, naming the sub-env, leaves
    every dialogue as it was.

    ## Observation Space
    `Tuple` of `num_envs` `UnicodeText(65536)`: each sub-env's latest user message, as a
    tuple of `str`. The conversation of sub-env `i` is `infos["messages"][i]`.

    ## Rewards, Episode End, Info
    Per sub-env exactly as `EmpathyDialogEnv` (terminal reward final mood / 100; ends at the
    preset's mood thresholds, a goodbye or the turn limit; `terminal_reason="simulator_error"`
    truncates). `infos` follow Gymnasium's vector convention: `infos[key]` is an array over
    sub-envs and `infos["_" + key]` the mask of sub-envs that reported `key` this call
    (nested dicts such as `usage` and `privileged` likewise).

    ## Autoreset
    `autoreset_mode` (`gymnasium.vector.AutoresetMode` or its string value):
    - `NEXT_STEP` (default, Gymnasium's): a sub-env that ended is reset on the next `step`,
      whose action for it is ignored; that step returns its new opening line, reward 0.
    - `SAME_STEP`: a sub-env that ends is reset within the same `step`; its last
      observation and info are in `infos["final_obs"]` and `infos["final_info"]`.
    - `DISABLED`: finished sub-envs are never stepped again until `reset` (use
      `options={"reset_mask": mask}` to reset some): their action is ignored, their
      observation stays the last one, reward 0, `terminated`/`truncated` keep their final
      values and they report no info (their `infos["_key"]` masks are False). Episodes end
      at different turns; finished sub-envs never block or slow the others.
    An autoreset draws a new persona with the sub-env's own generator.

    A sub-env whose opening line fails (the simulator gave up) starts an episode that is
    over at once: `infos["terminal_reason"]` is `"simulator_error"`, the error is in
    `infos["error"]`, and it counts as truncated, so the next `step` resets it (in every
    mode but `DISABLED`, where it waits for `reset`). A failed opening never raises.

    ## Seeding and GRPO groups
    `reset(seed=s)` seeds sub-env `i` with `s + i` (Gymnasium's convention; a list of seeds
    is also accepted), so sub-env `i` plays exactly the episode of
    `EmpathyDialogEnv.reset(seed=s + i)` given the same replies. Reset options:
    - `persona_id`: one persona for every sub-env reset.
    - `persona_ids`: one persona id per sub-env (`num_envs` entries), or one per group
      (`num_envs // group_size` entries); `None` entries are drawn at random.
    - `group_size` (default: the constructor's `group_size`, 1): consecutive blocks of
      `group_size` sub-envs form GRPO groups, opened with `DialogConfig.open_group`: the
      first sub-env of a group (its leader) chooses the persona and the opening line with
      its generator; every member then starts from the leader's persona, opening line
      *and generator state*, so a group is `group_size` copies of one start, and with the
      same replies its members play identical episodes. Only the reset's episodes are
      grouped (autoresets are per sub-env).
    - `reset_mask`: a bool array; only those sub-envs are reset (groups must lie entirely
      inside or outside the mask).

    ## Arguments
    `num_envs` and `autoreset_mode`, `group_size`, then every argument of `EmpathyDialogEnv`:
    `config` (a `DialogConfig`) or its fields (`simulator`, `simulator_options`, `rules`,
    `style`, `think`, `reward_mode`, `format_penalty`, `system_prompt`, `reply_guard`), and
    `personas`, `split`, `language`; `render_mode="ansi"` makes `render()` return one
    transcript per sub-env.

    ## Copying
    As `EmpathyDialogEnv`: with an offline simulator `copy.deepcopy` and `pickle` copy every
    sub-env's dialogue and generator; with an LLM simulator they raise `TypeError`.

    ## Async core
    `await venv.areset(...)` and `await venv.astep(actions)` for code that already runs an
    event loop; `reset`/`step` run them on the env's own loop.

    ## Example
    >>> import gymnasium as gym, dialog_gym
    >>> venv = gym.make_vec("RLVER-Empathy-v2", num_envs=4, vectorization_mode="vector_entry_point")
    >>> observations, infos = venv.reset(seed=0, options={"group_size": 2})
    >>> observations, rewards, terminations, truncations, infos = venv.step(["I'm listening."] * 4)
    """

    @takes_dialog_config
    def __init__(
        self,
        num_envs: int = 1,
        config: DialogConfig | Mapping[str, Any] | None = None,
        *,
        personas: Any = None,
        split: str | None = "train",
        language: str | None = None,
        render_mode: str | None = None,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        group_size: int = 1,
    ):
        if not isinstance(num_envs, (int, np.integer)) or isinstance(num_envs, bool) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be 'ansi' or None for EmpathyVectorEnv, got {render_mode!r}")
        self.num_envs = int(num_envs)
        self.autoreset_mode = AutoresetMode(autoreset_mode)
        self.group_size = self._check_group_size(group_size)
        self.metadata = {"render_modes": ["ansi"], "autoreset_mode": self.autoreset_mode}
        self.render_mode = render_mode
        self.config = config
        self.personas = select_personas(personas, split, language)

        self.single_observation_space = UnicodeText(MAX_TEXT_LENGTH)
        self.single_action_space = UnicodeText(MAX_TEXT_LENGTH)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

        n = self.num_envs
        self._rngs: list[np.random.Generator | None] = [None] * n
        self._sessions: list[DialogSession | None] = [None] * n
        self._observations: list[str] = [""] * n
        self._terminations = np.zeros(n, dtype=np.bool_)
        self._truncations = np.zeros(n, dtype=np.bool_)
        self._autoreset = np.zeros(n, dtype=np.bool_)
        self._runner = LoopRunner()

    # -- state ----------------------------------------------------------------------------
    @property
    def sessions(self) -> tuple[DialogSession | None, ...]:
        """The current dialogue of each sub-env (None before the first reset)."""
        return tuple(self._sessions)

    @property
    def done(self) -> np.ndarray:
        """Which sub-envs' current episodes have ended (terminated or truncated)."""
        return self._terminations | self._truncations

    # -- async core -----------------------------------------------------------------------
    async def areset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        """Reset every sub-env (or those in `options["reset_mask"]`); see the class docstring."""
        options = dict(options or {})
        unknown = set(options) - _RESET_OPTIONS
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; expected some of {sorted(_RESET_OPTIONS)}")
        seeds = self._seeds(seed)
        mask = self._reset_mask(options.get("reset_mask"))
        group_size = self._check_group_size(options.get("group_size", self.group_size))
        groups = [list(range(start, start + group_size)) for start in range(0, self.num_envs, group_size)]
        for group in groups:
            if len({bool(mask[i]) for i in group}) > 1:
                raise ValueError(f"reset_mask splits the group of sub-envs {group[0]}..{group[-1]} (group_size={group_size})")
        groups = [group for group in groups if mask[group[0]]]
        persona_ids = self._persona_ids(options, group_size)

        if isinstance(seed, int) and not isinstance(seed, bool):
            super().reset(seed=seed)
        for i in np.flatnonzero(mask):
            if seeds[i] is not None:
                self._rngs[i] = seeding.np_random(seeds[i])[0]
            elif self._rngs[i] is None:
                self._rngs[i] = seeding.np_random()[0]
        started = await gather_or_cancel([self._reset_group(group, persona_ids[group[0]]) for group in groups])
        infos: dict[str, Any] = {}
        for group, sessions in zip(groups, started):
            for i, session in zip(group, sessions):
                infos = self._add_info(infos, self._begin(i, session), i)
        self._autoreset[mask] = self._truncations[mask]  # a failed opening is reset by the next step
        return tuple(self._observations), infos

    async def astep(
        self, actions: Sequence[str | None]
    ) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every active sub-env concurrently; see the class docstring for autoresets."""
        if any(s is None for s in self._sessions):
            raise RuntimeError("step() before reset(): call reset() to start the episodes")
        actions = self._check_actions(actions)
        mode = self.autoreset_mode
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        jobs: list[tuple[int, str, Awaitable[Any]]] = []
        for i, action in enumerate(actions):
            if self._autoreset[i] and mode is AutoresetMode.DISABLED:
                continue  # finished: not stepped until reset()
            if self._autoreset[i]:  # ended last step (NEXT_STEP), or its new opening failed
                jobs.append((i, "reset", self._reset_one(i)))
            elif mode is AutoresetMode.SAME_STEP:
                jobs.append((i, "step_reset", self._step_then_reset(i, action)))
            else:
                jobs.append((i, "step", self._sessions[i].step(action)))  # type: ignore[union-attr]
        results = await gather_or_cancel([job for _, _, job in jobs])

        infos: dict[str, Any] = {}
        for (i, kind, _), result in zip(jobs, results):
            if kind == "reset":
                infos = self._add_info(infos, self._begin(i, result), i)
                continue
            if kind == "step_reset":
                outcome, new_session = result
                if new_session is not None:
                    infos = self._add_info(infos, {"final_obs": outcome.observation, "final_info": outcome.info}, i)
                    info = self._begin(i, new_session)
                else:
                    self._observations[i] = outcome.observation
                    info = outcome.info
            else:
                outcome = result
                self._observations[i] = outcome.observation
                info = outcome.info
            rewards[i] = outcome.reward
            self._terminations[i] = outcome.terminated
            self._truncations[i] = outcome.truncated
            infos = self._add_info(infos, info, i)
        if mode is AutoresetMode.SAME_STEP:
            # the ended sub-envs were reset already: report the ending once, start fresh
            # (only a sub-env whose new opening failed is reset again, by the next step)
            terminations, truncations = self._terminations.copy(), self._truncations.copy()
            failed_openings = np.array([s is not None and s.done for s in self._sessions], dtype=np.bool_)
            self._terminations[:] = False
            self._truncations[:] = failed_openings
            self._autoreset = failed_openings
            return tuple(self._observations), rewards, terminations, truncations, infos
        self._autoreset = self._terminations | self._truncations
        return tuple(self._observations), rewards, self._terminations.copy(), self._truncations.copy(), infos

    def _begin(self, i: int, session: DialogSession) -> dict[str, Any]:
        """Make `session` sub-env `i`'s episode; returns its first info."""
        self._sessions[i] = session
        self._rngs[i] = session.rng
        self._observations[i] = session.opening or ""
        self._terminations[i] = False
        self._truncations[i] = session.done  # a failed opening: over at once, reset by the next step
        return session.info()

    async def _reset_group(self, group: list[int], persona_id: str | None) -> list[DialogSession]:
        leader_rng = self._rngs[group[0]]
        assert leader_rng is not None
        persona = self.personas.sample(leader_rng) if persona_id is None else self.personas.get(persona_id)
        return await self.config.open_group(persona, leader_rng, len(group))

    async def _reset_one(self, i: int) -> DialogSession:
        rng = self._rngs[i]
        assert rng is not None
        session = self.config.session(self.personas.sample(rng), rng)
        await session.start()
        return session

    async def _step_then_reset(self, i: int, action: str):
        outcome = await self._sessions[i].step(action)  # type: ignore[union-attr]
        if outcome.terminated or outcome.truncated:
            return outcome, await self._reset_one(i)
        return outcome, None

    # -- argument checks ------------------------------------------------------------------
    def _check_group_size(self, group_size: Any) -> int:
        if not isinstance(group_size, (int, np.integer)) or isinstance(group_size, bool) or group_size < 1:
            raise ValueError(f"group_size must be a positive int, got {group_size!r}")
        if self.num_envs % group_size:
            raise ValueError(f"group_size {group_size} does not divide num_envs {self.num_envs}")
        return int(group_size)

    def _seeds(self, seed: Any) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"a list of seeds must have num_envs={self.num_envs} entries, got {len(seeds)}")
        return seeds

    def _reset_mask(self, mask: Any) -> np.ndarray:
        if mask is None:
            return np.ones(self.num_envs, dtype=np.bool_)
        if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
            raise TypeError(f"options['reset_mask'] must be a bool numpy array of shape ({self.num_envs},), got {mask!r}")
        if not mask.any():
            raise ValueError("options['reset_mask'] resets no sub-env: it needs at least one True")
        if any(self._sessions[i] is None for i in np.flatnonzero(~mask)):
            raise RuntimeError("reset with a reset_mask before the first full reset()")
        return mask

    def _persona_ids(self, options: dict[str, Any], group_size: int) -> list[str | None]:
        """One persona id (or None: draw one) per sub-env; only group leaders' entries count."""
        if "persona_id" in options and "persona_ids" in options:
            raise ValueError("give either options['persona_id'] or options['persona_ids'], not both")
        if "persona_id" in options:
            ids: list[str | None] = [options["persona_id"]] * self.num_envs
        elif "persona_ids" in options:
            given = list(options["persona_ids"])
            n_groups = self.num_envs // group_size
            if len(given) == self.num_envs:
                ids = given
                for start in range(0, self.num_envs, group_size):
                    if len(set(given[start : start + group_size])) > 1:
                        raise ValueError(f"persona_ids differ within the group starting at sub-env {start} (group_size={group_size})")
            elif len(given) == n_groups:
                ids = [pid for pid in given for _ in range(group_size)]
            else:
                raise ValueError(
                    f"options['persona_ids'] needs {self.num_envs} entries (one per sub-env) or "
                    f"{n_groups} (one per group of {group_size}), got {len(given)}"
                )
        else:
            return [None] * self.num_envs
        for pid in set(ids):
            if pid is not None:
                self.personas.get(pid)  # raises a KeyError naming the unknown id
        return ids

    def _check_actions(self, actions: Any) -> list[str | None]:
        if isinstance(actions, str) or not isinstance(actions, Sequence) and not isinstance(actions, np.ndarray):
            raise TypeError(f"actions must be a sequence of {self.num_envs} str, got {type(actions).__name__}")
        actions = list(actions)
        if len(actions) != self.num_envs:
            raise ValueError(f"expected {self.num_envs} actions (one per sub-env), got {len(actions)}")
        # Every action is checked before any sub-env moves, so a step that raises changes nothing.
        skipped = self._autoreset  # sub-envs being reset (or finished, with autoreset disabled)
        guard = self.config.reply_guard
        for i, action in enumerate(actions):
            if skipped[i]:
                continue
            if not isinstance(action, str):
                raise TypeError(f"actions[{i}] must be a str (the reply of sub-env {i}), got {type(action).__name__}")
            guard.encodable(action, f"actions[{i}] (sub-env {i})")  # raises UnencodableTextError under "error"
        return actions

    # -- Gymnasium API --------------------------------------------------------------------
    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        return self._runner.run(self.areset(seed=seed, options=options))

    def step(self, actions: Sequence[str | None]) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        return self._runner.run(self.astep(actions))

    def render(self) -> tuple[str, ...] | None:
        if self.render_mode is None:
            return None
        return tuple(transcript(s) if s is not None else "" for s in self._sessions)

    def close_extras(self, **kwargs: Any) -> None:
        self._runner.run(self.config.aclose())
        self._runner.close()


def transcript(session: DialogSession) -> str:
    """A dialogue as text, with the mood after each agent turn."""
    lines = [f"[persona {session.persona.id}] mood {session.rules.start}", f"USER : {session.opening}"]
    for record in session.turns:
        lines.append(f"AGENT: {record.reply}")
        lines.append(f"USER : {record.user_reply}   [mood {record.mood} ({record.delta:+d})]")
    if session.done:
        lines.append(f"-- end: {session.terminal_reason}, reward {session.reward:.2f}")
    return "\n".join(lines)
