"""Stage output folders: Parquet tables written whole, with the resolved config beside them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from . import __version__
from .config import RunConfig
from .unifold import UNICODE_VERSION

CONFIG_FILE = "_webwinnow.json"


def table_path(out: str, table: str) -> str:
    return os.path.join(out, table)


def write_table(df, out: str, table: str, cfg: RunConfig, stage: str, extra: dict[str, Any] | None = None) -> str:
    """Write df as DIR/table, replacing an earlier one only once the new one is complete.

    Spark writes into a hidden sibling folder; the old table is removed and the new one renamed
    into place only after the write succeeded, so a failed run never leaves a mix of old and new
    files, and a reader never sees a half-written table under the real name.
    """
    final = Path(table_path(out, table))
    staging = final.parent / f".{table}.incomplete"
    shutil.rmtree(staging, ignore_errors=True)
    df.write.mode("overwrite").parquet(str(staging))
    record = {
        "stage": stage,
        "table": table,
        "webwinnow": __version__,
        "unicode": UNICODE_VERSION,
        "config": cfg.to_dict(),
        "tag": cfg.tag,
        **(extra or {}),
    }
    (staging / CONFIG_FILE).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    replace_dir(staging, final)
    return str(final)


def replace_dir(new: str | Path, final: str | Path) -> None:
    """Put the complete folder `new` in place of `final` by renames: a reader sees the old folder
    or the new one, never a mix; the old one is deleted only after the swap."""
    new, final = Path(new), Path(final)
    trash = final.parent / f".{final.name}.old"
    shutil.rmtree(trash, ignore_errors=True)
    if final.exists():
        os.replace(final, trash)
    os.replace(new, final)
    shutil.rmtree(trash, ignore_errors=True)


def read_table_config(out: str, table: str) -> dict[str, Any]:
    path = Path(table_path(out, table)) / CONFIG_FILE
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{path.parent} is missing or incomplete: run the stage that writes it first"
        ) from None


def update_stats(out: str, key: str, value: Any) -> None:
    """Set one stage's entry (under "stages") of DIR/report/stats.json, keeping everything else."""
    path = Path(out) / "report" / "stats.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        stats = json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        stats = {}
    stats.setdefault("stages", {})[key] = value
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(stats, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(tmp, path)
