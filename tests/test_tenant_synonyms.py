"""The tenant file's `synonyms:` section: validated at load, empty in the generic profile."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.language.synonyms import SynonymTable
from app.tenant import generic_tenant, load_tenant

SEED = Path(__file__).resolve().parents[1] / "seed"


def _tenant_file(tmp_path: Path, synonyms_yaml: str) -> Path:
    path = tmp_path / "tenant.yaml"
    path.write_text(f"name: Test Co\nsynonyms:\n{synonyms_yaml}", encoding="utf-8")
    return path


def test_the_generic_profile_has_no_synonyms() -> None:
    tenant = generic_tenant()
    assert tenant.synonyms == ()
    assert not tenant.synonym_table


def test_groups_load_as_written(tmp_path: Path) -> None:
    groups = "  - [UK, United Kingdom, Great Britain]\n  - [SSO, single sign-on]\n"
    tenant = load_tenant(_tenant_file(tmp_path, groups))
    uk = ("UK", "United Kingdom", "Great Britain")
    assert tenant.synonyms == (uk, ("SSO", "single sign-on"))
    assert tenant.synonym_table.additions("shipping to the uk") == list(uk[1:])


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("  - [UK]\n", r"synonyms\[0\] needs at least two terms"),
        ("  - [SSO, single sign-on]\n  - []\n", r"synonyms\[1\] needs at least two terms"),
        ("  - [UK, '']\n", r"synonyms\[0\]: an entry is empty"),
        ("  - [UK, '   ']\n", r"synonyms\[0\]: an entry is empty"),
        ("  - [the, an]\n", r"synonyms\[0\]: .*no searchable word"),
        ("  - [UK, uk]\n", r"synonyms\[0\] repeats a term"),
        ("  - [NO, Norway]\n", r"synonyms\[0\]: \[False\] are not text"),  # YAML's booleans
        ("  - UK\n", r"synonyms\[0\] is not a list"),
        ("  UK: United Kingdom\n", r"synonyms is a list of groups"),
    ],
)
def test_a_bad_group_is_a_start_up_error_naming_it(
    tmp_path: Path, yaml_text: str, message: str
) -> None:
    with pytest.raises(ValueError, match=r"invalid tenant file") as excinfo:
        load_tenant(_tenant_file(tmp_path, yaml_text))
    assert re.search(message, str(excinfo.value)), str(excinfo.value)


def test_the_seed_groups_name_the_spelling_the_seed_articles_use() -> None:
    """Each seed group holds a term the docs write, matched as retrieval matches it (else the
    group could never help), and for the renamed products a term they never write."""
    tenant = load_tenant(SEED)
    assert tenant.synonyms, "the seed tenant ships synonyms"
    docs = "\n".join(p.read_text(encoding="utf-8") for p in (SEED / "articles").glob("*.md"))
    for group in tenant.synonyms:
        assert SynonymTable((group,)).matches(docs), f"no member of {group} is in the articles"
    absent = {m for g in tenant.synonyms for m in g if not SynonymTable(((m,),)).matches(docs)}
    assert {"Azure AD", "Office 365", "G Suite"} <= absent  # the old names customers still use
