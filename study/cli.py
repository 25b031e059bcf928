"""``pleasqlarify COMMAND …``: one console command for every tool of the studio.

Each subcommand hands its arguments to the tool's own ``main()`` (the same as ``python -m
MODULE``, which keeps working), so ``pleasqlarify evaluate --help`` shows that tool's options.
A :class:`~core.engine.errors.StudioError` ends as one ``error: …`` line with status 2.
Benchmarks are not commands: they live outside the product (``python -m benchmarks.NAME``).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from collections.abc import Sequence

from core._cli import run

# name -> (module whose main(argv) runs it, what it does)
COMMANDS: dict[str, tuple[str, str]] = {
    "serve": ("study.serve", "print the researcher password, then run the app "
                             "(streamlit options follow)"),
    "access": ("study.access", "print a fresh researcher password for a running server"),
    "prepare": ("core.engine.prepare", "precompute prepared pools with layouts for a task bank"),
    "generate": ("study.generate", "sample candidate pools (Anthropic API or --offline-variants; "
                                   "--study-db caches them in the study database)"),
    "evaluate": ("core.evaluation.evaluate", "the §7 evaluation with honest and optimistic "
                                             "simulated users"),
    "planpool-eval": ("core.planpool.evaluate", "PlanPool metrics in the paper's Table-2 layout"),
    "export": ("study.export", "tidy CSV/Parquet, JSON bundle and codebook of a study database"),
    "simulate-demo": ("study.simulate_demo", "simulated participants in the demo database"),
}


def parser() -> argparse.ArgumentParser:
    """The top-level parser: its help lists every command (each has its own ``--help``)."""
    p = argparse.ArgumentParser(
        formatter_class=lambda prog: argparse.HelpFormatter(prog, max_help_position=24, width=100),
        prog="pleasqlarify", description="PleaSQLarify Studio: pragmatic repair for text-to-SQL.",
        epilog="Run 'pleasqlarify COMMAND --help' for the options of one command.")
    sub = p.add_subparsers(title="commands", metavar="COMMAND")
    for name, (_, what) in COMMANDS.items():
        sub.add_parser(name, help=what, add_help=False)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command named first in ``argv`` with the rest of the arguments."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        parser().print_help()
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        close = difflib.get_close_matches(name, COMMANDS, n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        parser().error(f"unknown command '{name}'{hint} (choose from {', '.join(COMMANDS)})")
    tool = importlib.import_module(COMMANDS[name][0])
    return run(lambda: tool.main(rest))


if __name__ == "__main__":
    raise SystemExit(main())
