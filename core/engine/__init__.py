"""The repair engine: task banks, safe execution, features, similarity, clustering, decision
variables, information gain, strategies, the repair session, layouts and prepared pools.

Import names from their modules (``from core.engine.session import RepairSession``); the
package itself re-exports nothing, so no name shadows a submodule.
"""
