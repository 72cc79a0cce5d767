"""The public surface: small at the top, and every function says what it takes.

`help()` and `inspect.signature` must show each public function's parameters: no
`(x, **kwargs)` wrappers. The sync facades carry their async twin's signature and
docstring. The few functions whose keyword arguments are open by design (the options of a
registry entry, a trainer's reward protocol) are listed here by name.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings

import pytest

import dialog_gym

# Open keyword arguments by design: a registered simulator's or backend's options, a
# dataclass's fields, a trainer's call protocol, test helpers' overrides, Protocol stubs.
OPEN_BY_DESIGN = {
    "dialog_gym.simulators.make_simulator",
    "dialog_gym.backends.factory.make_backend",
    "dialog_gym.backends.factory.backend_from_spec",
    "dialog_gym.mood.MoodRules.with_overrides",
    "dialog_gym.integrations.verl.reward.compute_score",
    "dialog_gym.integrations.trl.mood_reward",
    "dialog_gym.session.takes_dialog_config",
    "dialog_gym.cli.arguments.DeprecatedAlias",
    "dialog_gym.envs.vector.EmpathyVectorEnv.close_extras",
    "dialog_gym.testing.openai_server.ScriptedOpenAIServer.set_faults",
    "dialog_gym.testing.tiny.make_persona",
    # the call protocols of the frameworks these classes plug into (verl's agent loop,
    # openenv-core's Environment and its pydantic state with extra fields)
    "dialog_gym.integrations.verl.agent_loop.DialogGymAgentLoop",
    "dialog_gym.integrations.verl.agent_loop.DialogGymAgentLoop.run",
    "dialog_gym.integrations.openenv.models.DialogState",
    "dialog_gym.integrations.openenv.server.EmpathyEnvironment.reset",
    "dialog_gym.integrations.openenv.server.EmpathyEnvironment.step",
    "dialog_gym.integrations.openenv.server.EmpathyEnvironment.reset_async",
    "dialog_gym.integrations.openenv.server.EmpathyEnvironment.step_async",
}
PROTOCOLS = {"Backend", "Simulator", "BatchedAgent"}


def public_callables():
    """(qualified name, callable) of every public function, class and method of the package."""
    seen = set()
    for info in pkgutil.walk_packages(dialog_gym.__path__, "dialog_gym."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional integration (verl) that is not installed
            continue
        names = getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]
        for name in names:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    obj = getattr(module, name)
                except ImportError:
                    continue
            home = getattr(obj, "__module__", None)
            private = any(part.startswith("_") for part in (home or "").split(".")[1:])
            if not callable(obj) or not (home or "").startswith("dialog_gym") or private or name in PROTOCOLS:
                continue
            qualified = f"{home}.{getattr(obj, '__qualname__', name)}"
            if qualified in seen:
                continue
            seen.add(qualified)
            yield qualified, obj
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and inspect.isfunction(member):
                        yield f"{qualified}.{attr}", member


def test_every_public_callable_shows_its_parameters():
    hidden = []
    for qualified, obj in public_callables():
        if qualified in OPEN_BY_DESIGN:
            continue
        try:
            parameters = inspect.signature(obj).parameters.values()
        except (TypeError, ValueError):
            continue
        if any(p.kind is p.VAR_KEYWORD for p in parameters):
            hidden.append(f"{qualified}{inspect.signature(obj)}")
    assert not hidden, "public callables that hide their keyword arguments:\n" + "\n".join(hidden)


def test_the_entry_points_show_the_config_and_its_fields():
    from dialog_gym.integrations.trl import DialogRollout, make_rollout_func
    from dialog_gym.rollouts import arollout
    from dialog_gym.session import CONFIG_FIELDS

    from dialog_gym.integrations._setup import dialog_setup
    from dialog_gym.integrations.verl.dialogs import VerlDialogs

    entry_points = [dialog_gym.EmpathyDialogEnv, dialog_gym.EmpathyVectorEnv, dialog_gym.rollout, arollout,
                    dialog_gym.evaluate, DialogRollout, make_rollout_func, VerlDialogs, dialog_setup]
    multiagent = pytest.importorskip("dialog_gym.multiagent")
    entry_points += [multiagent.empathy_v0.env, multiagent.empathy_v0.parallel_env, multiagent.raw_env]
    for entry in entry_points:
        parameters = inspect.signature(entry).parameters
        assert "config" in parameters and set(CONFIG_FIELDS) <= set(parameters), entry
        assert parameters["simulator_options"].default is None
    assert inspect.signature(dialog_gym.evaluate).parameters["rules"].default == "sage"  # the benchmark's defaults
    assert inspect.signature(dialog_gym.evaluate).parameters["reply_guard"].default.unencodable == "repair"


@pytest.mark.parametrize(
    ("sync", "module", "twin"),
    [
        ("rollout", "dialog_gym.rollouts", "arollout"),
        ("evaluate", "dialog_gym.eval", "aevaluate"),
        ("replay", "dialog_gym.episodes.replay", "areplay"),
        ("rescore", "dialog_gym.episodes.rescore", "arescore"),
    ],
)
def test_each_sync_facade_has_its_async_twins_signature_and_docstring(sync, module, twin):
    facade, coroutine = getattr(dialog_gym, sync), getattr(importlib.import_module(module), twin)
    assert inspect.iscoroutinefunction(coroutine) and not inspect.iscoroutinefunction(facade)
    assert inspect.signature(facade) == inspect.signature(coroutine)
    assert facade.__name__ == sync and inspect.cleandoc(coroutine.__doc__) in facade.__doc__
    assert "Arguments:" in facade.__doc__ or "Args:" in facade.__doc__


def test_the_top_level_is_small_and_names_what_moved():
    assert len(dialog_gym.__all__) <= 24 and len(set(dialog_gym.__all__)) == len(dialog_gym.__all__)
    assert {"CalibratedSimulator", "ReplyGuard", "DialogConfig", "rollout", "evaluate"} <= set(dialog_gym.__all__)
    assert not [name for name in dialog_gym.__all__ if name.startswith("a") and name[1:] in dialog_gym.__all__]
    for name in dialog_gym.__all__:
        assert getattr(dialog_gym, name) is not None
    from dialog_gym.rollouts import arollout

    with pytest.warns(DeprecationWarning, match="dialog_gym.arollout is deprecated: import it from dialog_gym.rollouts"):
        assert dialog_gym.arollout is arollout
    with pytest.raises(AttributeError, match="no attribute 'nonsense'"):
        dialog_gym.nonsense  # noqa: B018
