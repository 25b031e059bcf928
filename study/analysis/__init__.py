"""Analysis of study traces (§10 of the paper): pure functions over events, answers and codes."""
