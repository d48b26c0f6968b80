"""Note text of the synthetic corpus, exact PHI spans by construction.

* :mod:`.builder`: :class:`NoteBuilder`, text pieces and PHI spans at exact offsets;
* :mod:`.templates`: sentence templates (``{SLOT}`` placeholders) and phrase lists;
* :mod:`.context`: :class:`NoteContext`, one note's patient, site, dates and writing helpers;
* :mod:`.slots`: one function per template slot, and template rendering;
* :mod:`.icu`: the ICU nursing note, system by system and PHI-sparse;
* :mod:`.guideline`: dictated discharge summaries and emergency visits, PHI in the i2b2 guideline's
  forms (added only on request: ``generate(extra_note_types=...)``);
* :mod:`.note_types`: the five note types and :func:`render_note`.
"""


__all__ = []
