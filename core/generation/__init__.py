"""Candidate generation: the Anthropic sampler, SQL extraction and dedupe, the pool cache,
the offline variant generator and the ``python -m core.generate`` command.

Import names from their modules (``from core.engine.session import RepairSession``); the
package itself re-exports nothing, so no name shadows a submodule.
"""
