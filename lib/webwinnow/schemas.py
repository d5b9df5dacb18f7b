"""Every table's schema, once, as Arrow schemas (Spark's are derived from them: stages._frames)."""

from __future__ import annotations

import pyarrow as pa

#: One row per HTML response record: ok documents carry text; the others a reason in `status`.
DOCUMENTS = pa.schema(
    [
        ("doc_id", pa.int64()),
        ("url", pa.string()),
        ("warc_file", pa.string()),
        ("warc_offset", pa.int64()),
        ("record_id", pa.string()),
        ("fetch_time", pa.string()),  # WARC-Date (ARC: the record's date), as the file says it
        ("last_modified", pa.string()),  # HTTP Last-Modified as ISO 8601 UTC; null when absent or unreadable
        ("http_date", pa.string()),  # HTTP Date (the server's clock at the fetch), ISO 8601 UTC
        ("content_type", pa.string()),
        ("status", pa.string()),
        ("text", pa.string()),
        ("html_bytes", pa.int64()),
        ("text_chars", pa.int64()),
        ("http_status", pa.int32()),
        ("charset", pa.string()),
        ("body_sha256", pa.string()),
        ("flags", pa.string()),
    ]
)

#: One row per input file (kind = "file") and one per record that did not become an ok document
#: (kind = "record"). Per file: parsed + skipped + failed + flagged = records_seen.
LEDGER = pa.schema(
    [
        ("kind", pa.string()),
        ("file", pa.string()),
        ("status", pa.string()),  # file: read_ok | empty | failed; record: its outcome
        ("reason", pa.string()),
        ("records_seen", pa.int64()),
        ("parsed", pa.int64()),
        ("skipped", pa.int64()),
        ("failed", pa.int64()),
        ("flagged", pa.int64()),
        ("offset", pa.int64()),
        ("record_id", pa.string()),
        ("warc_type", pa.string()),
        ("url", pa.string()),
        ("detail", pa.string()),
    ]
)

#: What an extract task emits: rows of both tables above, told apart by `table`, with the
#: columns they share merged (documents' warc_file/warc_offset are `file`/`offset` here).
EXTRACT_ROWS = pa.schema(
    [
        ("table", pa.string()),
        ("kind", pa.string()),
        ("doc_id", pa.int64()),
        ("file", pa.string()),
        ("offset", pa.int64()),
        ("record_id", pa.string()),
        ("warc_type", pa.string()),
        ("url", pa.string()),
        ("fetch_time", pa.string()),
        ("last_modified", pa.string()),
        ("http_date", pa.string()),
        ("content_type", pa.string()),
        ("http_status", pa.int32()),
        ("status", pa.string()),
        ("reason", pa.string()),
        ("text", pa.string()),
        ("html_bytes", pa.int64()),
        ("text_chars", pa.int64()),
        ("charset", pa.string()),
        ("body_sha256", pa.string()),
        ("flags", pa.string()),
        ("records_seen", pa.int64()),
        ("parsed", pa.int64()),
        ("skipped", pa.int64()),
        ("failed", pa.int64()),
        ("flagged", pa.int64()),
        ("detail", pa.string()),
    ]
)
# Each table as a projection of EXTRACT_ROWS: (output column, extract-row column).
DOCUMENTS_FROM_ROWS = [(f.name, {"warc_file": "file", "warc_offset": "offset"}.get(f.name, f.name)) for f in DOCUMENTS]
LEDGER_FROM_ROWS = [(f.name, f.name) for f in LEDGER]

FINGERPRINTS = pa.schema([("doc_id", pa.int64()), ("hash", pa.int64()), ("pos", pa.int32())])

#: Per ok document: how much text the kernel saw and what it selected.
DOC_STATS = pa.schema(
    [
        ("doc_id", pa.int64()),
        ("norm_chars", pa.int64()),
        ("kgrams", pa.int64()),
        ("fingerprints", pa.int64()),
    ]
)

#: What a fingerprint task emits: fingerprints (pos >= 0) and per-document stats (pos = -1).
FINGERPRINT_ROWS = pa.schema(
    [
        ("doc_id", pa.int64()),
        ("hash", pa.int64()),
        ("pos", pa.int32()),
        ("norm_chars", pa.int64()),
        ("kgrams", pa.int64()),
        ("fingerprints", pa.int64()),
    ]
)


#: Per fingerprint hash: how widespread it is, and what text it stands for.
HASH_FREQ = pa.schema(
    [
        ("hash", pa.int64()),
        ("docs", pa.int64()),  # document frequency
        ("occurrences", pa.int64()),  # fingerprints with this hash, all documents
        ("hosts", pa.int64()),  # distinct URL hosts among those documents
        ("doc_id", pa.int64()),  # the document the snippet comes from (the smallest doc_id)
        ("snippet", pa.string()),  # original text from the fingerprinted k-gram's start
    ]
)

