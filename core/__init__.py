"""PleaSQLarify's algorithm, without any user interface: four packages.

- :mod:`core.engine` — task banks, safe execution, features, clustering, variables, the session;
- :mod:`core.generation` — sampling candidate SQL (Anthropic API or offline variants);
- :mod:`core.evaluation` — simulated users, the §7 evaluation, the Huffman floor, the Fig-5 plot;
- :mod:`core.planpool` — the explicit clarification-question pool and its agents.

Nothing in core/ imports streamlit or study/. The command-line tools are ``python -m core.NAME``
(``python -m core`` lists them).
"""
