"""One run's output, read on one machine with pyarrow: what notebooks and the report's figures use.

A local folder, or an output on a store (s3://, gs://, hdfs://, file://): there the committed
generation is read, the one `_webwinnow_current.json` names. Tables are read with column
projection and row filters, so a notebook on a large run reads what it shows; the per-document
analyses take a sample of documents (:meth:`RunOutput.sample_doc_ids`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from .. import storage
from ..errors import UserError


def run_folder(out: str) -> str:
    """The folder holding a run's tables: OUT itself, or the committed generation on a store."""
    from ..outputs.generations import CURRENT, is_store, read_current

    folder = storage.canonical(out)
    if not is_store(out) and storage.info(storage.child(folder, CURRENT)) is None:
        if storage.info(folder) is None:
            raise UserError(f"{out} does not exist: give the --out of a webwinnow run")
        if storage.info(storage.child(folder, "documents")) is None:
            raise UserError(f"{out} holds no webwinnow tables: give the --out of a webwinnow run")
        return folder
    record = read_current(out)
    if record is None:
        raise UserError(f"{out} has no committed webwinnow run: run 'webwinnow run INPUT... --out {out}' first")
    return storage.parent(record["summary"])


class RunOutput:
    """A run's tables and the statistics its stages recorded beside them."""

    def __init__(self, out: str | os.PathLike[str], *, tables_in: str | None = None):
        """out: a run's --out. tables_in: the folder holding the tables, when known (a stage
        reading the generation or staging folder it is writing)."""
        self.out = storage.canonical(os.fspath(out))
        self.folder = storage.canonical(tables_in) if tables_in else run_folder(self.out)
        self._kgrams: dict[int | None, list[tuple[int, np.ndarray]]] = {}
        self._frequencies: dict[int | None, tuple[np.ndarray, np.ndarray]] = {}
        self._sample_ids: dict[int, np.ndarray] = {}

    def __repr__(self) -> str:
        return f"RunOutput({self.out!r})"

    # -- tables ------------------------------------------------------------------------------

    def table(self, name: str, columns: list[str] | None = None, filters=None) -> pa.Table:
        from ..outputs.tables import read_arrow

        return read_arrow(self.folder, name, columns, filters)

    def frame(self, name: str, columns: list[str] | None = None, filters=None):
        """The table as a pandas DataFrame."""
        return self.table(name, columns, filters).to_pandas()

    def rows(self, name: str) -> int:
        from ..outputs.tables import row_count

        return row_count(self.folder, name)

    def stats(self, name: str) -> dict[str, Any]:
        """What the table's stage recorded (fits, counts, the max_df it chose), {} when nothing."""
        from ..outputs.tables import table_stats

        return table_stats(self.folder, name) or {}

    def config(self, name: str = "candidate_pairs") -> dict[str, Any]:
        """The resolved config the table was made with."""
        from ..outputs.tables import read_table_config

        return read_table_config(self.folder, name)["config"]

    @cached_property
    def summary(self) -> dict[str, Any]:
        data = storage.read_bytes(storage.child(self.folder, "summary.json"))
        return json.loads(data) if data else {}

    @cached_property
    def winnow(self) -> dict[str, Any]:
        """k, w, t, robust and mod_p of the fingerprints table."""
        made = dict(self.config("fingerprints")["winnow"])
        made.setdefault("t", made["w"] + made["k"] - 1)
        return made

    @property
    def report_dir(self) -> Path | None:
        """The report folder of a local output (None on a store: generations are not rewritten)."""
        if storage.is_uri(self.folder):
            return None
        return Path(self.folder) / "report"

    # -- documents ---------------------------------------------------------------------------

    def sample_doc_ids(self, max_docs: int | None) -> np.ndarray:
        """The ids of up to max_docs ok documents, sorted (all when max_docs is None).

        Document ids are hashes of where a record is, so the smallest ones are a deterministic
        sample spread over the whole crawl, and the same from one call to the next. They are found
        one row group at a time: the memory is the sample's, whatever the crawl's size.
        """
        if max_docs is not None and max_docs < 1:
            raise ValueError(f"max_docs must be at least 1, got {max_docs}")
        if max_docs is None:
            return np.sort(self.table("documents", ["doc_id"], [("status", "=", "ok")]).column(0).to_numpy())
        # found once per RunOutput: the figures ask four times, and each search reads the
        # documents table's ids (0.1-0.2 CPU-s on the docs corpus)
        if max_docs not in self._sample_ids:
            from ..outputs.tables import smallest_doc_ids

            ids = smallest_doc_ids(self.folder, max_docs)
            ids.flags.writeable = False
            self._sample_ids = {max_docs: ids}
        return self._sample_ids[max_docs]

    def doc_rows(self, name: str, doc_ids, columns: list[str]) -> pa.Table:
        """The rows of a table (documents, fingerprints) of the given documents, reading only the
        row groups that hold them (a sample costs its row groups, not the table's columns whole)."""
        from ..outputs.tables import read_doc_rows
        from ..schemas import TABLE_SCHEMAS

        parts = list(read_doc_rows(self.folder, name, doc_ids, columns))
        if parts:
            return pa.concat_tables(parts)
        return TABLE_SCHEMAS[name].empty_table().select(["doc_id", *(c for c in columns if c != "doc_id")])

    def texts(self, doc_ids: np.ndarray | None = None, batch: int = 512) -> Iterator[tuple[np.ndarray, list[str]]]:
        """(doc_ids, texts) of ok documents in batches: those of doc_ids in doc_id order when given
        (read in one pass over the row groups that hold them), else every ok document in the
        table's order, one row group at a time."""
        if doc_ids is None:
            import pyarrow.compute as pc
            import pyarrow.parquet as pq

            from ..outputs.tables import parquet_files

            for name in parquet_files(self.folder, "documents"):
                with storage.open_input(name) as fh:
                    for got in pq.ParquetFile(fh).iter_batches(batch_size=batch, columns=["doc_id", "text", "status"]):
                        got = got.filter(pc.equal(got.column("status"), "ok"))
                        if got.num_rows:
                            yield got.column("doc_id").to_numpy(), [t or "" for t in got.column("text").to_pylist()]
            return
        got = self.doc_rows("documents", doc_ids, ["text"])
        order = np.argsort(got.column("doc_id").to_numpy(), kind="stable")
        ids, texts = got.column("doc_id").to_numpy()[order], got.column("text").take(pa.array(order))
        for lo in range(0, len(ids), batch):
            yield ids[lo : lo + batch], [t or "" for t in texts.slice(lo, batch).to_pylist()]

    def sample_kgrams(self, max_docs: int | None) -> list[tuple[int, np.ndarray]]:
        """(doc_id, k-gram hashes with the run's k) of each document of sample_doc_ids(max_docs)
        that has any: computed once per RunOutput, shared by the analyses of one sample."""
        from ..core.winnowing import kgram_hashes

        key = max_docs
        if key not in self._kgrams:
            k, unit, lexer = self.winnow["k"], self.winnow.get("unit", "char"), self.winnow.get("lexer", "c")
            found = []
            # all documents: streamed in the table's order rather than gathered by id
            for ids, texts in self.texts(None if max_docs is None else self.sample_doc_ids(max_docs)):
                for doc_id, text in zip(ids.tolist(), texts, strict=True):
                    hashes, _ = kgram_hashes(text, k, unit, lexer)
                    if hashes.size:
                        found.append((doc_id, hashes))
            self._kgrams = {key: found}  # one sample at a time: it can be large
            self._frequencies = {}
        return self._kgrams[key]

    def sample_frequencies(self, max_docs: int | None) -> tuple[np.ndarray, np.ndarray]:
        """(df, distinct) of the k-gram hashes of sample_kgrams(max_docs): how many of its
        documents hold each distinct hash (one count per hash, in no particular order), and how
        many distinct hashes each document holds, in its order (core.docfreq). Counted once per
        RunOutput for the analyses that need them (the k-gram curve, the documents that repeat
        the most)."""
        from ..core.docfreq import document_frequencies

        kgrams = self.sample_kgrams(max_docs)
        if max_docs not in self._frequencies:
            sizes = np.array([hashes.size for _, hashes in kgrams], np.int64)
            bounds = np.zeros(len(sizes) + 1, np.int64)
            np.cumsum(sizes, out=bounds[1:])
            every = np.concatenate([hashes for _, hashes in kgrams]) if kgrams else np.zeros(0, np.int64)
            self._frequencies = {max_docs: document_frequencies(every, bounds)}
        return self._frequencies[max_docs]

    def urls(self, doc_ids) -> dict[int, str | None]:
        got = self.doc_rows("documents", np.asarray([int(d) for d in doc_ids], np.int64), ["url"])
        return dict(zip(got.column("doc_id").to_pylist(), got.column("url").to_pylist(), strict=True))
