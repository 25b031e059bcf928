"""Candidate generation: the Anthropic sampler, SQL extraction and dedupe, the pool cache,
the offline variant generator and the ``python -m core.generate`` command.

Public names are re-exported here and imported on first use, so importing the package is cheap.
"""

from __future__ import annotations

from core._lazy import lazy_getattr

_EXPORTS: dict[str, str] = {
    "AnthropicSampler": "sampler",
    "Budget": "sampler",
    "DEFAULT_CACHE_DIR": "poolcache",
    "DEFAULT_MODEL": "sampler",
    "Extraction": "extract",
    "FALLBACK_PRICE": "poolcache",
    "FilePoolCache": "poolcache",
    "GeneratedPool": "poolcache",
    "NO_KEY_MESSAGE": "keys",
    "OFFLINE_MODEL": "generate",
    "PROMPT_VERSION": "sampler",
    "PoolCache": "poolcache",
    "REPAIR_PROMPT_VERSION": "sampler",
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
    "has_api_key": "keys",
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
    "repair_question": "sampler",
    "resolve_api_key": "keys",
    "schema_from_ddl": "variants",
    "schema_info": "variants",
    "scope": "variants",
    "select_star": "variants",
    "swap_column": "variants",
    "variant_pool": "generate",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_getattr(__name__, _EXPORTS)
