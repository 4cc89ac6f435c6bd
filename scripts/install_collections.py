"""Install the Ansible collections this project needs into .collections/ without Galaxy.

The PyPI package ``ansible`` (the community bundle) ships the collections inside its
wheel. This downloads that wheel once into a cache directory, extracts only the
requested collections (plus the collections they depend on, from their MANIFEST.json)
into ``<dest>/ansible_collections/``, checks their versions against
collections/requirements.yml, and links ``ansible_collections/fabric/infiniband`` to the
checkout, so that this collection is used from the working tree.

Run with the virtualenv's Python (it needs PyYAML, which ansible-core brings):
    python scripts/install_collections.py --bundle ansible==14.5.0 --cache ~/.cache/fabric-infiniband \
        --requirements collections/requirements.yml --extra containers.podman --dest .collections
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
SELF = ("fabric", "infiniband")


def read_requirements(path: Path) -> dict[str, str]:
    """Return {name: version range} from an ansible-galaxy requirements file."""
    data = yaml.safe_load(path.read_text()) or {}
    result = {}
    for entry in data.get("collections") or []:
        if isinstance(entry, str):
            result[entry] = "*"
        else:
            result[entry["name"]] = str(entry.get("version", "*"))
    return result


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text.split("-")[0].split("+")[0])[:3])


def version_matches(version: str, spec: str) -> bool:
    """Check a version against a galaxy-style range such as '>=2.2.0,<3.0.0' or '*'."""
    if spec in ("*", ""):
        return True
    have = _version_tuple(version)
    for clause in spec.split(","):
        match = re.fullmatch(r"\s*(>=|<=|!=|==|>|<)?\s*([0-9][^\s]*)\s*", clause)
        if not match:
            raise ValueError(f"cannot read version range {spec!r}")
        op, want = match.group(1) or "==", _version_tuple(match.group(2))
        ok = {
            ">=": have >= want,
            "<=": have <= want,
            ">": have > want,
            "<": have < want,
            "==": have == want,
            "!=": have != want,
        }[op]
        if not ok:
            return False
    return True


def wheel_path(bundle: str, cache: Path) -> Path:
    """Return the bundle's wheel in the cache, downloading it from PyPI if needed."""
    name, _sep, version = bundle.partition("==")
    if not version:
        raise SystemExit(f"--bundle must be pinned as name==version, got {bundle!r}")
    wheel = cache / f"{name}-{version}-py3-none-any.whl"
    if wheel.is_file() and zipfile.is_zipfile(wheel):
        return wheel
    cache.mkdir(parents=True, exist_ok=True)
    print(f"downloading {bundle} from PyPI into {cache}", flush=True)
    with tempfile.TemporaryDirectory(dir=cache) as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--dest", tmp, bundle]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
        got = list(Path(tmp).glob("*.whl"))
        if proc.returncode != 0 or len(got) != 1:
            raise SystemExit(f"pip download {bundle} failed (rc={proc.returncode}):\n{proc.stdout[-3000:]}")
        os.replace(got[0], wheel)
    return wheel


def manifest(zf: zipfile.ZipFile, fqcn: str) -> dict:
    ns, name = fqcn.split(".", 1)
    try:
        return json.loads(zf.read(f"ansible_collections/{ns}/{name}/MANIFEST.json"))["collection_info"]
    except KeyError:
        raise SystemExit(f"collection {fqcn} is not in {zf.filename}") from None


def closure(zf: zipfile.ZipFile, wanted: list[str]) -> dict[str, dict]:
    """The wanted collections and, transitively, their dependencies found in the wheel."""
    infos: dict[str, dict] = {}
    todo = list(wanted)
    while todo:
        fqcn = todo.pop()
        if fqcn in infos or fqcn == ".".join(SELF):
            continue
        infos[fqcn] = manifest(zf, fqcn)
        todo.extend(infos[fqcn].get("dependencies") or {})
    return infos


def extract(zf: zipfile.ZipFile, infos: dict[str, dict], dest: Path) -> None:
    """Replace each collection directory under dest/ansible_collections with the wheel's copy."""
    root = dest / "ansible_collections"
    root.mkdir(parents=True, exist_ok=True)
    prefixes = {fqcn: "ansible_collections/{}/{}/".format(*fqcn.split(".", 1)) for fqcn in infos}
    members = {fqcn: [] for fqcn in infos}
    for member in zf.infolist():
        for fqcn, prefix in prefixes.items():
            if member.filename.startswith(prefix):
                members[fqcn].append(member)
                break
    with tempfile.TemporaryDirectory(dir=dest, prefix=".extract-") as tmp:
        for fqcn, items in members.items():
            zf.extractall(tmp, members=items)
            ns, name = fqcn.split(".", 1)
            target = root / ns / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_symlink() or target.is_file():
                target.unlink()
            elif target.exists():
                shutil.rmtree(target)
            os.replace(Path(tmp) / "ansible_collections" / ns / name, target)


def link_self(dest: Path) -> None:
    """ansible_collections/fabric/infiniband -> the checkout (relative link)."""
    link = dest / "ansible_collections" / SELF[0] / SELF[1]
    link.parent.mkdir(parents=True, exist_ok=True)
    relative = os.path.relpath(REPO_ROOT, link.parent)
    if link.is_symlink():
        if os.readlink(link) == relative:
            return
        link.unlink()
    elif link.exists():
        raise SystemExit(
            f"{link} is a directory, not a link to this checkout: remove it, so that fabric.infiniband resolves to the working tree"
        )
    link.symlink_to(relative, target_is_directory=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundle", required=True, help="pinned PyPI package holding the collections, e.g. ansible==14.5.0")
    parser.add_argument("--cache", type=Path, required=True, help="directory for the downloaded wheel")
    parser.add_argument("--requirements", type=Path, required=True, help="collections/requirements.yml")
    parser.add_argument("--extra", action="append", default=[], help="further collection needed by the tests (repeatable)")
    parser.add_argument("--dest", type=Path, required=True, help="collections path (.collections)")
    args = parser.parse_args()

    ranges = read_requirements(args.requirements)
    wanted = [name for name in ranges if name != ".".join(SELF)] + args.extra
    wheel = wheel_path(args.bundle, args.cache.expanduser())
    with zipfile.ZipFile(wheel) as zf:
        infos = closure(zf, wanted)
        bad = [
            f"{fqcn} {infos[fqcn]['version']} is outside {spec}"
            for fqcn, spec in ranges.items()
            if fqcn in infos and not version_matches(infos[fqcn]["version"], spec)
        ]
        if bad:
            raise SystemExit(f"{args.bundle} does not match {args.requirements}:\n  " + "\n  ".join(bad))
        args.dest.mkdir(parents=True, exist_ok=True)
        extract(zf, infos, args.dest)
    link_self(args.dest)
    for fqcn in sorted(infos):
        print(f"  {fqcn} {infos[fqcn]['version']}")
    print(f"  {'.'.join(SELF)} -> {REPO_ROOT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
