"""Candidate generation: the Anthropic sampler, SQL extraction and dedupe, the pool cache,
the offline variant generator and the ``python -m core.generate`` command.

Public names are re-exported here and imported on first use, so importing the package is cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    "AnthropicSampler": "sampler",
    "Budget": "sampler",
    "DEFAULT_CACHE_DIR": "poolcache",
    "DEFAULT_MODEL": "sampler",
    "Extraction": "extract",
    "FALLBACK_PRICE": "poolcache",
    "FilePoolCache": "poolcache",
    "GeneratedPool": "poolcache",
    "NO_KEY_MESSAGE": "sampler",
    "OFFLINE_MODEL": "generate",
    "PROMPT_VERSION": "sampler",
    "PoolCache": "poolcache",
    "REPO_ROOT": "poolcache",
    "SECOND_WEIGHT": "variants",
    "SEED_WEIGHT": "variants",
    "Sample": "poolcache",
    "SamplerConfig": "sampler",
    "SamplingError": "sampler",
    "SchemaInfo": "variants",
    "StorePoolCache": "poolcache",
    "VARIANTS_VERSION": "generate",
    "VariantPool": "variants",
    "add_column": "variants",
    "branch_filter": "variants",
    "build_prompt": "sampler",
    "comparison": "variants",
    "dedupe": "extract",
    "distinct": "variants",
    "drop_column": "variants",
    "drop_filter": "variants",
    "estimate_cost": "poolcache",
    "extra_join": "variants",
    "extract_sql": "extract",
    "generate_pool": "sampler",
    "generate_variants": "variants",
    "has_api_key": "sampler",
    "join_kind": "variants",
    "normalise_sql": "extract",
    "open_pool_cache": "poolcache",
    "order_by": "variants",
    "pool_key": "poolcache",
    "pool_line": "generate",
    "price_for": "poolcache",
    "question_pool": "generate",
    "question_task": "generate",
    "read_ddl": "variants",
    "regroup": "variants",
    "resolve_api_key": "sampler",
    "schema_from_ddl": "variants",
    "schema_info": "variants",
    "scope": "variants",
    "select_star": "variants",
    "swap_column": "variants",
    "variant_pool": "generate",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import the submodule that defines ``name`` on first access (PEP 562)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
