"""Built-in studies shipped as data (study.yaml, task banks, databases)."""
