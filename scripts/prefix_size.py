"""How large each cacheable prompt prefix is, and whether it reaches a model's cache minimum.

    python -m scripts.prefix_size [--tenant PATH] [--model claude-sonnet-4-6]

Offline: prints characters, the adapter's estimate (4 characters a token, deliberately low) and
a prose estimate (3.5 characters a token, what the test fake's `count_tokens` answers) for the
three prefixes the service sends — answer anonymous (system), answer signed in (tools + system),
condensation (JSON tool + system) — and the model's minimum from `app/providers/chat/models.py`.
In production the exact counts come from the token-counting endpoint at start-up: `/readyz` →
`providers.chat.prefixTokens` and `prefixCacheable`.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from app.providers.chat.models import capabilities_for, estimate_tokens, json_mode
from app.tenant import load_tenant
from app.turn.condense import CONDENSE_SCHEMA
from app.turn.condense import SYSTEM_PROMPT as CONDENSE_PROMPT
from app.turn.prompt import SYSTEM_PROMPT
from app.turn.reference import tenant_reference, with_reference
from app.turn.tools import TOOL_SPECS
from tuning import TUNING

JSON_TOOL_CHARS = 120  # name + description of the adapter's `record_output` tool, roughly


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenant", type=Path, default=Path("seed"), help="tenant file or folder")
    parser.add_argument("--model", default="claude-sonnet-4-6")
    args = parser.parse_args()
    tenant = load_tenant(args.tenant)
    caps = capabilities_for(args.model)
    reference = tenant_reference(tenant, TUNING)
    answer = with_reference(SYSTEM_PROMPT, reference)
    condense = with_reference(CONDENSE_PROMPT, reference)
    tools = len(json.dumps(list(TOOL_SPECS), ensure_ascii=False))
    schema = len(json.dumps(CONDENSE_SCHEMA, ensure_ascii=False))
    forced = json_mode(caps, thinking=False) != "output_format"
    json_tool = schema + JSON_TOOL_CHARS if forced else 0
    rows = [
        ("answer, anonymous (system)", len(answer)),
        ("answer, signed in (tools + system)", len(answer) + tools),
        ("condense (JSON tool + system)", len(condense) + json_tool),
    ]
    print(f"tenant {tenant.name!r}: reference block {len(reference):,} characters")
    print(f"model {args.model}: cache minimum {caps.cache_min_tokens:,} tokens")
    print(f"{'prefix':38} {'chars':>7} {'÷4':>6} {'÷3.5':>6}  breakpoint (by ÷4)")
    for name, chars in rows:
        low, prose = estimate_tokens(chars), math.ceil(chars / 3.5)
        sent = "yes" if low >= caps.cache_min_tokens else "no (unless measured above)"
        print(f"{name:38} {chars:7,} {low:6,} {prose:6,}  {sent}")


if __name__ == "__main__":
    main()
