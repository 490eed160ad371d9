"""Where each subpackage of ``trustindex`` lives in a source checkout: the one place that knows the layout.

The repository keeps one folder per room (``schemas/``, ``query/``, ``encoder/``, ...) so that the layout shows the
data flow, and ``pyproject.toml``'s ``[tool.setuptools.package-dir]`` maps each under the one import root
(``trustindex.query`` -> ``query/``).  That table is the layout; everything that needs it reads it from here: the
import shim of a checkout (``trustindex/__init__.py``), the type checker's link tree (``make typecheck``:
``python trustindex/layout.py link-tree DIR``), the import-graph and code-shape tests, and the response identity
test, which lays out an older commit's tree by that commit's own table.

Standard library only: it runs before any subpackage can be imported.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import tomllib
from pathlib import Path

ROOT_PACKAGE = "trustindex"
PYPROJECT = "pyproject.toml"


def package_dirs(pyproject_text: str) -> dict[str, str]:
    """``{"trustindex.query": "query", ...}``: every package the table maps, relative to the checkout's root."""
    table = tomllib.loads(pyproject_text).get("tool", {}).get("setuptools", {}).get("package-dir", {})
    return {name: folder for name, folder in table.items() if name.startswith(ROOT_PACKAGE)}


def rooms(pyproject_text: str) -> dict[str, str]:
    """The top-level rooms: ``{"query": "query", ...}`` (the subpackage's name -> its folder)."""
    return {name.split(".")[1]: folder for name, folder in package_dirs(pyproject_text).items() if name.count(".") == 1}


def checkout_rooms(root: Path) -> dict[str, Path]:
    """The rooms of the checkout at ``root`` as absolute folders."""
    return {room: root / folder for room, folder in rooms((root / PYPROJECT).read_text(encoding="utf-8")).items()}


def link_tree(root: Path, out: Path) -> Path:
    """``out/trustindex/<room>`` -> ``root/<folder>``: the checkout laid out as the installed package is (for mypy,
    which cannot follow an editable install's import hook, and for running an older commit's tree)."""
    pkg = out / ROOT_PACKAGE
    pkg.mkdir(parents=True, exist_ok=True)
    for f in (root / ROOT_PACKAGE).iterdir():
        if f.name != "__pycache__":
            (pkg / f.name).symlink_to(f.resolve())
    for room, folder in checkout_rooms(root).items():
        if folder.is_dir():
            (pkg / room).symlink_to(folder.resolve(), target_is_directory=True)
    return out


class _CheckoutRooms(importlib.abc.MetaPathFinder):
    """Finds ``trustindex.<room>`` in the checkout's folder for it; deeper modules follow the room's ``__path__``."""

    def __init__(self, rooms: dict[str, Path]):
        self.rooms = {f"{ROOT_PACKAGE}.{room}": folder for room, folder in rooms.items()}

    def find_spec(self, fullname, path=None, target=None):
        folder = self.rooms.get(fullname)
        if folder is None or not (folder / "__init__.py").is_file():
            return None
        return importlib.util.spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


def install_checkout_finder(root: Path) -> None:
    """Put the checkout's room finder first on ``sys.meta_path`` (once per process)."""
    if any(isinstance(f, _CheckoutRooms) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _CheckoutRooms(checkout_rooms(root)))


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "link-tree":
        link_tree(Path.cwd(), Path(argv[1]))
        return 0
    if argv == ["rooms"]:
        print(" ".join(checkout_rooms(Path.cwd())))
        return 0
    print("usage: python trustindex/layout.py link-tree DIR | rooms   (run from the checkout's root)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
