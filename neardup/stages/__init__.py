"""The local engine's stages, one module each, every one reading and writing through the `Store`:

- `ingest`: a crawl dump -> pages, HTML blocks, rejects and the sketches of the setting in force
  (`ingest_file`, its `SourceLoad`; `FileSummary`).
- `texts`: pages -> their text under a normalization (`ensure_texts`).
- `sketches`: distinct texts -> SimHash and MinHash under a shingle setting (`ensure_sketches`).
- `pairs`: units with their sketches -> verified candidate pairs (`find_pairs`, `verify_exact`; `UnitPairs`).
- `fingerprints`: the units and pairs of a setting, stored once (`compute_fingerprints`,
  `current_fingerprints`; `FingerprintSet`).
- `incremental`: a stored set extended with the units of pages loaded since (`extend_fingerprints`).

`neardup.engine` runs them in order and times them (`base.StageClock`); `neardup.analysis` clusters what
they store.
"""
