"""Stage output folders: Parquet tables written whole, with the resolved config beside them.

In a local output folder a table is built in a hidden sibling and swapped in; in a generation on
a store (webwinnow.outputs.generations) it is written in place, the generation being unread until committed.
A table's _webwinnow.json may point elsewhere (``"data"``): a table a stage run alone inherited.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .. import __version__, storage
from ..config import UNICODE_VERSION, RunConfig
from ..errors import UserError

#: Beside every table: its stage, resolved config, recipe, what it read and its statistics.
TABLE_META = "_webwinnow.json"


def table_path(out: str, table: str) -> str:
    return storage.child(str(out), table)


def data_location(out: str | Path, table: str) -> str:
    """Where a table's rows are: its folder, or the folder its metadata points to."""
    meta = table_meta(out, table)
    return (meta or {}).get("data") or table_path(str(out), table)


def write_table(
    df, out: str, table: str, cfg: RunConfig, stage: str, extra: dict[str, Any] | None = None, fmt: str = "parquet"
) -> str:
    """Write df as DIR/table, replacing an earlier one only once the new one is complete.

    Spark writes into a hidden sibling folder; the old table is removed and the new one renamed
    into place only after the write succeeded, so a failed run never leaves a mix of old and new
    files, and a reader never sees a half-written table under the real name. fmt "json": gzipped
    JSON lines (part-*.json.gz) instead of Parquet.
    """

    def save(path: str) -> None:
        writer = df.write.mode("overwrite")
        if fmt == "json":
            writer.option("compression", "gzip").json(path)
        else:
            writer.parquet(path)

    folder = stage_table(out, table, create=False)
    save(folder)
    finish_table(out, table, cfg, stage, extra)
    return table_path(out, table)


def stage_table(out: str, table: str, create: bool = True) -> str:
    """Where a new DIR/table is built, emptied: a hidden sibling locally (swapped in by
    finish_table), the table's own folder in a generation on a store (unread until committed).
    Refuses a folder of that name that webwinnow did not make."""
    if storage.is_uri(str(out)):
        target = table_path(out, table)
        storage.delete_tree(target)  # an inherited pointer, or an unfinished try
        if create:
            fs, path = storage.locate(target)
            fs.create_dir(path, recursive=True)  # a folder where folders exist; nothing on object stores
        return target
    final = Path(table_path(out, table))
    if final.exists() and not (final / TABLE_META).is_file():
        raise UserError(f"{final} exists and is not a webwinnow table (no {TABLE_META}): move it away and rerun")
    staging = final.parent / f".{table}.incomplete"
    shutil.rmtree(staging, ignore_errors=True)
    if create:
        staging.mkdir(parents=True)
    return str(staging)


def finish_table(out: str, table: str, cfg: RunConfig, stage: str, extra: dict[str, Any] | None = None) -> None:
    """Publish the table built in stage_table's folder, with its metadata."""
    if storage.is_uri(str(out)):
        _finish_in_place(table_path(out, table), table, cfg, stage, extra)
        return
    staging = Path(table_path(out, f".{table}.incomplete"))
    for leftover in staging.glob(".part-*.tmp"):  # a failed task attempt's unfinished part
        leftover.unlink()
    (staging / "_SUCCESS").touch()
    _finish(staging, Path(table_path(out, table)), table, cfg, stage, extra)


def drop_staged(out: str, table: str) -> None:
    """Forget a table stage_table began (a stage that decided not to publish it)."""
    if storage.is_uri(str(out)):
        storage.delete_tree(table_path(out, table))
    else:
        shutil.rmtree(table_path(out, f".{table}.incomplete"), ignore_errors=True)


def staged(out: str, table: str) -> bool:
    """Whether stage_table's folder for the table is there (not yet published)."""
    if storage.is_uri(str(out)):
        return storage.info(table_path(out, table)) is not None and table_meta(out, table) is None
    return Path(table_path(out, f".{table}.incomplete")).is_dir()


def write_arrow(table, out: str, name: str, cfg: RunConfig, stage: str, extra: dict[str, Any] | None = None) -> str:
    """Write a table the driver holds (a rank–frequency curve, clusters) as DIR/name with pyarrow,
    like write_table: one Parquet file, zstd, moved into place only when complete. No Spark job."""
    import pyarrow.parquet as pq

    folder = stage_table(out, name)
    fs, path = storage.locate(folder)
    pq.write_table(table, f"{path}/part-00000.zstd.parquet", compression="zstd", filesystem=fs)
    finish_table(out, name, cfg, stage, extra)
    return table_path(out, name)


