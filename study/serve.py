"""Start the studio: print the researcher password, then ``streamlit run app.py``.

``python -m study.serve [streamlit options, e.g. --server.port 8501]``. Plain
``streamlit run app.py`` works too; it prints the password when the first page is opened.
Throwaway servers for tests and benchmarks are started by tests/harness.py.
"""

from __future__ import annotations

import os
import sys

from core.settings import REPO_ROOT
from study import access


def main(argv: list[str] | None = None) -> int:
    """Announce the password, then replace this process with the Streamlit server."""
    access.announce()
    os.environ[access.ENV_ANNOUNCED] = "1"
    os.chdir(REPO_ROOT)
    args = [sys.executable, "-m", "streamlit", "run", "app.py",
            *(sys.argv[1:] if argv is None else argv)]
    os.execv(sys.executable, args)
    return 0  # pragma: no cover - execv does not return


if __name__ == "__main__":
    raise SystemExit(main())
