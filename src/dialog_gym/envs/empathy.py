"""`EmpathyDialogEnv`: one emotional-support dialogue with a sentient user simulator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, SupportsFloat

import gymnasium as gym

from dialog_gym._async import LoopRunner
from dialog_gym.envs.copying import CopyableEnv
from dialog_gym.envs.spaces import UnicodeText
from dialog_gym.personas import Persona, PersonaSet
from dialog_gym.session import DialogConfig, DialogSession, StepOutcome, UsesDialogConfig, takes_dialog_config

MAX_TEXT_LENGTH = 65_536


def select_personas(personas: Any, split: str | None, language: str | None) -> PersonaSet:
    """Resolve the `personas=`, `split=` and `language=` arguments into a non-empty set."""
    selected = PersonaSet.load(personas).filter(split=split, language=language)
    if not selected:
        raise ValueError(f"no personas match split={split!r}, language={language!r} in {personas or 'the bundled sets'}")
    return selected


class EmpathyDialogEnv(CopyableEnv, UsesDialogConfig, gym.Env[str, str]):
    """
    ## Description
    The agent is a supporter in a text chat with a simulated help-seeker (a *persona*)
    who carries a hidden need: practical advice, being listened to, being told they are not
    at fault, and five more. After every agent reply the *user simulator* appraises how the
    reply made the persona feel, moves an explicit mood score (0-100) and answers in
    character. This is the environment of RLVER (Reinforcement Learning with Verifiable
    Emotion Rewards): the final mood is the reward.

    ## Action Space
    `UnicodeText(65536)`: the agent's reply, any `str`. With `think=True` the action is
    `<think>private reasoning</think>reply`; only the reply reaches the simulator and the
    history. A non-`str` action raises `TypeError`.

    ## Observation Space
    `UnicodeText(65536)`: the simulated user's latest message (their opening line after
    `reset`). The whole conversation, agent system prompt first and ready for
    `tokenizer.apply_chat_template`, is in `info["messages"]`.

    ## Rewards
    `reward_mode="terminal"` (default, RLVER): 0 on every step but the last, then final mood
    / 100 (floored at 0). `reward_mode="dense"`: additionally the applied mood change / 100
    on every step. With `think=True`, `format_penalty` is subtracted on a step whose action
    is malformed (0 by default, as RLVER).

    ## Starting State
    A persona is drawn from the persona set with the env's seeded generator (or chosen with
    `reset(options={"persona_id": ...})`); the mood starts at the preset's start value
    (30 for `rlver`, 40 for `sage`) and the user speaks first. Without `language=`, both
    bundled languages are drawn from (168 English and 168 Chinese personas; RLVER trains in
    Chinese): pass `language="en"` or `"zh"` for one.

    ## Episode End
    The episode terminates when the mood reaches the preset's failure (or success)
    threshold, when the user says goodbye, or after the preset's maximum number of agent
    turns (8 for `rlver`, 9 for `sage`): `info["terminal_reason"]` is `"failure"`,
    `"success"`, `"goodbye"` or `"max_turns"`. The turn limit is part of the task (the reward
    is defined there), so it is a termination, not a truncation. If the simulator fails
    beyond its retries, the episode is *truncated* with reward 0 and
    `terminal_reason="simulator_error"`, the error in `info["error"]`; if it fails on the
    opening line, `reset` returns `""` with that info (it does not raise). Stepping after
    the end raises `RuntimeError`.

    ## Info
    `messages`, `turn`, `mood`, `mood_bucket` (S/A/B/C/F), `emotion_delta` (the applied
    change), `terminal_reason`, `format_ok`, `reply_cut` (the reply was longer than
    `reply_guard` lets through, so the simulator and the history got its first part),
    `action_repaired` (the action held text UTF-8 cannot encode, replaced by U+FFFD under
    `reply_guard={"unencodable": "repair"}`),
    `persona_id`, `language`, `usage` (simulator tokens and calls), `error`, and
    `privileged` (hidden need, character type, the appraisal's reasoning, the requested
    change, whether it was clamped, the agent's thought): privileged data is for
    analysis, never for the policy's input.

    ## Arguments
    - `config`: the dialogue set-up, a `DialogConfig` (or a mapping of its fields, which is
      how the env ids' YAML specs state theirs). Or give its fields as keyword arguments:
    - `simulator`: `"calibrated"` (offline, default: the v2 judge, fitted on SAGE's recorded
      DeepSeek-V3 judgements under knowledge and attacked), `"calibrated-v1"` (the v1 judge),
      `"rule"` (the v0 offline simulator), `"openai"`, `"transformers"`, `"replay"`, any
      registered simulator, or a `Simulator` instance.
    - `simulator_options`: the options of a simulator built by name, checked against those
      it declares: `{"judge": PATH}` (a judge fitted with `dialog-gym calibrate`),
      `{"model": ..., "base_url": ...}` for `"openai"`, `{"model_path": ...}` for
      `"transformers"`, `{"path": ...}` for `"replay"`.
    - `rules`: `"rlver"` (default), `"sage"`, or a `MoodRules`.
    - `style`: `"vanilla"` (expressive, may hint at the need) or `"challenging"`.
    - `think`, `reward_mode`, `format_penalty`: see above. `system_prompt`: the agent's.
    - `reply_guard`: what of each reply reaches the simulator: a `ReplyGuard` or a dict of
      its fields. `max_chars` (default 8,000; None for no limit), `max_tokens` with a
      `tokenizer`, and `unencodable`: an action UTF-8 cannot encode (a lone surrogate)
      raises `UnencodableTextError` naming it, before any call (`"error"`, default), or has
      those code points replaced by U+FFFD (`"repair"`).
    - `personas`: None (the bundled sets), a path to a JSONL file or folder, or personas.
    - `split`, `language`: filters on the persona set (`"train"`/`"test"`, `"en"`/`"zh"`).
    - `render_mode`: `"ansi"` (render returns the transcript) or `"human"` (prints it).

    ## Copying
    With an offline simulator (`"calibrated"`, `"rule"`, `"replay"`) `copy.deepcopy(env)`
    and `pickle` give an independent env in the same state that steps exactly like this
    one; with an LLM simulator they raise `TypeError` (see `dialog_gym.envs.copying`).

    ## Example
    >>> import gymnasium as gym, dialog_gym
    >>> env = gym.make("RLVER-Empathy-v2", language="en")
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step("That sounds hard. What happened?")

    ## Version History
    - v2: the v2 calibrated judge (`sage-deepseek-v3-v2`): fitted on SAGE's recorded
      judgements under knowledge of what recorded data cannot teach (form only costs, fit to
      the conversation only helps, unkind speech acts never raise the mood, a prior for
      replies unlike the recorded ones, synthetic negatives), and attacked before shipping
      (`benchmarks/judge_attack.py`): open-loop scripts, decorations and unkind replies no
      longer pay. The reward changes. Revised in place (dialog-gym 0.1.0, while issue 19 was
      open: judge fingerprint 8aff0e11cb60 -> the current `judge_fingerprint` of every
      episode record): taking up the user counts their distinctive words and quotes a third,
      unkind acts have ceilings by act, form costs saturate, only anchored praise counts, a
      larger speech-act corpus; an open-loop script, or one quoting the user, now stays far
      below an agent that reads the user (`listener`). Revised again (b3218d81e142 -> the
      current): where the fitted model knows a reply less (short replies) its say shrinks
      toward a quarter of what it says of an average recorded reply instead of toward zero
      (the prior alone overrates the average recorded reply by 3.3 points), so that short
      replies follow the recorded judge's change by length within each agent model; a wall
      of text past 300 words costs the prior up to 1.5 more (d8711125a5eb -> 772e5b19815a);
      unkind replies sit on a ladder below every other reply, the worse act lower, read by
      the lexicons or, where they miss, by a speech-act model fitted on twice the corpus
      (772e5b19815a -> a5aaeb0c2147); the prior's form costs (formatting, idle and
      repeated sentences, stock reassurance, referral, a wall of text) halved, synthetic
      negatives counted at half weight, short replies shrunk toward 0.15 of the centre,
      which the recorded judge follows better held out (a5aaeb0c2147 -> f12605a82129);
      warm words for nothing the user said are generic but no longer also cold, and a list
      of terse Chinese tips is no longer taken for gibberish, seven Chinese blame patterns
      (f12605a82129 -> 404d36b0e40c); a rhetorical question turns its negation around,
      hindsight and the emphatic "you did" read as blame, and the judge is the same in
      every process (its sums no longer follow the string-hash seed) (404d36b0e40c ->
      b874e7389376); the user's words that a reply only lists ("X, Y and Z have been weighing
      on you"), names each alone in a stock sentence, or fills into a sentence frame it used
      before count as a quote, and a frame said again counts as a repeated sentence, so that
      a keyword salad (`redteam.KeywordSalad`) no longer beats the listening agent in Chinese
      nor, listed, in English; the English speech-act classifier no longer reads kind
      replies that say back what the user did as blame (b874e7389376 -> 2ea32e6e7fe6; the
      fingerprint now also covers the speech-act model and the unit shares); a quote need
      not be verbatim: the user's words said back in their order with a word or two put
      in, or one left out or changed, count as quoted, so that their own sentence with
      every few words disturbed (`redteam.BrokenEcho`) no longer beats the listening agent
      (2ea32e6e7fe6 -> 42c181bc9af4); a reply that names two or more of the user's
      distinctive words alone, each in a sentence of its own, is spared none of them, so
      that the salad of one word to a sentence no longer beats the listening agent in
      English either (42c181bc9af4 -> ebc18c4432ff); the speech-act classifier refitted
      with two more corpus batches, reading fresh unkindness a little better and short warm
      Chinese replies no longer as unkind (ebc18c4432ff -> 130d9d05101f); the speech-act
      classifier sharper (a lighter penalty; two more corpus batches: kind replies that tell
      the user what they did or said, blame that recounts it), reading the reply without what
      it quotes, and on its own no longer putting a warmly worded reply below every kind
      one; praise of something the user did clears them of its blame (130d9d05101f ->
      d3ec2c364e78); "不就是……吗？" read as the rhetorical question it is, "your own mess"
      as blame and "consider it a lesson" as lecturing, no recorded reply read otherwise, and
      the fingerprint now also names the reading's own revision, so that a change in its code
      changes it as a change in its tables does (d3ec2c364e78 -> d5152cf263ed); the prior pays
      nothing for warm wording of itself, which the recorded judge does not reward (d5152cf263ed
      -> 29497c7fec92); more ways of telling the user it was not their fault ("it simply isn't
      your doing", "you couldn't have known", "跟你没关系") are read as clearing them, so that
      the speech-act model's reading of blame in such a reply no longer costs it (29497c7fec92
      -> 3575cefceb37); blame only implied behind sympathy and a turn ("though, had you put it
      in writing beforehand?", "不过……你当时查过吗？") is read as blame (3575cefceb37 ->
      2131a98bb058; the fitted weights are the same); "nothing happens without a reason" only
      of what someone else did (2131a98bb058 -> 5d0dc954c13b; the same weights); "哪用得着……？",
      "哪会……？", "该算谁的？" and "像什么话？" read as questions that answer themselves, not as open ones, so
      that a Chinese reply of them is no longer spared the speech-act model's reading as an
      asking reply is, and a list of terse English tips is read as language, not gibberish
      (-18), as a Chinese one was (5d0dc954c13b -> 61be88a223cf; the same weights); the prior
      pays half for speaking to the user's need in a reply that takes up nothing of theirs,
      so that a stock line of the need's kind ("I'm here for you") no longer earns it in full
      in every conversation alike (61be88a223cf -> b73ab48dc3dc; refitted); a stock empathy
      opener ("It sounds like...", 听起来...) where an earlier reply opened with one too costs
      as the formula it is, which the recorded judge charges 1.7 within each agent model, and
      so does a help desk's opening said again ("I'm here to help you...", which the reference
      GRPO trainer's small policy learnt) (b73ab48dc3dc -> 51e43b5e06b2; refitted); a reply
      is read as it reads (two spaces, tabs, no-break or zero-width spaces and spaces between
      Chinese characters no longer break a pattern), and a quote that nothing says is
      someone else's is the reply's own words, so that an unkind reply in quotes, or spaced
      out, is read as unkind (`redteam.disguise`) (51e43b5e06b2 -> 2b0e52cf3c3d; refitted);
      look-alike letters (a Cyrillic "о" in "yоu", full-width or mathematical letters) are
      read as the letters they look like, and what a reply says in the other language
      (Chinese in an English reply, English in a Chinese one) is read by that language's
      lexicons and speech-act model as a reply of its own, so that unkindness said so after
      a warm reply costs as unkindness does; and a Chinese reply worded warmly is read in
      parts, so that a warm opening does not hide the unkind part after it from the speech-act
      model (2b0e52cf3c3d -> 8bbfb8d1e403; refitted); Chinese in traditional characters is
      read as in simplified ones, so that a warm reply written so is paid as it is and
      unkindness written so costs, words spelt in digits ("y0ur f4ult"), joined by underscores,
      with two letters swapped ("fualt"), with a sign between every two characters (说·实·话)
      or marks on its letters ("yóur") read as the words they spell, and a clause in a
      language the user does not read (or in none: lorem ipsum) is not read and costs, where
      a Chinese reply was paid for its length (8bbfb8d1e403 -> bb2dc69314ec; refitted); where the
      conversation is (the turn, the user's words) is no longer shrunk with a short reply's
      familiarity (bb2dc69314ec -> baa03d7fe2ea; refitted); two words the user said together
      count as taken up together only joined by a word of the reply's own (not one it put
      between their words before) or as the user said them (not "X with Y and Z", nor "X Y"),
      and the one word a reply may name alone is one in a sentence that asks or says more (not
      "And X, too."), so that the keyword salads of their words said together no longer beat
      the listening agent, though one that joins them by a new word of its own each turn comes
      level with it in English (baa03d7fe2ea -> 7a96a373dd78; refitted); an English reply worded
      warmly is read in parts too, every run of its sentences that says nothing warm (between
      two warm passages as well) is read by a speech-act model of parts, and what the
      unkindest of them reads costs, so that unkindness said amid warm words pays less often
      (7a96a373dd78 -> ff8eb77048ec; refitted); the n-grams of the user's message before
      their latest are no longer read, which said nothing held out and moved every reply
      alike, so that a reply scores higher in its own conversation than in another's more
      often (ff8eb77048ec -> e2e997df7296; refitted); a sentence in the other language after
      a reply in the user's (a part of it with a pronoun or a sentence's end, not a term or a
      name) costs what a whole reply in that language costs, and a sign put between every two
      words (you~need~to; in Chinese between runs of a few characters, 你就~别想~太多) is read
      as a space (in Chinese, as nothing), so that unkindness said so no longer escapes the
      judge's word lists (e2e997df7296 -> 12e54e2c2a08; the same weights); words a reply puts
      in quotes and passes on (its writer's people's, a saying or quotation, words to tell
      oneself: "my grandma always said", "as Einstein said", "try telling yourself", 俗话说),
      introduces as its own ("in other words", 说白了) or endorses ("your mom has a point when
      she says") are read as its own, without the frame, where they were read as someone
      else's and left out, so that unkindness said so costs (12e54e2c2a08 -> 0abd278bdb9e;
      refitted); and such a frame's words are no longer counted as the reply's (the user's
      "said" in "As Einstein said," took up nothing of theirs), nor a quote's closing mark
      after a sentence end as a sentence of its own, idle or said twice (0abd278bdb9e ->
      c94ee6d62e95; refitted); and such a frame is only the clause that names the voice, so
      that what a reply says before it in the sentence ("Stop whining, as my grandma always
      said: ...") is read, and the user's words said back in quote marks ("You said: "..."")
      take up nothing of what they said (c94ee6d62e95 -> 7e33d0095c24; refitted); and, in
      Chinese, the user's words in a sentence the speech-act model of parts reads as unkind,
      with nothing warm, not asking and no recount of theirs (加班到十点也没什么，大家都这样。),
      take up nothing of what they said, and such a sentence costs though the warm words
      around it keep the whole from reading unkind, so that unkindness after or between kind
      replies pays less often (7e33d0095c24 -> 2bbd1d08cde2; refitted); and, in Chinese, the
      speech-act model of parts is fitted on pairs of a kind part and an unkind one on the
      same specifics as well, which reads implied unkindness better (2bbd1d08cde2 ->
      41e4ea28e68b; refitted); and sentences end where a reader ends them: a run of end marks
      ("...", "?!", 。。。) ends one, where each mark had ended one (the rest sentences of a
      mark alone), and a point in a number ("3.5"), an abbreviation ("a.m.", "e.g.") or after
      a title ("Mr. Brennan") ends none (41e4ea28e68b -> f49a1674b319; refitted); and the
      lexicons of unkind acts spare the user's words told back ("you said your mom says you
      need to learn teamwork", 你讲到你老公又说你活该), "move on" as leave or a move and "could
      be worse" of what may come, and read more ways of making the trouble small (期中考试而已)
      or lecturing a role (当妈的要), and a sentence offering to listen ("I'll just listen") is
      not read as a dismissal (f49a1674b319 -> the current; refitted, the same weights).
    - v1: the offline judge is `CalibratedSimulator` with the v1 judge (`simulator="calibrated-v1"`,
      fitted on SAGE's recorded DeepSeek-V3 judgements), so the reward changes; the bundled
      baseline agent was rewritten. Kept, reward unchanged; a fixed script beats it.
    - v0: the rule simulator (`RuleSimulator`), now opt-in with `simulator="rule"`.
    """

    metadata = {"render_modes": ["ansi", "human"], "render_fps": 1}

    @takes_dialog_config
    def __init__(
        self,
        config: DialogConfig | Mapping[str, Any] | None = None,
        *,
        personas: Any = None,
        split: str | None = "train",
        language: str | None = None,
        render_mode: str | None = None,
    ):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.config = config
        self.personas = select_personas(personas, split, language)
        self.render_mode = render_mode
        self.action_space = UnicodeText(MAX_TEXT_LENGTH)
        self.observation_space = UnicodeText(MAX_TEXT_LENGTH)
        self.session: DialogSession | None = None
        self._runner = LoopRunner()

    # -- async core -----------------------------------------------------------------------
    def new_session(self, persona: Persona) -> DialogSession:
        return self.config.session(persona, self.np_random)

    def choose_persona(self, options: dict[str, Any] | None) -> Persona:
        options = options or {}
        unknown = set(options) - {"persona_id", "persona"}
        if unknown:
            raise ValueError(f"unknown reset option(s) {sorted(unknown)}; expected 'persona_id' or 'persona'")
        if "persona" in options:
            if not isinstance(options["persona"], Persona):
                raise TypeError(f"options['persona'] must be a Persona, got {type(options['persona']).__name__}")
            return options["persona"]
        if "persona_id" in options:
            return self.personas.get(options["persona_id"])
        return self.personas.sample(self.np_random)

    async def areset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self.session = self.new_session(self.choose_persona(options))
        observation = await self.session.start()
        self._render_step()
        return observation, self.session.info()

    async def astep(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        if self.session is None:
            raise RuntimeError("step() before reset(): call reset() to start an episode")
        out: StepOutcome = await self.session.step(action)
        self._render_step()
        return out.observation, out.reward, out.terminated, out.truncated, out.info

    # -- Gymnasium API --------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        return self._runner.run(self.areset(seed=seed, options=options))

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        if not isinstance(action, str):
            raise TypeError(f"action must be a str (the agent's reply), got {type(action).__name__}")
        return self._runner.run(self.astep(action))

    def render(self) -> str | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without a render_mode; pass render_mode='ansi' or 'human' to gym.make")
            return None
        text = self.transcript()
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def _render_step(self) -> None:
        if self.render_mode == "human" and self.session is not None:
            print(self.transcript(last_turn_only=self.session.turn > 0))

    def transcript(self, *, last_turn_only: bool = False) -> str:
        """The conversation as text, with the mood after each agent turn."""
        session = self.session
        if session is None:
            return ""
        lines = [] if last_turn_only else [f"[persona {session.persona.id}] mood {self.rules.start}", f"USER : {session.opening}"]
        for record in session.turns[-1:] if last_turn_only else session.turns:
            lines.append(f"AGENT: {record.reply}")
            lines.append(f"USER : {record.user_reply}   [mood {record.mood} ({record.delta:+d})]")
        if session.done:
            lines.append(f"-- end: {session.terminal_reason}, reward {session.reward:.2f}")
        return "\n".join(lines)

    def close(self) -> None:
        self._runner.run(self.config.aclose())
        self._runner.close()
        super().close()
