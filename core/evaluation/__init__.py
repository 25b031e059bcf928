"""The §7 evaluation: simulated users, populations, the runner and its report, the Huffman floor, the Fig-5 plot
(``python -m core.evaluate``; the per-stage engine benchmark is ``python -m benchmarks.engine``).

Import names from their modules (``from core.engine.session import RepairSession``); the
package itself re-exports nothing, so no name shadows a submodule.
"""
