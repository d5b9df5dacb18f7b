"""The `webwinnow` command: check everything that can be checked, then run stages on one Spark session.

    webwinnow run INPUT... --out DIR [--k 50] [--w 100 | --t T] [--standard] [--conf FILE]
    webwinnow extract INPUT... --out DIR        (stage 1 alone)
    webwinnow fingerprint --out DIR             (stage 2 alone, on DIR/documents)
    webwinnow hash_freq|candidates|passages|clusters|report --out DIR   (one later stage alone)
    webwinnow sample OUT_DIR                    (the project's own sample crawl)

Exit status: 0 done; 2 a usage error or a refusal (nothing was changed); 3 too many input
files failed (nothing published); 4 the environment failed (disk full, a corrupt table file);
5 Spark died under the command (its JVM or a Python worker was killed or crashed: OUT
unchanged, --resume continues); 130 interrupted (OUT unchanged). Anything else is a bug and keeps its traceback. `spark-submit jobs/submit.py STAGE ...` takes the same arguments as `webwinnow STAGE ...`.
"""

from __future__ import annotations

import argparse
import gc
import sys

from ..errors import (
    EnvironmentFailure,
    TooManyFailures,
    UserError,
    environment_failure,
    exception_text,
    interrupted_by,
    jvm_ending,
    spark_died,
)
from ..stages import CHECK_STAGES, RUN_STAGES, StageCheck, stage
from ..stages._session import JVM_EXIT_WAIT, jvm_exit_code
from .console import Console
from .options import parse, resolve_config
from .runner import Plan, Request, config_for_check
from .runner import run as run_stages

#: Commands that were renamed: a one-line error names the new one (0.2.0 called the candidates
#: stage 'pairs', the name of the table the passages stage writes).
RENAMED = {"pairs": ("candidates", "it writes candidate_pairs and pair_seeds; the pairs table is the passages stage's")}


def request_of(args: argparse.Namespace) -> Request:
    """The runner's request for a parsed command line (run, check, or one stage)."""
    if args.command == "run":
        stages = tuple(n for n in RUN_STAGES if n != "dedup" or args.dedup)
    elif args.command == "check":
        stages = CHECK_STAGES
    else:
        stages = (args.command,)
    return Request(
        command=args.command,
        out=args.out,
        stages=stages,
        inputs=tuple(getattr(args, "inputs", None) or ()),
        prefix=getattr(args, "prefix", None),
        limit=getattr(args, "limit", None),
        sample=getattr(args, "sample", None),
        conf=tuple(args.conf),
        master=args.master,
        resume=getattr(args, "resume", False),
        force=getattr(args, "force", False),
        downstream=getattr(args, "downstream", False),
        exclude=tuple(getattr(args, "exclude", None) or ()),
        index=getattr(args, "index", None) or "",
    )


def _refuse_options(args: argparse.Namespace) -> None:
    """Options of a stage the command does not run are refused, not ignored."""
    if args.command == "run" and not args.dedup:
        given = [
            name
            for name, on in (
                ("--strip-template", args.strip_template),
                ("--min-passage", args.min_passage is not None),
                ("--keep-near-duplicates", args.keep_near_duplicates),
            )
            if on
        ]
        if given:
            raise UserError(f"{', '.join(given)}: options of the dedup stage; add --dedup to run it")
    if args.command == "check" and not args.index:
        raise UserError(
            "check needs --index IDX: the index to check the new documents against "
            "(build one with 'webwinnow index INPUT... --out IDX')"
        )


# -- the command -----------------------------------------------------------------------------------


