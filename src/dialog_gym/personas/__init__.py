"""Personas: simulated help-seekers with a hidden need, their sets, schema and importers."""

from dialog_gym.personas.persona import (
    FACET_TOPICS,
    NEED_DESCRIPTIONS,
    CharacterType,
    Facets,
    HiddenNeed,
    Persona,
    Profile,
    Reactions,
    Scene,
)
from dialog_gym.personas.persona_set import PersonaSet
from dialog_gym.personas.rlver import import_rlver, persona_from_rlver
from dialog_gym.personas.validation import (
    PersonaError,
    PersonaValidationError,
    persona_schema,
    validate_file,
    validate_record,
)

__all__ = [
    "FACET_TOPICS",
    "NEED_DESCRIPTIONS",
    "CharacterType",
    "Facets",
    "HiddenNeed",
    "Persona",
    "PersonaError",
    "PersonaSet",
    "PersonaValidationError",
    "Profile",
    "Reactions",
    "Scene",
    "import_rlver",
    "persona_from_rlver",
    "persona_schema",
    "validate_file",
    "validate_record",
]
