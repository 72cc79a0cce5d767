"""The seeker's system prompt: the persona card a seeker policy plays from (hidden need included)."""

from __future__ import annotations

from dialog_gym.personas import Persona
from dialog_gym.simulators.prompts import persona_block


def persona_card(persona: Persona) -> str:
    """Who the seeker is, what happened and what they secretly need: the same persona text the
    LLM simulator plays from, in the persona's language."""
    return persona_block(persona, persona.language)


_INSTRUCTIONS = {
    "en": (
        "You are chatting with someone who tries to support you. Stay in character and write only your "
        "next chat message: short, concrete, in your own voice. Your mood (0-100) rises when a reply "
        "meets what you need and falls when it misses; let it shape your tone. Say goodbye when you "
        "want to leave the conversation."
    ),
    "zh": "你正在和一个想安慰你的人聊天。保持角色，只写你的下一条聊天消息：简短、具体、用你自己的口吻。"
    "对方的回复说到你心里时你的心情（0-100）会上升，没说到时会下降，让它影响你的语气。想结束对话时就说再见。",
}


def seeker_system_prompt(persona: Persona) -> str:
    """The seeker's system message: role-play instructions, then the persona card."""
    return f"{_INSTRUCTIONS[persona.language]}\n\n{persona_card(persona)}"
