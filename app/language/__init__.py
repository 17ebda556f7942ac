"""Everything that reads words: normalisation, tokenising and stemming, identifiers, lexicons and
utterance shapes as data. Pure: imports nothing from `app.turn`, `app.providers`, `app.store` or
`app.search`; those packages import it."""
