"""Content words in German and French for lexical matching: stop words and light stemmers. Pure.

The offline answerer (and anything else that counts shared words) reads English with its own
stop list and suffix stripper; a German or French question needs the same two things in its
language, or "das", "es", "wenn" count as topic words and "blinkt" never meets "blinkend".
Both stemmers only strip inflections (a few endings, a stem of at least four letters left), so
they merge the forms of one word and almost never two different words. Adding a language is
adding a word list and an ending list. Negations ("kein", "nicht", "pas") are kept as content
words: "hat keine IP-Adresse" and "hat eine IP-Adresse" are different sentences.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

STOPWORDS: Final[dict[str, frozenset[str]]] = {
    "de": frozenset(
        """
        der die das den dem des ein eine einen einem einer eines und oder aber doch ist sind war
        waren wird werden wurde wurden bin bist hat habe haben hatte hatten kann können konnte
        muss müssen soll sollte sollen darf will möchte wie wo was wann warum welche welcher
        welches welchen wer wen wem wieso weshalb mein meine meinen meinem meiner unser unsere
        unseren unserem unserer ihr ihre ihren ihrem ihrer dein deine ich du er sie es wir man
        mich mir uns sich ihn ihm auch noch schon nur so
        dann denn wenn dass ob als mit von vom zu zum zur bei beim für auf aus an am im in ins
        um über unter nach vor durch bis gegen ohne hier dort da ja nein bitte danke hallo gibt
        geht gehen tun macht machen sehr mehr dies diese dieser dieses diesen jetzt immer
        """.split()  # noqa: SIM905 - a word list reads better as prose
    ),
    "fr": frozenset(
        """
        le la les l un une des du de d et ou mais donc est sont était étaient être été a ai as
        avez avons ont avait suis es sommes êtes peut peux pouvez pouvons doit dois faut comment
        où que qu quoi quand pourquoi quel quelle quels quelles qui mon ma mes notre nos votre
        vos ton ta tes son sa ses leur leurs je tu il elle on nous vous ils elles me m te t se s
        moi toi lui plus ce c cet cette ces ça cela ceci y en au aux avec pour dans sur
        par chez sans sous si oui non merci bonjour faire fait très aussi encore déjà tout tous
        toute toutes j
        """.split()  # noqa: SIM905
    ),
}

_ENDINGS: Final[dict[str, tuple[str, ...]]] = {
    # longest first: "blinkend", "blinkt", "blinken" -> "blink"; "bedeutet", "Bedeutung" -> "bedeut"
    "de": tuple("ungen ung end ern en em er es et st e n s t".split()),  # noqa: SIM905
    # "clignote", "clignotant", "clignotement" -> "clignot"; "jaunes" -> "jaun"
    "fr": tuple(
        "ements ement ations ation antes ants ante ant ées ée és er ez ent es e s é x".split()  # noqa: SIM905
    ),
}
_MIN_STEM: Final = 4


def _stripper(endings: tuple[str, ...]) -> Callable[[str], str]:
    def stem(word: str) -> str:
        w = word.casefold()
        if any(c.isdigit() for c in w) or "_" in w:
            return w  # identifiers are compared as written
        for ending in endings:
            if w.endswith(ending) and len(w) - len(ending) >= _MIN_STEM:
                return w[: -len(ending)]
        return w

    return stem


STEMMERS: Final[dict[str, Callable[[str], str]]] = {
    lang: _stripper(endings) for lang, endings in _ENDINGS.items()
}


def fold_terms(
    terms: Sequence[str], language: str
) -> tuple[list[str], Callable[[str], str] | None]:
    """A question's content terms read in `language`: for German and French, stemmed by that
    language's light rules with its stop words left out ("wo", "ich", "meine" are no topic;
    "Rechnungen" and "Rechnung" meet), and the stemmer to apply to the passage's terms; for any
    other language the terms unchanged and None (English is stemmed upstream already)."""
    stem = STEMMERS.get(language)
    if stem is None:
        return list(terms), None
    stop = STOPWORDS[language]
    return list(dict.fromkeys(stem(t) for t in terms if t not in stop)) or list(terms), stem
