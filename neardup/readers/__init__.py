"""Readers by format, one module each, over one record type (`neardup.records.RawLine`): `jsonl`,
`csvfile`, `parquet`, `warc`, `arc`, `wacz`; what the archive readers share (`capture`: the record a
worker decodes; `payload`: HTTP, Content-Encoding and charset decoding; `inflate`: gzip), and `sniff`,
which picks the reader by a file's bytes and name. `neardup.ingest` is the entry that ties them."""
