"""trustindex: a trust-aware documentation index.

The distribution installs one import package, ``trustindex``. Its subpackages live in the repository's top-level
folders (``schemas/``, ``crawl/``, ``extractors/``, ``ingest/``, ``warehouse/``, ``flows/``, ``query/``,
``cli/``), mapped under this root by ``[tool.setuptools.package-dir]`` in ``pyproject.toml``, so the layout shows
the data flow while nothing but ``trustindex`` lands at the top of site-packages.

Serving needs only the base install (``pip install trustindex``): ``from trustindex.query import Index``.
Building snapshots needs ``pip install "trustindex[build]"``.
"""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"

# Run from a source checkout (its root on sys.path, as pytest and `python -m` from the root do), this folder
# shadows the installed package; its rooms are then found in this checkout's folders, as pyproject.toml's
# package-dir maps them (read by trustindex/layout.py, the one place that knows the layout), so the code that runs
# is the checkout's own (never another checkout's editable install). An installed wheel has no pyproject.toml
# beside its package, so nothing changes there.
_CHECKOUT = Path(__file__).resolve().parent.parent
if (_CHECKOUT / "pyproject.toml").is_file():
    from trustindex.layout import install_checkout_finder

    install_checkout_finder(_CHECKOUT)
