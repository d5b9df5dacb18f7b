"""A fingerprint index kept on disk: built once from a crawl, appended to, queried by `webwinnow check`.

MOSS keeps a database to query; Noplag intersects a document's fingerprints with an index of
150 million and drops the fingerprints common in it before aligning the few candidates. This
layer is the index's files (``layout``: the manifest and where each file is; ``sortedfiles``:
Parquet files sorted on a key, read by the row groups that can hold given keys). The Spark jobs
that write and read them are in ``webwinnow.stages._indexing`` and the lookup stage; the
command in ``command``.
"""
