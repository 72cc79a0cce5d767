"""The seeker's system prompt: the persona card a seeker policy plays from (hidden need included)."""

from __future__ import annotations

from dialog_gym.personas import NEED_DESCRIPTIONS, CharacterType, Persona

_CHARACTER = {
    "en": {
        CharacterType.NEGATIVE: "You are quick to feel misunderstood and let it show when a reply misses the point.",
        CharacterType.PASSIVE: "You answer briefly, rarely ask questions and open up only slowly.",
        CharacterType.AVOIDANT: "You deflect when pressed and retreat if someone probes too early.",
    },
    "zh": {
        CharacterType.NEGATIVE: "你很容易觉得不被理解，对方没说到点子上时会直接表现出不满。",
        CharacterType.PASSIVE: "你回答简短，很少提问，只会慢慢打开心扉。",
        CharacterType.AVOIDANT: "被追问时你会岔开话题，对方太早深挖时你会往回缩。",
    },
}


def persona_card(persona: Persona) -> str:
    """Who the seeker is, what happened and what they secretly need, as plain text."""
    p, s, lang = persona.profile, persona.scene, persona.language
    facts = [x for x in (f"{p.age}" if p.age else None, p.gender, p.occupation) if x]
    need = NEED_DESCRIPTIONS[lang][persona.hidden_need]
    if lang == "zh":
        lines = [f"你是{p.name}（{'，'.join(facts)}）。" if facts else f"你是{p.name}。"]
        lines.append(f"性格：{'、'.join(p.traits)}。{_CHARACTER['zh'][persona.character_type]}")
        if p.speaking_style:
            lines.append(f"说话方式：{p.speaking_style}")
        if p.description:
            lines.append(p.description)
        lines.append(f"发生的事：{s.event}")
        lines.extend(s.stages)
        if s.current_state:
            lines.append(f"现在的状态：{s.current_state}")
        lines.append(f"你心里真正想要的（隐藏需求）：{need}。不要直接说出来，让它体现在你的话和反应里。")
        return "\n".join(lines)
    lines = [f"You are {p.name} ({', '.join(facts)})." if facts else f"You are {p.name}."]
    lines.append(f"Traits: {', '.join(p.traits)}. {_CHARACTER['en'][persona.character_type]}")
    if p.speaking_style:
        lines.append(f"Speaking style: {p.speaking_style}")
    if p.description:
        lines.append(p.description)
    lines.append(f"What happened: {s.event}")
    lines.extend(s.stages)
    if s.current_state:
        lines.append(f"Right now: {s.current_state}")
    lines.append(
        f"What you secretly want from this conversation (your hidden need): you {need}. "
        "Never say it outright; let it show in what you say and how you react."
    )
    return "\n".join(lines)


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
