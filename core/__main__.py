"""``python -m core``: list the command-line tools of core/ (each is ``python -m core.NAME``;
``pleasqlarify --help`` lists every tool of the studio)."""

COMMANDS = {
    "prepare": "precompute prepared pools with layouts (python -m core.prepare BANK.jsonl)",
    "evaluate": "the §7 simulated-user evaluation (python -m core.evaluate BANK.jsonl)",
    "generate": "sample candidate pools (python -m core.generate BANK.jsonl --out POOLS.jsonl)",
    "planpool_eval": "PlanPool Table-2 metrics (python -m core.planpool_eval BANK.jsonl)",
}

if __name__ == "__main__":
    print("PleaSQLarify core command-line tools; run one as python -m core.NAME --help:")
    for name, what in COMMANDS.items():
        print(f"  {name:<20} {what}")