#: The rank-frequency curve, run-length encoded: ranks rank..rank_last all have `docs` documents.
RANK_FREQ = pa.schema(
    [
        ("rank", pa.int64()),
        ("rank_last", pa.int64()),
        ("docs", pa.int64()),
        ("hashes", pa.int64()),
    ]
)

#: Document pairs that share at least min_shared fingerprint hashes (after the boilerplate cap):
#: what the candidates stage finds, before the passages stage tells content from template.
CANDIDATE_PAIRS = pa.schema(
    [
        ("doc_a", pa.int64()),  # doc_a < doc_b
        ("doc_b", pa.int64()),
        ("url_a", pa.string()),
        ("url_b", pa.string()),
        ("shared", pa.int64()),  # distinct shared fingerprint hashes
        ("fp_a", pa.int64()),  # distinct fingerprint hashes of doc_a after the cap
        ("fp_b", pa.int64()),
        ("resemblance", pa.float64()),  # shared / (fp_a + fp_b - shared)
        ("containment_a", pa.float64()),  # shared / fp_a: how much of a is in b
        ("containment_b", pa.float64()),
        ("source", pa.string()),  # the likely original: "a", "b", "tie" (same times) or "unknown" (no times)
        ("source_basis", pa.string()),  # what decided it: last_modified, warc_date or http_date (null: unknown)
    ]
)

#: What the passages stage adds to a candidate pair: how much it copied, and how much of that is
#: content. Template text is defined in webwinnow.analysis.template.
COPIED = [
    ("passages", pa.int64()),  # copied passages (maximal matching spans)
    ("copied_chars_a", pa.int64()),  # normalized characters of doc_a in them (overlapping spans counted once)
    ("copied_chars_b", pa.int64()),
    ("content_chars_a", pa.int64()),  # of those, outside doc_a's template text
    ("content_chars_b", pa.int64()),
    ("content_share_a", pa.float64()),  # content_chars_a / doc_a's normalized characters
    ("content_share_b", pa.float64()),
    ("longest_content", pa.int64()),  # the longest run of content one passage holds on both sides (min of a and b)
]

#: Pairs that share content: a passage with a run of at least passages.min_content (t) consecutive
#: normalized characters outside template on both sides. What the report, the clusters and dedup read.
PAIRS = pa.schema([*CANDIDATE_PAIRS, *COPIED])

#: The candidate pairs that do not: every copied passage is (nearly all) template, or no shared
#: fingerprint grew into a passage. Kept, counted, never paired.
TEMPLATE_PAIRS = pa.schema([*PAIRS, ("reason", pa.string())])  # "template" | "no_passage"

#: The template k-grams (webwinnow.analysis.template): a k-gram's hash and the documents holding it
#: within w of a block of their template text, more than max_df of them. Template text wherever
#: the k-gram occurs, selected or not.
TEMPLATE_KGRAMS = pa.schema([("hash", pa.int64()), ("docs", pa.int64())])

#: Exact copied passages of each pair (of the pairs table): maximal matching spans of the normalized texts, as
#: character offsets into documents.text (end exclusive).
PASSAGES = pa.schema(
    [
        ("doc_a", pa.int64()),
        ("doc_b", pa.int64()),
        ("start_a", pa.int64()),
        ("end_a", pa.int64()),
        ("start_b", pa.int64()),
        ("end_b", pa.int64()),
        ("length", pa.int64()),  # normalized characters
        ("capped", pa.bool_()),  # the pair hit a span or character cap: more may exist
        # share of doc_a's fingerprints inside the span whose hash is boilerplate (in more than
        # max_df documents): near 1 for site template text that a pair shares; null when no
        # fingerprint falls inside the span
        ("boilerplate", pa.float64()),
        # normalized characters of the span outside each side's template text
        ("content_chars_a", pa.int64()),
        ("content_chars_b", pa.int64()),
        # the longest run of them: consecutive units outside the side's template text (what decides
        # a content pair: at least t = w + k - 1 on both sides, the length every copy the guarantee
        # covers holds)
        ("content_run_a", pa.int64()),
        ("content_run_b", pa.int64()),
        ("source", pa.string()),  # the pair's likely original side ("a", "b", "tie", "unknown"): see PAIRS
        ("source_basis", pa.string()),
    ]
)

#: Connected components of documents linked by pairs with resemblance >= the threshold, or by
#: identical normalized text (whatever max_df kept out of the pairs).
CLUSTERS = pa.schema(
    [
        ("doc_id", pa.int64()),
        ("cluster_id", pa.int64()),  # the smallest doc_id in the cluster
        ("cluster_size", pa.int64()),
        ("identical", pa.int64()),  # documents with exactly this document's normalized text (itself included)
        ("source_doc", pa.int64()),  # the earliest member: Last-Modified, WARC-Date, Date, smallest doc_id
    ]
)

