-- neardup database schema. Bump SCHEMA_VERSION in store/schema.py when a table or column changes (a column's
-- COMPRESSION is a storage choice: files written without it read the same).
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);

CREATE TABLE IF NOT EXISTS sources (
    source_id INTEGER PRIMARY KEY,
    path VARCHAR NOT NULL,
    sha256 VARCHAR NOT NULL UNIQUE,      -- re-ingesting the same bytes is a no-op
    format VARCHAR NOT NULL,
    status VARCHAR NOT NULL,             -- 'loading' until the whole file is in, then 'done'
    n_records BIGINT DEFAULT 0,
    n_loaded BIGINT DEFAULT 0,
    n_errors BIGINT DEFAULT 0,
    loaded_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS pages (
    page_id BIGINT NOT NULL,             -- unique by construction (assigned in order at ingest)
    source_id INTEGER NOT NULL,
    line BIGINT NOT NULL,                -- 1-based line (JSONL, CSV) or row (Parquet) in the source
    url VARCHAR NOT NULL,
    canonical_url VARCHAR NOT NULL,
    host VARCHAR NOT NULL,
    fetched_at TIMESTAMP,
    status INTEGER,
    -- raw HTML as a column: pages loaded under schema 3 or earlier and Spark runs (an ingest stores it in
    -- html_blocks, below; NULL here then). NULL when the record gave plain text.
    html VARCHAR USING COMPRESSION zstd,
    text_in VARCHAR,                     -- the record's own `text` field, used when there is no HTML
    md5 VARCHAR NOT NULL,                -- of the raw HTML (or text): byte-identical duplicates
    rel_canonical VARCHAR,               -- canonicalized <link rel=canonical>, read from the raw head
    extra JSON,                          -- any other fields of the record
    -- where the raw HTML is: html_blocks.block_id, and its UTF-8 bytes [html_start, html_start + html_bytes)
    -- in that block once inflated; NULL when `html` holds it or the record gave plain text
    html_block BIGINT,
    html_start INTEGER,
    html_bytes INTEGER
);

-- Raw HTML, compressed by the ingest workers (Store.add_ingested): the UTF-8 of a run of consecutive
-- pages (about 2 MB, batches.HTML_BLOCK_BYTES) one after another, compressed as one Zstandard frame
-- (htmlcodec.html_codec), so that pages sharing a template compress against each other (the file stays
-- about as small as under DuckDB's own ZSTD) while one page is read by inflating its block alone.
CREATE TABLE IF NOT EXISTS html_blocks (
    block_id BIGINT NOT NULL,            -- the page_id of its first page
    raw_bytes INTEGER NOT NULL,          -- the run's size inflated
    data BLOB NOT NULL USING COMPRESSION uncompressed  -- compressed already: DuckDB's methods find nothing
);

-- The WARC payload digest of each page read from a WARC response, resource or revisit record: a revisit
-- whose record is in another file is a copy of the stored page of its digest (Store.page_by_payload),
-- found by the index on payload_digest (Store._INDEXES): one lookup per revisit, not a scan of `pages`.
-- Rows whose page is gone (a removed source, a rejected duplicate) are never matched: the page is read too.
CREATE TABLE IF NOT EXISTS warc_payloads (
    payload_digest VARCHAR NOT NULL,     -- WARC-Payload-Digest as written ("sha1:<base32>")
    page_id BIGINT NOT NULL,
    source_id INTEGER NOT NULL
);

-- Rejected records: one row each, or one for the part of a file that could not be read.
CREATE TABLE IF NOT EXISTS ingest_errors (
    source_id INTEGER,
    source VARCHAR NOT NULL,
    line BIGINT,                         -- as in pages (a WARC file: the record's number in it)
    kind VARCHAR NOT NULL,               -- rejects.RejectKind: what is wrong, the key reports count by
    reason VARCHAR NOT NULL              -- the sentence a user reads: the kind's words, where and why
);

-- Normalized text, once per normalization setting.
CREATE TABLE IF NOT EXISTS texts (
    norm_key VARCHAR NOT NULL,
    page_id BIGINT NOT NULL,
    text VARCHAR NOT NULL USING COMPRESSION zstd,  -- 18% smaller file than the FSST dictionary it picks
    title VARCHAR,
    n_words INTEGER NOT NULL,
    exact_key VARCHAR NOT NULL,          -- SHA-256 of the joined words: exact duplicates
    degenerate VARCHAR                   -- why the page is set aside, or NULL
    -- (norm_key, page_id) is unique by construction; no index: it would slow bulk loads 3x
);

-- Shingle sketches per distinct word sequence (exact_key) and shingle setting: both fingerprints, so a
-- method switch needs no new pass over the texts. Written by the ingest workers for the setting in
-- force, filled in for others on demand; a row may repeat (exact duplicates), readers take any one.
CREATE TABLE IF NOT EXISTS sketches (
    sketch_key VARCHAR NOT NULL,         -- Config.sketch_key: shingle size, permutations, seed
    exact_key VARCHAR NOT NULL,
    n_shingles INTEGER NOT NULL,
    simhash UBIGINT NOT NULL,
    minhash BLOB NOT NULL USING COMPRESSION uncompressed  -- num_perm x uint32, little-endian: random bytes
);

-- Per (normalization, method, shingle size, ...): one unit per distinct exact_key of content pages.
CREATE TABLE IF NOT EXISTS fingerprint_sets (
    fingerprint_key VARCHAR PRIMARY KEY,
    norm_key VARCHAR NOT NULL,
    method VARCHAR NOT NULL,
    shingle_size INTEGER NOT NULL,
    n_units BIGINT NOT NULL,
    n_pairs BIGINT NOT NULL,
    stats JSON,                          -- banding / LSH statistics, boilerplate warnings
    seconds DOUBLE,
    computed_at TIMESTAMP
);

CREATE TABLE IF NOT EXISTS units (
    fingerprint_key VARCHAR NOT NULL,
    unit_id INTEGER NOT NULL,
    exact_key VARCHAR NOT NULL,
    n_shingles INTEGER NOT NULL,
    simhash UBIGINT,
    minhash BLOB USING COMPRESSION uncompressed  -- random bytes. (fingerprint_key, unit_id) is unique by construction
);

-- Candidate pairs, verified, down to the loosest threshold offered; a tighter threshold is a filter.
CREATE TABLE IF NOT EXISTS pairs (
    fingerprint_key VARCHAR NOT NULL,
    a INTEGER NOT NULL,                  -- unit ids, a < b
    b INTEGER NOT NULL,
    hamming_bits SMALLINT,               -- simhash
    jaccard DOUBLE,                      -- minhash: exact (verify: exact, the default), else the estimate
    containment DOUBLE                   -- likewise (0 when the size guard fails)
);

-- Analyst labels, keyed by the two canonical URLs and the MD5 of each page's bytes, so they survive
-- re-ingests and new settings, and two re-fetches of one URL with different content are two pairs.
-- An empty md5 means "any content at that URL" (labels imported without content hashes).
-- One row per pair and labeler ('' when unnamed): a colleague's label never replaces yours.
CREATE TABLE IF NOT EXISTS labels (
    url_a VARCHAR NOT NULL,
    md5_a VARCHAR NOT NULL DEFAULT '',
    url_b VARCHAR NOT NULL,
    md5_b VARCHAR NOT NULL DEFAULT '',
    label VARCHAR NOT NULL,              -- duplicate | not | unsure
    category VARCHAR,
    note VARCHAR,
    labeler VARCHAR NOT NULL DEFAULT '',
    labeled_at TIMESTAMP NOT NULL,
    setting JSON,
    PRIMARY KEY (url_a, md5_a, url_b, md5_b, labeler)
);

-- Each source's own analysis at one setting (compare.source_summary): its numbers, its hosts, its clusters
-- and the cluster of each of its units, so that comparing a new crawl with it reads these instead of the
-- source's pages, units and pairs. `analysis_key` names the setting (compare.analysis_key: fingerprint key,
-- threshold, representative rule, URL rules). It stays valid while the source's units and the pairs between
-- them do: another source's pages only append units and pairs with a new unit, and a fingerprint set
-- computed anew keeps it when the pairs between its units are the same ones (`pairs_digest`; its unit ids
-- are renumbered by exact_key). Its rows go with the source.
CREATE TABLE IF NOT EXISTS source_analyses (
    source_id INTEGER NOT NULL,
    analysis_key VARCHAR NOT NULL,
    fingerprint_key VARCHAR NOT NULL,
    numbers JSON NOT NULL,               -- analysis.ReportNumbers
    pairs_digest VARCHAR NOT NULL,       -- the count and a hash sum of the pairs of two of its units
    computed_at TIMESTAMP NOT NULL
);

CREATE TABLE IF NOT EXISTS source_hosts (
    source_id INTEGER NOT NULL,
    analysis_key VARCHAR NOT NULL,
    position INTEGER NOT NULL,           -- the report's order: most redundant pages first
    host VARCHAR NOT NULL,
    pages BIGINT NOT NULL,
    redundant BIGINT NOT NULL,
    redundant_pct DOUBLE NOT NULL
);

-- One row per cluster of content pages (singletons included), with its first page by page id.
CREATE TABLE IF NOT EXISTS source_clusters (
    source_id INTEGER NOT NULL,
    analysis_key VARCHAR NOT NULL,
    cluster_id BIGINT NOT NULL,
    pages BIGINT NOT NULL,
    first_page_id BIGINT NOT NULL,
    first_url VARCHAR NOT NULL,
    first_exact_key VARCHAR NOT NULL
);

-- The cluster of each unit of the source's content pages.
CREATE TABLE IF NOT EXISTS source_units (
    source_id INTEGER NOT NULL,
    analysis_key VARCHAR NOT NULL,
    unit_id INTEGER NOT NULL,
    exact_key VARCHAR NOT NULL,
    cluster_id BIGINT NOT NULL
);

-- The pages' URLs as URL rules parse them (`url_parse.parse_urls`), made once per crawl by `neardup report`
-- or the URL rules page, and made anew when the pages change (the page ids are compared): codes per page,
-- each URL key's host, path and query codes, and each distinct string once.
CREATE TABLE IF NOT EXISTS url_parse_pages (
    page_id BIGINT NOT NULL,
    raw INTEGER NOT NULL,                -- the URL as fetched: equal codes, equal strings
    base INTEGER NOT NULL,               -- its URL key (url_parse_keys)
    trap INTEGER NOT NULL                -- its crawl-trap family (kinds trap_host, trap_pattern); -1: no http(s) URL
);

CREATE TABLE IF NOT EXISTS url_parse_keys (
    base INTEGER NOT NULL,
    host INTEGER NOT NULL,
    path INTEGER NOT NULL,
    query INTEGER NOT NULL,
    is_url BOOLEAN NOT NULL              -- the key of an http(s) URL (else of another string: its path)
);

CREATE TABLE IF NOT EXISTS url_parse_names (
    kind VARCHAR NOT NULL,               -- host, path, query (its sorted pairs as JSON), trap_host, trap_pattern
    code INTEGER NOT NULL,
    name VARCHAR NOT NULL
);

-- The suggested category of a copy deduplication removes against its representative (categories.suggest_copies):
-- one row per (suggestion key, copy, representative) compared. The key (categories.suggestion_key) names what
-- a pair's category depends on besides its two pages: the rule table's version, the normalization, shingle
-- size and URL rules; never the threshold, so a pair a threshold forms again is read, not compared again.
-- Labels are not here: they are applied over these at read time. A row whose page is gone is never matched.
CREATE TABLE IF NOT EXISTS suggested_categories (
    suggestion_key VARCHAR NOT NULL,
    page_id BIGINT NOT NULL,             -- the copy
    representative_id BIGINT NOT NULL,   -- the page kept in its place
    category VARCHAR NOT NULL,           -- one of labels.CATEGORIES
    newer_than_kept BOOLEAN NOT NULL     -- the copy was fetched after its representative
);

-- The buckets of a MinHash fingerprint set's candidate search too large to expand (capped_buckets.CappedBuckets):
-- what a replay of the search on one pair (the Audit page's evidence) needs of every other signature. One
-- row in capped_bucket_sets per fingerprint set counted, naming the set as it was counted (its units and
-- when it was computed): a set computed again or extended since is counted again.
CREATE TABLE IF NOT EXISTS capped_bucket_sets (
    fingerprint_key VARCHAR NOT NULL,
    n_units BIGINT NOT NULL,
    set_computed_at TIMESTAMP,           -- fingerprint_sets.computed_at of the set counted
    bucket_cap BIGINT NOT NULL
);

CREATE TABLE IF NOT EXISTS capped_buckets (
    fingerprint_key VARCHAR NOT NULL,
    lsh_table INTEGER NOT NULL,          -- -1: the one LSH index; else the size-class pass's tables, numbered from 0
    band INTEGER NOT NULL,
    bucket UBIGINT NOT NULL,             -- the key the search sorts the bucket by
    size BIGINT NOT NULL
);
