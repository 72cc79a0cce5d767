"""`PersonaSet`: an ordered, immutable collection of personas with filters and seeded sampling."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from dialog_gym._resources import data_dir
from dialog_gym.personas.persona import CharacterType, HiddenNeed, Persona
from dialog_gym.personas.validation import PersonaError, PersonaValidationError, iter_records


def _as_set(value, enum_type=None) -> frozenset | None:
    if value is None:
        return None
    values = [value] if isinstance(value, (str, enum_type or str)) else list(value)
    if enum_type is not None:
        try:
            values = [enum_type(v) for v in values]
        except ValueError:
            allowed = ", ".join(e.value for e in enum_type)
            raise ValueError(f"unknown {enum_type.__name__} in {value!r}; expected one of: {allowed}") from None
    return frozenset(values)


class PersonaSet(Sequence[Persona]):
    """Personas in a fixed order (the order of the files, then of their lines).

    >>> personas = PersonaSet.bundled().filter(split="test", language="en")
    >>> persona = personas.sample(np.random.default_rng(0))
    """

    def __init__(self, personas: Iterable[Persona] | None = None):
        """`personas` in this order; none given: the bundled sets (as `PersonaSet.bundled()`)."""
        if personas is None:
            personas = PersonaSet.bundled()
        elif isinstance(personas, (str, Path)):
            raise TypeError(f"PersonaSet takes personas; to read {str(personas)!r} use PersonaSet.load(path) or PersonaSet.from_jsonl(path)")
        self._personas: tuple[Persona, ...] = tuple(personas)
        self._by_id: dict[str, Persona] = {}
        for p in self._personas:
            if p.id in self._by_id:
                raise ValueError(f"duplicate persona id {p.id!r} in PersonaSet")
            self._by_id[p.id] = p

    # -- loading --------------------------------------------------------------------------
    @classmethod
    def from_jsonl(cls, *paths: str | Path) -> "PersonaSet":
        """Load and validate JSONL files (or folders of `*.jsonl`); raise on any invalid line."""
        personas: list[Persona] = []
        errors: list[PersonaError] = []
        for path in _expand(paths):
            for _, record, record_errors in iter_records(path):
                if record_errors:
                    errors.extend(record_errors)
                else:
                    personas.append(Persona.from_dict(record))
        if errors:
            raise PersonaValidationError(errors)
        return cls(personas)

    @classmethod
    def bundled(cls, language: str | Sequence[str] | None = None) -> "PersonaSet":
        """The persona sets shipped with dialog-gym (`personas/en`, `personas/zh`)."""
        root = data_dir("personas")
        languages = sorted(p.name for p in root.iterdir() if p.is_dir() and any(p.glob("*.jsonl")))
        if language is not None:
            wanted = [language] if isinstance(language, str) else list(language)
            unknown = set(wanted) - set(languages)
            if unknown:
                raise ValueError(f"no bundled personas for language(s) {sorted(unknown)}; available: {languages}")
            languages = [lang for lang in languages if lang in wanted]
        return cls.from_jsonl(*(root / lang for lang in languages))

    @classmethod
    def load(cls, source: "str | Path | PersonaSet | Iterable[Persona] | None" = None) -> "PersonaSet":
        """Resolve what users pass as `personas=`: None/"bundled", a path, or personas."""
        if source is None or source == "bundled":
            return cls.bundled()
        if isinstance(source, PersonaSet):
            return source
        if isinstance(source, (str, Path)):
            if isinstance(source, str) and source in ("en", "zh"):
                return cls.bundled(language=source)
            return cls.from_jsonl(source)
        return cls(source)

    # -- Sequence -------------------------------------------------------------------------
    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return PersonaSet(self._personas[index])
        return self._personas[index]

    def __len__(self) -> int:
        return len(self._personas)

    def __iter__(self) -> Iterator[Persona]:
        return iter(self._personas)

    def __contains__(self, item) -> bool:
        if isinstance(item, str):
            return item in self._by_id
        return item in self._personas

    def __repr__(self) -> str:
        return f"PersonaSet({len(self)} personas)"

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self._personas]

    def get(self, persona_id: str) -> Persona:
        try:
            return self._by_id[persona_id]
        except KeyError:
            raise KeyError(f"no persona with id {persona_id!r} in this set of {len(self)}") from None

    # -- selection ------------------------------------------------------------------------
    def filter(
        self,
        *,
        split: str | Sequence[str] | None = None,
        language: str | Sequence[str] | None = None,
        hidden_need: str | HiddenNeed | Sequence[str | HiddenNeed] | None = None,
        character_type: str | CharacterType | Sequence[str | CharacterType] | None = None,
        ids: Sequence[str] | None = None,
    ) -> "PersonaSet":
        """The personas matching every given criterion (each a value or a list of values)."""
        splits, langs = _as_set(split), _as_set(language)
        needs, types = _as_set(hidden_need, HiddenNeed), _as_set(character_type, CharacterType)
        if ids is not None:
            missing = [i for i in ids if i not in self._by_id]
            if missing:
                raise KeyError(f"unknown persona id(s): {missing[:5]}")
        wanted_ids = None if ids is None else frozenset(ids)
        return PersonaSet(
            p
            for p in self._personas
            if (splits is None or p.split in splits)
            and (langs is None or p.language in langs)
            and (needs is None or p.hidden_need in needs)
            and (types is None or p.character_type in types)
            and (wanted_ids is None or p.id in wanted_ids)
        )

    def sample(self, rng: np.random.Generator) -> Persona:
        """One persona drawn uniformly with the caller's generator."""
        if not self._personas:
            raise ValueError("cannot sample from an empty PersonaSet (check your filters)")
        return self._personas[int(rng.integers(len(self._personas)))]


def _expand(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = sorted(path.glob("*.jsonl"))
            if not found:
                raise FileNotFoundError(f"no *.jsonl persona files in folder {path}")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"persona file or folder not found: {path}")
    return files
