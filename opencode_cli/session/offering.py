"""What a session offers the model (core spec §6.1–§6.2, §8.4): the registry's tools for its model, minus
the tools its permissions deny wholly and those switched off per request (``question`` too, when nobody
could answer it), each schema shaped by the provider's profile, sorted by name.

The offer itself belongs to the generation (:class:`~opencode_cli.generation.Offers`), made once per
generation, agent, rules, model and host; a session hands out a copy of its own and keeps the last one it
handed out, the tools a call is repaired against.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..parts import WireTool
from ..steps import Steps, adrive, drive

if TYPE_CHECKING:
    from ..generation import Generation
    from . import Session

#: The tool offered only to a session that can put questions to a user, and the ``extra`` key of the asker
#: (:mod:`opencode_cli.tools._question`).
QUESTION_TOOL = "question"
QUESTION_ASKER = "question"


class Offering:
    """The wire tools one session hands out, and the last set it handed out (:attr:`offered`)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.last: dict[str, WireTool] | None = None
        """The tools handed out last, by name (``None``: none yet, or the agent changed since): the
        generation's own, read and never changed (what was handed out is a copy)."""
        self.made_in: Generation | None = None
        """The generation :attr:`last` was made in."""

    def resolve(self, tools: dict[str, bool] | None = None) -> list[WireTool]:
        """See :meth:`Session.resolve <opencode_cli.session.Session.resolve>`."""
        generation = self.session.project.generation
        return self._hand_out(drive(self._made(tools, generation)), generation)

    async def aresolve(self, tools: dict[str, bool] | None = None) -> list[WireTool]:
        """See :meth:`Session.aresolve <opencode_cli.session.Session.aresolve>`."""
        generation = await self.session.project.ready()
        return self._hand_out(await adrive(self._made(tools, generation)), generation)

    async def current(self, generation: Generation) -> dict[str, WireTool]:
        """The tools a call in ``generation`` (ready) is repaired against: those handed out last, or,
        when none were in that generation (or the agent changed since), its offer as :meth:`aresolve`
        would make it, kept without handing out a copy (a host that runs calls only)."""
        if self.last is None or self.made_in is not generation:
            self._keep(await adrive(self._made(None, generation)), generation)
        return self.last or {}

    def _made(self, tools: dict[str, bool] | None, generation: Generation) -> Steps[tuple[WireTool, ...]]:
        """The wire tools of ``generation``'s offer for this session (kept on the generation unless
        ``tools`` switches some per request): the one implementation of resolving (:mod:`..steps`)."""
        session = self.session
        key, switches = self._key(tools)
        made = generation.offers.get(key) if tools is None else None
        if made is None or made[0] is not session.agent:
            offer = yield from generation.offer_steps(
                session.model, session.agent, rules=session.rules, switches=switches, schemas=True
            )
            made = self._shape(generation, key, tools, offer)
        return made[1]

    def offered(self) -> dict[str, WireTool]:
        """The tools handed out last (an offer is made when none was yet)."""
        if self.last is None:
            self.resolve()
        return self.last or {}

    def _key(self, tools: dict[str, bool] | None) -> tuple[tuple[Any, ...], dict[str, bool] | None]:
        session = self.session
        asker = session.extra.get(QUESTION_ASKER) is not None
        key = (id(session.agent), tuple(session.rules), session.model, session.profile, asker)
        switches = dict(tools or {})
        if not asker:  # nobody can answer: off, as the last switch
            switches.pop(QUESTION_TOOL, None)  # (the last matching switch decides, so no "*" turns it on)
            switches[QUESTION_TOOL] = False
        return key, switches or None

    def _shape(
        self, generation: Generation, key: tuple[Any, ...], tools: dict[str, bool] | None, offer: Any
    ) -> tuple[Any, tuple[WireTool, ...]]:
        """The wire tools of ``offer`` for the session's profile, kept on the generation (per-request
        switches are not kept)."""
        from ..collate import sort_key
        from ..schema_profiles import adapt, can_be_strict, profile_for

        session = self.session
        model = session.model
        profile = session.profile or (profile_for(model.provider, model.id) if model else "default")
        strict = {"openai": False, "openai-strict": True}.get(profile)
        wire = []
        for definition in offer.tools:
            schema = definition.parameters
            flag = False if strict and not can_be_strict(schema) else strict  # see can_be_strict
            wire.append(WireTool(definition.id, definition.description, adapt(schema, profile), flag, schema))
        wire.sort(key=lambda tool: sort_key(tool.name))
        made = (session.agent, tuple(wire))
        if tools is None:
            generation.offers.put(key, made)
        return made

    def _hand_out(self, wire: tuple[WireTool, ...], generation: Generation) -> list[WireTool]:
        """A copy of the wire tools of its own for the caller (a host may change what it receives)."""
        self._keep(wire, generation)
        return [tool.copy() for tool in wire]

    def _keep(self, wire: tuple[WireTool, ...], generation: Generation) -> None:
        self.last, self.made_in = {tool.name: tool for tool in wire}, generation
