"""Stand-in for ansible-test's pip bootstrap script (get-pip.py).

ansible-test creates each sanity virtualenv without pip and installs pip into it with
a get-pip.py it downloads from ci-files.testing.ansible.com and keeps as
~/.ansible/test/cache/get_pip_<version>.py. Where only PyPI is reachable, that
download fails. scripts/sanity.sh then writes this file to that place (with WHEEL
filled in): like get-pip.py it installs pip into the interpreter that runs it, using
a pip wheel downloaded from PyPI. It is called as
    python get_pip_<version>.py [pip options] [--no-setuptools] [--no-wheel] pip==<version>
"""

import os
import sys

WHEEL = "@WHEEL@"

sys.path.insert(0, WHEEL)
from pip._internal.cli.main import main  # noqa: E402  (importable only after the line above)

args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
packages = [a for a in args if not a.startswith("-")]
if all(p.startswith("pip==") for p in packages):
    # Only pip itself is wanted: take it from the wheel next to WHEEL, no index needed.
    args = ["--no-index", "--find-links", os.path.dirname(WHEEL), *args]
sys.exit(main(["install", *args]))
