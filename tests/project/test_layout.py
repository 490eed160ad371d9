"""One place knows the layout (issue 39 item 6): pyproject.toml's package-dir, read by trustindex/layout.py, is what
the checkout's import shim, the type checker's link tree, the import-graph test and the identity test use."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from trustindex.layout import checkout_rooms, link_tree, package_dirs, rooms

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_every_package_folder_is_installed_and_every_installed_package_is_mapped():
    listed = set(tomllib.loads(PYPROJECT)["tool"]["setuptools"]["packages"])
    mapped = package_dirs(PYPROJECT)
    on_disk = set()
    for room, folder in checkout_rooms(ROOT).items():
        for init in folder.rglob("__init__.py"):
            rel = init.parent.relative_to(folder).parts
            on_disk.add(".".join(("trustindex", room, *rel)))
    # a folder with an __init__.py the list lacks would be missing from the wheel
    assert on_disk == listed - {"trustindex"}
    # every listed package is a mapped room or lies inside one
    assert all(p in mapped or p.rsplit(".", 1)[0] in listed for p in listed)


def test_rooms_are_read_from_the_table_and_a_folder_is_named_as_its_room():
    assert set(rooms(PYPROJECT)) >= {"schemas", "query", "serve", "encoder", "report", "calibration", "runtime"}
    assert all(folder.name == room for room, folder in checkout_rooms(ROOT).items())
    other = '[tool.setuptools.package-dir]\n"trustindex" = "trustindex"\n"trustindex.lib" = "src/lib"\n'
    assert rooms(other) == {"lib": "src/lib"}


def test_the_checkout_resolves_its_rooms_and_nothing_else():
    code = (
        "import trustindex.query.index as q, trustindex.encoder.factory as f\n"
        "print(q.__file__); print(f.__file__)\n"
        "try:\n    import trustindex.tests\nexcept ModuleNotFoundError:\n    print('refused')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.split() == [str(ROOT / "query" / "index.py"), str(ROOT / "encoder" / "factory.py"), "refused"]


def test_the_link_tree_follows_the_trees_own_table(tmp_path):
    tree = tmp_path / "tree"
    (tree / "trustindex").mkdir(parents=True)
    (tree / "trustindex" / "__init__.py").write_text("")
    (tree / "src" / "lib").mkdir(parents=True)
    (tree / "src" / "lib" / "__init__.py").write_text("X = 1\n")
    (tree / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\n"trustindex" = "trustindex"\n"trustindex.lib" = "src/lib"\n'
    )
    out = link_tree(tree, tmp_path / "pkg")
    assert (out / "trustindex" / "lib").resolve() == (tree / "src" / "lib").resolve()
    assert (out / "trustindex" / "__init__.py").resolve() == (tree / "trustindex" / "__init__.py").resolve()
    assert sorted(p.name for p in (out / "trustindex").iterdir()) == ["__init__.py", "lib"]


def test_test_files_are_named_once_across_the_rooms():
    """pytest imports a test file by its base name (the rooms' folders are not packages): two rooms' files of one
    name fail to collect ("import file mismatch"), so a name says what it tests across the whole tree."""
    names: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        names.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert not {n: ps for n, ps in names.items() if len(ps) > 1}