def main(argv: list[str] | None = None, *, capture: bool = False) -> int:
    """Run the command line argv; returns the exit status. capture: send the process's stdout and
    stderr (the JVM's, the workers') to OUT/run.log; only when webwinnow is the whole process."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in RENAMED:
        new, why = RENAMED[argv[0]]
        print(
            f"webwinnow: error: the stage '{argv[0]}' is now called '{new}' ({why}): "
            f"webwinnow {new} {' '.join(argv[1:])}".rstrip(),
            file=sys.stderr,
        )
        return 2
    args = parse(argv)
    if args.command == "index":
        from .index import command as index_command

        talk = Console(quiet=args.quiet, verbose=args.verbose)
        try:
            return index_command(args, talk)
        finally:
            talk.close()
    if args.command == "show":
        from .show import command as show

        return show(args)
    if args.command == "paper-tables":
        from ..explore.paper import command

        return command(args)
    if args.command == "sample":
        from ..sample import clear_old_sample, sample_folder, write_sample

        try:
            folder = sample_folder(args.out)
            clear_old_sample(folder)
            info = write_sample(str(folder), pages=args.pages, seed=args.seed, site_tag=args.site_tag)
        except ValueError as exc:
            print(f"webwinnow: error: {exc}", file=sys.stderr)
            return 2
        print(
            f"webwinnow: sample crawl: {len(info['warc_files'])} WARC files, {info['html_pages']} HTML pages, "
            f"{info['planted_copies']} planted copies in {folder}"
        )
        return 0
    console = Console(quiet=args.quiet, verbose=args.verbose)
    current: list[Plan] = []  # the plan, once made: what an interrupt message names
    try:
        try:
            return _command(args, console, capture, current)
        except Exception as exc:
            if not interrupted_by(exc):
                raise
            raise KeyboardInterrupt from exc
    except KeyboardInterrupt:
        # Ctrl-C reaches the Python workers too, and cleanup calls into an interrupted JVM can
        # fail on the way out: whichever error surfaces first, the run was interrupted.
        plan = current[0] if current else None
        if plan is None or not plan.fresh:
            where = f"{plan.final}: finished tables were kept, the interrupted one is unchanged" if plan else "nothing changed"
            console.error(f"interrupted; {where}")
        else:
            console.error(f"interrupted; {plan.final} unchanged; rerun with --resume to continue")
        return 130
    finally:
        console.close()


def _command(args, console: Console, capture: bool, current: list) -> int:
    plan = None
    try:
        _refuse_options(args)
        try:
            cfg = resolve_config(args)
            if args.command == "check":
                cfg = config_for_check(cfg, args.index)
        except ValueError as exc:  # the config's own checks: a bad value given by the user
            raise UserError(str(exc)) from None
        request = request_of(args)
        for name in request.stages[1:]:  # what the options alone refuse, before the inputs are looked at
            stage(name).check(StageCheck(cfg, request.out, {}, fresh=True, first=False, index=request.index))
        plan = Plan(request, cfg)
        current.append(plan)
        plan.validate()
        run_stages(plan, console, capture=capture)
        return 0
    except TooManyFailures as exc:
        assert plan is not None  # only the extract stage raises it
        console.error(f"run failed: {exc}")
        console.error(f"the ledger and log of this run are in {plan.folder.unfinished}; {plan.final} was not changed")
        return exc.exit_code
    except UserError as exc:
        console.error(f"error: {exc}")
        return exc.exit_code
    except Exception as exc:
        if interrupted_by(exc):
            raise
        failure = environment_failure(exc, str(plan.final) if plan else "the output")
        died = spark_died(exc, jvm_exit_code(JVM_EXIT_WAIT if jvm_ending(exc) else 0.0)) if failure is None else None
        if died is not None:
            console.error(f"error: {_died_message(died, plan)}")
            return died.exit_code
        if failure is None:
            # a bug: the traceback goes to the log (the terminal may not get it: capture), one line here
            where = f"; the traceback is in {plan.folder.log_location()}" if plan is not None else ""
            first = (exception_text(exc).strip().splitlines() or [""])[0][:300]
            console.error(f"internal error: {type(exc).__name__}: {first}{where}; please report it")
            raise
        console.error(f"error: {failure.message}")
        if failure.kind == "disk_full" and plan is not None:
            kept = plan.folder.after_disk_full(plan.fresh)
            if kept:
                console.error(f"removed the unfinished run's tables to free the space; kept {kept} in {plan.folder.unfinished}")
        return failure.exit_code


def _died_message(died: EnvironmentFailure, plan: Plan | None) -> str:
    """One line: what died, in which stage, that the run is as it was, where the log is and
    how to go on."""
    what = died.message
    if plan is None:
        return f"{what}; nothing was changed" + (f"; {died.remedy}" if died.remedy else "")
    during = f" during the {plan.running} stage" if plan.running else ""
    log = plan.folder.log_location()
    if plan.fresh:
        again = "rerun the same command with --resume to continue from the finished stages"
        where = f"{plan.final} is unchanged; the finished tables and the log are in {plan.folder.unfinished} ({log})"
    else:
        again = "rerun the command"
        where = f"{plan.final} keeps its tables (the stage's own is unchanged); the log is {log}"
    if died.remedy:
        return f"{what}{during}; {where}; {died.remedy}, then {again}"
    return f"{what}{during}; {where}; {again} (with less work per task or more memory if it happens again)"


def entry() -> None:
    """The `webwinnow` console script: webwinnow owns the process, so it records all of its output
    and takes its memory in small pages (stages._daemon.no_huge_pages; the JVM it starts asks for
    huge pages only when told to), keeping what it frees for reuse (stages._daemon.keep_freed_memory)."""
    from ..stages._daemon import keep_freed_memory, no_huge_pages

    no_huge_pages()
    keep_freed_memory()
    code = main(capture=True)
    # The interpreter's exit collects every object the run left (0.1-0.2 s on the docs corpus,
    # most of what a command took after its last line): they are freed with the process anyway.
    gc.freeze()
    raise SystemExit(code)


if __name__ == "__main__":
    entry()
