"""Named options: one check for unknown names (with a did-you-mean), one for renamed ones.

Every place that takes options by name (an entry point's keyword arguments, a simulator's
or a backend's options, a verl config block) reports a name it does not know the same way:
the name, the closest known one, and the full list.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`"'think_mode' (did you mean 'think'?)"`, or just `"'x'"` when nothing is close."""
    close = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.6)
    return f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name)


def check_names(given: Iterable[str], known: Collection[str], *, what: str, where: str = "") -> None:
    """Raise `TypeError` when `given` holds names outside `known`.

    `what` says what the names are ("option", "keyword argument"); `where` whose
    ("for the 'calibrated' simulator"). The message names each unknown one with its closest
    known spelling and lists every known name.
    """
    unknown = sorted(set(given) - set(known))
    if not unknown:
        return
    plural = "s" if len(unknown) > 1 else ""
    hints = ", ".join(did_you_mean(name, known) for name in unknown)
    listed = ", ".join(sorted(known)) or "none"
    raise TypeError(f"unknown {what}{plural} {hints}{f' {where}' if where else ''}; the {what}s are: {listed}")


def keyword_names(function: Callable[..., Any]) -> tuple[str, ...]:
    """The names `function` accepts as keywords (its signature's, `self` and `*args` aside)."""
    parameters = inspect.signature(function).parameters.values()
    return tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def declared_options(
    build: Callable[..., Any], options: Collection[str] | Callable[[], Collection[str]] | None
) -> Callable[[], Collection[str]]:
    """How a registry asks what `build` takes: `options` as given (a callable answering when
    asked, for a build whose module is heavy to import; or a collection), or, for None, the
    keyword names of `build`'s signature."""
    if callable(options):
        return options
    fixed = keyword_names(build) if options is None else tuple(options)
    return lambda: fixed


def warn_renamed(old: str, new: str, *, where: str, stacklevel: int = 3) -> None:
    """The one deprecation message for a renamed option."""
    warnings.warn(f"{where}: {old!r} is deprecated, use {new!r}", DeprecationWarning, stacklevel=stacklevel)


def renamed(**old_to_new: str) -> Callable[[F], F]:
    """Keep old keyword spellings of a function working, with a `DeprecationWarning`.

    `@renamed(max_concurrent="max_concurrent_episodes")`: a call with `max_concurrent=4`
    warns and passes `max_concurrent_episodes=4`; giving both is an error. The function's
    signature (what `help` and `inspect.signature` show) is its own: the old names are not
    advertised.
    """

    def decorate(function: F) -> F:
        where = function.__qualname__

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            _rename(kwargs, old_to_new, where)
            return function(*args, **kwargs)

        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                _rename(kwargs, old_to_new, where)
                return await function(*args, **kwargs)

            return async_wrapper  # type: ignore[return-value]
        return wrapper  # type: ignore[return-value]

    return decorate


def _rename(kwargs: dict[str, Any], old_to_new: Mapping[str, str], where: str) -> None:
    for old, new in old_to_new.items():
        if old in kwargs:
            if new in kwargs:
                raise TypeError(f"{where}() got both {old!r} (deprecated) and {new!r}; pass only {new!r}")
            warn_renamed(old, new, where=f"{where}()", stacklevel=4)
            kwargs[new] = kwargs.pop(old)
