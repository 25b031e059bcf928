"""The model's repair in the evaluation (``core.evaluate --repair resample | recompose+resample``).

Settings travel to ``--jobs`` workers as a picklable :class:`Resampling`; each process builds
its own sampler from them (:func:`make_resampler`). The key is ``$ANTHROPIC_API_KEY`` and the
endpoint ``$ANTHROPIC_BASE_URL`` (the SDK's own variables); each round's pool is cached under
the question and the decisions stated in the prompt, so a second run sends no request.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from core.engine.repair import RESAMPLE_N, Resampler, resample


@dataclass(frozen=True)
class Resampling:
    """How the model is asked: which model, samples a round, the pool cache's folder (None:
    ``logs/pool-cache/``, the workspace's)."""

    model: str
    n: int = RESAMPLE_N
    cache_dir: str | None = None

    def label(self) -> str:
        return f"{self.model}, {self.n} samples a round"


def make_resampler(spec: Resampling) -> Resampler:
    """The resampling step a simulated session calls after a rejection (the workspace's own
    :func:`core.engine.repair.resample`, with a pool cache)."""
    from core.generation.poolcache import FilePoolCache
    from core.generation.sampler import AnthropicSampler, SamplerConfig

    sampler = AnthropicSampler(SamplerConfig(model=spec.model), random_state=0)
    cache = FilePoolCache(spec.cache_dir)
    return lambda session: resample(session, sampler, cache=cache, n=spec.n)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The command's ``--resample-*`` options."""
    parser.add_argument("--resample-model", default=None,
                        help="model resampling asks (default: the sampler's default model)")
    parser.add_argument("--resample-n", type=int, default=RESAMPLE_N,
                        help="samples per resampling round")
    parser.add_argument("--resample-cache", default=None,
                        help="folder of resampled pools (default logs/pool-cache/): a second "
                        "run of the same evaluation sends no request")


def from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Resampling | None:
    """The settings ``--repair`` asks for (None when it does not resample); a missing key or a
    bad count is one clear CLI error."""
    if "resample" not in args.repair:
        return None
    from core.generation.sampler import DEFAULT_MODEL, has_api_key

    if not has_api_key(None):
        parser.error(f"--repair {args.repair} asks the model for new candidates after each "
                     "rejection: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another "
                     "endpoint), or use --repair recompose, which needs no key")
    if args.resample_n < 1:
        parser.error(f"--resample-n must be at least 1, not {args.resample_n}")
    return Resampling(args.resample_model or DEFAULT_MODEL, args.resample_n,
                      args.resample_cache)


__all__ = ["Resampler", "Resampling", "add_arguments", "from_args", "make_resampler"]
