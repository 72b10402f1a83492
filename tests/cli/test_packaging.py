"""The package list in pyproject.toml covers every package, and the example ships in the wheel."""

import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_package_is_listed():
    cfg = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(cfg["packages"])
    found = {
        ".".join(p.parent.relative_to(REPO).parts)
        for top in ("assistant", "policy")
        for p in (REPO / top).rglob("__init__.py")
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert cfg["package-dir"]["assistant.example_workspace"] == "workspace.example"


def test_example_files_are_covered_by_package_data():
    import fnmatch

    patterns = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "assistant.example_workspace"
    ]
    example = REPO / "workspace.example"
    for f in example.rglob("*"):
        if f.is_file() and not {"state", "history"} & set(f.relative_to(example).parts):
            rel = f.relative_to(example).as_posix()
            assert any(fnmatch.fnmatch(rel, pat) for pat in patterns), f"{rel} would be missing from the wheel"


# acceptance (issue 2: packaging), written from the words
def test_packaging_contract():
    import tomllib
    meta = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    proj = meta["project"]
    assert proj["requires-python"].replace(" ", "") == ">=3.11"
    assert "assistant" in proj["scripts"]
    extras = proj["optional-dependencies"]
    assert any("llama" in k for k in extras) and any(k in ("dev", "test", "tests") for k in extras)
    assert (Path(__file__).resolve().parents[2] / ".ci" / "run").is_file()
