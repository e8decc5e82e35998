"""The package is whole (DESIGN section 17): the wheel, installed in a fresh venv, imports every module."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "layers" / "core" / "toolfront"
# What the build reads; copied so that setuptools' build/ and egg-info stay out of the work tree.
BUILD_INPUTS = ("pyproject.toml", "README.md", "layers/core/toolfront", "toolfront_dev")


def toolfront_modules() -> list[str]:
    """Every module of the source tree, as a dotted name."""
    names = []
    for path in sorted(SOURCE.rglob("*.py")):
        parts = ["toolfront", *path.relative_to(SOURCE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        names.append(".".join(parts))
    return names


def can_build_offline() -> bool:
    """Whether this interpreter's setuptools writes wheels by itself (bdist_wheel is built in from 70.1)."""
    try:
        from setuptools.command import bdist_wheel  # noqa: F401
    except ImportError:
        try:
            import wheel  # noqa: F401
        except ImportError:
            return False
    return True


def build_wheel(tmp_path: Path) -> Path:
    tree = tmp_path / "src"
    for name in BUILD_INPUTS:
        source, target = ROOT / name, tree / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    # Offline when this venv's setuptools can build; otherwise pip fetches pyproject's build backend.
    isolation = ["--no-build-isolation"] if can_build_offline() else []
    dist = tmp_path / "dist"
    command = [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", *isolation, "-w", str(dist)]
    subprocess.run([*command, str(tree)], check=True, capture_output=True, timeout=300)
    (wheel,) = dist.glob("toolfront-*.whl")
    return wheel


def test_wheel_installed_in_a_fresh_venv_imports_every_module(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    python = venv / "bin" / "python"
    install = [str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)]
    subprocess.run(install, check=True, capture_output=True, timeout=120)
    # The runtime dependencies come from this venv's site-packages, appended after the fresh venv's own:
    # a path line in a .pth file runs none of that directory's .pth files, so the editable install of
    # toolfront there stays inactive and only the wheel's copy can be imported.
    fresh_site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (fresh_site / "zz_runtime_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    modules = toolfront_modules()
    script = tmp_path / "import_all.py"
    script.write_text(
        "import importlib, sys\n"
        "failed = []\n"
        f"for name in {modules!r}:\n"
        "    try:\n"
        "        module = importlib.import_module(name)\n"
        f"        assert module.__file__.startswith({str(fresh_site)!r}), module.__file__\n"
        "    except Exception as exc:\n"
        "        failed.append(f'{name}: {exc!r}')\n"
        "print('\\n'.join(failed))\n"
        "sys.exit(1 if failed else 0)\n"
    )
    # -I: neither the working directory nor PYTHONPATH may supply a module the wheel lacks.
    command = [str(python), "-I", str(script)]
    result = subprocess.run(command, check=False, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode == 0, f"modules missing from the wheel:\n{result.stdout}{result.stderr}"
    assert len(modules) > 50
