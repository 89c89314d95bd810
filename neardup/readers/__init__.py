"""Readers by format, one module each, over one record type (`neardup.records.RawLine`): `jsonl`,
`csvfile`, `parquet`, `warc`, `arc`, `wacz`; what the archive readers share (`capture`: the record a
worker decodes; `shared_captures`: a batch of them with its blocks in a worker pool's shared memory;
`payload`: HTTP, Content-Encoding and charset decoding; `inflate`: gzip), and `sniff`,
which picks the reader by a file's bytes and name. `neardup.ingest` is the entry that ties them."""