def write_folder(out: str, name: str, build: Callable[[str], Any]) -> str:
    """A folder of plain files the driver writes (the report): build(path) writes it whole at
    DIR/name, which it replaces only once complete; in a generation on a store (unread until
    committed) it is built on the driver's disk, then uploaded."""
    if not storage.is_uri(str(out)):
        build(os.path.join(out, name))
        return table_path(out, name)
    target = table_path(out, name)
    with tempfile.TemporaryDirectory(prefix=f"webwinnow-{name}-") as tmp:
        build(os.path.join(tmp, name))
        storage.delete_tree(target)
        storage.upload_tree(os.path.join(tmp, name), target)
    return target


def _record(table: str, cfg: RunConfig, stage: str, extra: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "stage": stage,
        "table": table,
        "webwinnow": __version__,
        "unicode": UNICODE_VERSION,
        "config": cfg.to_dict(),
        "tag": cfg.tag,
        **(extra or {}),
    }


def _finish(staging: Path, final: Path, table: str, cfg: RunConfig, stage: str, extra: dict[str, Any] | None) -> None:
    record = _record(table, cfg, stage, extra)
    (staging / TABLE_META).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    replace_dir(staging, final)


def _finish_in_place(final: str, table: str, cfg: RunConfig, stage: str, extra: dict[str, Any] | None) -> None:
    record = _record(table, cfg, stage, extra)
    storage.write_bytes(storage.child(final, TABLE_META), (json.dumps(record, indent=2, sort_keys=True) + "\n").encode())


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 RENAME_EXCHANGE); False where unsupported."""
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    if ctypes.get_errno() in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), str(b))


def replace_dir(new: str | Path, final: str | Path) -> None:
    """Put the complete folder `new` in place of `final`: a reader sees the old folder or the new
    one, never a mix and never neither (one atomic exchange where the filesystem supports it);
    the old one is deleted only after the swap."""
    new, final = Path(new), Path(final)
    trash = final.parent / f".{final.name}.old"
    shutil.rmtree(trash, ignore_errors=True)
    if final.exists() and _exchange(new, final):
        shutil.rmtree(new, ignore_errors=True)  # now holds the old folder
        return
    if final.exists():
        os.replace(final, trash)
    os.replace(new, final)
    shutil.rmtree(trash, ignore_errors=True)


def table_meta(out: str | Path, table: str) -> dict[str, Any] | None:
    """The _webwinnow.json of a complete table, None when the table is missing or unreadable."""
    try:
        data = storage.read_bytes(storage.child(str(out), table, TABLE_META))
        record = json.loads(data) if data is not None else None
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def read_table_config(out: str, table: str) -> dict[str, Any]:
    record = table_meta(out, table)
    if record is None:
        raise UserError(f"{table_path(str(out), table)} is missing or incomplete: run the stage that writes it first")
    return record


def stamp_table(out: str | Path, table: str, fields: dict[str, Any]) -> None:
    """Add fields (recipe, reads, stats) to a complete table's _webwinnow.json, atomically.

    Written after the stage returns: a table without its recipe counts as unfinished when a
    run is resumed, so an interruption between the two writes costs only a rerun.
    """
    record = table_meta(out, table) or {"table": table}
    record.update(fields)
    storage.write_bytes(
        storage.child(str(out), table, TABLE_META), (json.dumps(record, indent=2, sort_keys=True, default=str) + "\n").encode()
    )


def table_stats(out: str | Path, table: str) -> dict[str, Any] | None:
    """The statistics its stage recorded beside a complete table, None when there are none."""
    return (table_meta(out, table) or {}).get("stats")


def parquet_files(out: str | Path, table: str) -> list[str]:
    """The Parquet files of a table, sorted (none when it does not exist)."""
    return folder_parquet_files(data_location(out, table))


def folder_parquet_files(where: str) -> list[str]:
    """The Parquet files of a folder, sorted, less the hidden ones (none when it does not exist)."""
    if storage.info(where) is None:
        return []
    return sorted(
        e.name
        for e in storage.walk(where, recursive=False)
        if e.name.endswith(".parquet") and not storage.basename(e.name).startswith((".", "_"))
    )


def read_arrow(out: str | Path, table: str, columns: list[str] | None = None, filters=None):
    """A table read on the driver with pyarrow (no Spark job): the columns given, the rows that
    pass `filters` (pyarrow's DNF filters, e.g. [("doc_id", "in", ids)])."""
    import pyarrow.parquet as pq

    from ..schemas import TABLE_SCHEMAS

    files = parquet_files(out, table)
    if not files:
        schema = TABLE_SCHEMAS[table]
        return schema.empty_table().select(columns) if columns else schema.empty_table()
    fs = storage.locate(files[0])[0]
    return pq.ParquetDataset([storage.locate(f)[1] for f in files], filesystem=fs, filters=filters).read(columns=columns)


def open_parquet(name: str, fh: Any) -> Any:
    """pyarrow's ParquetFile of an open table file; one that is not Parquet (cut short, say) is
    named in the error, as Spark names it, so the user learns which file to make again."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(fh)
    except pa.ArrowInvalid as exc:
        raise pa.ArrowInvalid(f"{name}: {exc}") from exc


def row_count(out: str | Path, table: str) -> int:
    """Rows of a complete table, from its Parquet footers."""
    total = 0
    for f in parquet_files(out, table):
        with storage.open_input(f) as fh:
            total += open_parquet(f, fh).metadata.num_rows
    return total


def _row_groups(out: str | Path, table: str, stats: bool = True):
    """(ParquetFile, row group index, its doc_id statistics or None) over the table's files in order."""
    for name in parquet_files(out, table):
        with storage.open_input(name) as fh:
            pf = open_parquet(name, fh)
            at = pf.schema_arrow.get_field_index("doc_id") if stats else -1
            for i in range(pf.metadata.num_row_groups):
                got = pf.metadata.row_group(i).column(at).statistics if at >= 0 else None
                yield pf, i, (got.min, got.max) if got is not None and got.has_min_max else None


def read_row_groups(out: str | Path, table: str, columns: list[str]) -> Iterator[Any]:
    """The table's columns, one row group (an Arrow table) at a time: for a summary of a table
    that may be larger than the driver's memory."""
    for pf, i, _ in _row_groups(out, table, stats=False):
        yield pf.read_row_group(i, columns=columns)


def smallest_doc_ids(out: str | Path, n: int, table: str = "documents") -> Any:
    """The n smallest doc_ids of the table's ok rows, sorted: read one row group at a time and
    skipped by its statistics once n are held, so the memory is n ids, never the crawl's."""
    import numpy as np
    import pyarrow.compute as pc

    held = np.zeros(0, np.int64)
    for pf, i, bounds in _row_groups(out, table):
        if len(held) >= n and bounds is not None and bounds[0] > held[n - 1]:
            continue
        got = pf.read_row_group(i, columns=["doc_id", "status"])
        ids = got.column("doc_id").filter(pc.equal(got.column("status"), "ok")).to_numpy()
        held = np.sort(np.concatenate([held, ids]))[:n]
    return held


def read_doc_rows(out: str | Path, table: str, doc_ids: Any, columns: list[str]) -> Iterator[Any]:
    """The rows of a table whose doc_id is in doc_ids, as one Arrow table per row group that holds
    any: a row group's other columns are read only when its doc_ids (or their statistics) admit
    one, so a sample of documents costs the row groups it lives in and a row group's memory, where
    a pyarrow dataset filter reads every row group of every column asked for."""
    import numpy as np
    import pyarrow as pa

    from ..core.distinct import distinct

    wanted = distinct(np.asarray(doc_ids, np.int64))
    if not wanted.size:
        return
    for pf, i, bounds in _row_groups(out, table):
        if bounds is not None:
            lo, hi = np.searchsorted(wanted, bounds[0]), np.searchsorted(wanted, bounds[1], side="right")
            if lo == hi:
                continue
        ids = pf.read_row_group(i, columns=["doc_id"]).column(0).to_numpy()
        hit = np.isin(ids, wanted)
        if hit.any():
            yield pf.read_row_group(i, columns=["doc_id", *(c for c in columns if c != "doc_id")]).filter(pa.array(hit))
