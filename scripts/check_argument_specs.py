"""Check that each role's defaults and argument specs name the same variables.

For every roles/<role>/:
- every variable in defaults/main.yml is an option of some entry point in
  meta/argument_specs.yml (so it is documented and type-checked);
- every option of meta/argument_specs.yml is in defaults/main.yml, unless it is
  ``required: true`` (a required option has no default by definition);
- a role with defaults has a meta/argument_specs.yml.
Only top-level names are compared; types and descriptions are ansible-lint's and
ansible-core's business. Exit status 1 when any role differs, 0 otherwise (also with
no roles at all).

Usage: python scripts/check_argument_specs.py [ROLES_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml


class _Loader(yaml.SafeLoader):
    """SafeLoader that accepts Ansible's tags (!unsafe, !vault) as plain values."""


def _any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node):
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)


_Loader.add_multi_constructor("!", _any_tag)


def load(path: Path):
    with path.open(encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_Loader)


def check_role(role: Path) -> list[str]:
    """Return the problems found in one role (empty when it is consistent)."""
    defaults_file = role / "defaults" / "main.yml"
    specs_file = role / "meta" / "argument_specs.yml"
    defaults = load(defaults_file) if defaults_file.is_file() else None
    defaults = defaults or {}
    if not isinstance(defaults, dict):
        return [f"{defaults_file}: not a mapping of variables"]
    if not specs_file.is_file():
        if defaults:
            return [f"{specs_file} is missing; defaults/main.yml has {len(defaults)} variable(s)"]
        return []

    specs = (load(specs_file) or {}).get("argument_specs") or {}
    if not isinstance(specs, dict):
        return [f"{specs_file}: argument_specs is not a mapping of entry points"]
    options: dict[str, bool] = {}  # name -> required in some entry point
    for spec in specs.values():  # every entry point: main, and any others
        for name, option in ((spec or {}).get("options") or {}).items():
            required = bool((option or {}).get("required", False))
            options[name] = options.get(name, False) or required

    problems = []
    for name in sorted(set(defaults) - set(options)):
        problems.append(f"{name}: in defaults/main.yml but not in meta/argument_specs.yml")
    for name in sorted(set(options) - set(defaults)):
        if not options[name]:
            problems.append(f"{name}: in meta/argument_specs.yml but not in defaults/main.yml (and not required)")
    return problems


def main(argv: list[str]) -> int:
    roles_dir = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent / "roles"
    print("\n==== argspecs: roles/*/defaults/main.yml vs roles/*/meta/argument_specs.yml ====", flush=True)
    roles = sorted(p for p in roles_dir.glob("*") if p.is_dir()) if roles_dir.is_dir() else []
    if not roles:
        print(f"no roles in {roles_dir}: nothing to check")
        return 0
    failed = 0
    for role in roles:
        try:
            problems = check_role(role)
        except (yaml.YAMLError, OSError, AttributeError) as exc:
            problems = [f"cannot read: {exc}"]
        if problems:
            failed += 1
            print(f"{role.name}: FAILED")
            for problem in problems:
                print(f"  {problem}")
        else:
            print(f"{role.name}: ok")
    print(f"{len(roles) - failed} role(s) consistent, {failed} with differences")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