#: Where each pair's shared fingerprints are: (pos_a, pos_b) of every two fingerprints of the pair
#: with the same hash, sorted; the passages stage grows them into spans.
SEED = pa.struct([("pos_a", pa.int32()), ("pos_b", pa.int32())])
PAIR_SEEDS = pa.schema(
    [
        ("doc_a", pa.int64()),
        ("doc_b", pa.int64()),
        ("seeds", pa.list_(pa.field("element", SEED, nullable=False))),
    ]
)

#: A removed stretch of a page: character offsets into documents.text, end exclusive.
SPAN = pa.struct([("start", pa.int64()), ("end", pa.int64())])

#: One row per ok document: its text with every copied passage removed from every copy but its
#: source's (and with --strip-template, template text from every page of a host but its first),
#: or dropped. original_chars = removed_chars + kept_chars; removed_chars = the removed spans'
#: length; a dropped document has no text and one removed span, the whole of it.
DEDUPED = pa.schema(
    [
        ("doc_id", pa.int64()),
        ("url", pa.string()),
        ("warc_file", pa.string()),
        ("warc_offset", pa.int64()),
        ("record_id", pa.string()),
        ("fetch_time", pa.string()),
        ("cluster_id", pa.int64()),  # null: in no cluster
        ("cluster_size", pa.int64()),  # 1 when in no cluster
        ("text", pa.string()),  # null when dropped
        ("original_chars", pa.int64()),
        ("removed_chars", pa.int64()),
        ("kept_chars", pa.int64()),
        ("template_chars", pa.int64()),  # of removed_chars: template text (--strip-template), not copies
        ("removed_spans", pa.list_(pa.field("element", SPAN, nullable=False))),  # merged, sorted
        ("copied_from", pa.list_(pa.int64())),  # the kept sources of the removed passages
        ("dropped_reason", pa.string()),  # null (kept) | near_duplicate | emptied
        ("duplicate_of", pa.int64()),  # near_duplicate: the cluster's source_doc, which is kept
    ]
)

#: A check's boilerplate: hashes of the new documents or of the indexed documents they are compared
#: with that are in more than max_df documents of the index and the new input together.
INDEX_BOILERPLATE = pa.schema(
    [("hash", pa.int64()), ("docs", pa.int64()), ("index_docs", pa.int64()), ("query_docs", pa.int64())]
)

#: A check, per new document (a benchmark item): which indexed documents hold which of its spans.
#: covered_chars: its normalized characters inside a passage shared with an indexed document.
CONTAMINATION = pa.schema(
    [
        ("doc_id", pa.int64()),
        ("item_id", pa.string()),  # the item's id (record_id; a crawl page: its WARC-Record-ID)
        ("url", pa.string()),
        ("warc_file", pa.string()),  # the new input file, and the item's row in it (a page: its offset)
        ("warc_offset", pa.int64()),
        ("norm_chars", pa.int64()),
        ("covered_chars", pa.int64()),
        ("covered_share", pa.float64()),  # covered_chars / norm_chars (null: no normalized text)
        ("longest", pa.int64()),  # the longest shared passage, normalized characters
        ("indexed_documents", pa.int64()),  # indexed documents sharing a passage with it
        (
            "matches",
            pa.list_(
                pa.field(
                    "element",
                    pa.struct(
                        [
                            ("doc_id", pa.int64()),
                            ("url", pa.string()),
                            ("warc_file", pa.string()),
                            ("warc_offset", pa.int64()),
                            ("passages", pa.int64()),
                            ("chars", pa.int64()),
                        ]
                    ),
                    nullable=False,
                )
            ),
        ),
        # the shared passages: [start, end) in this document's text, [start_indexed, end_indexed) in doc_id's
        (
            "spans",
            pa.list_(
                pa.field(
                    "element",
                    pa.struct(
                        [
                            ("start", pa.int64()),
                            ("end", pa.int64()),
                            ("doc_id", pa.int64()),
                            ("start_indexed", pa.int64()),
                            ("end_indexed", pa.int64()),
                            ("length", pa.int64()),
                        ]
                    ),
                    nullable=False,
                )
            ),
        ),
    ]
)

TABLE_SCHEMAS = {
    "documents": DOCUMENTS,
    "ledger": LEDGER,
    "fingerprints": FINGERPRINTS,
    "doc_stats": DOC_STATS,
    "hash_freq": HASH_FREQ,
    "rank_freq": RANK_FREQ,
    "candidate_pairs": CANDIDATE_PAIRS,
    "pair_seeds": PAIR_SEEDS,
    "pairs": PAIRS,
    "template_pairs": TEMPLATE_PAIRS,
    "template_kgrams": TEMPLATE_KGRAMS,
    "passages": PASSAGES,
    "clusters": CLUSTERS,
    "deduped": DEDUPED,
    # a check's folder (the lookup stage): the indexed documents the new ones share hashes with
    "indexed_documents": DOCUMENTS,
    "indexed_doc_stats": DOC_STATS,
    "indexed_fingerprints": FINGERPRINTS,
    "index_boilerplate": INDEX_BOILERPLATE,
    "contamination": CONTAMINATION,
}
