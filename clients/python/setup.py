"""Build hook: copy the protocol's .proto files into the package and generate the stubs into the wheel.

The stubs are generated at build time (never committed); an editable install generates them on first import
from the repository's `protos/` instead (see `caravanserai_bot/_proto.py`).
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PROTO_ROOT = HERE.parents[1] / "protos"
PROTO = "caravanserai/bot/v1/bot.proto"


class BuildWithStubs(build_py):
    def run(self) -> None:
        super().run()
        package = Path(self.build_lib) / "caravanserai_bot"
        source = PROTO_ROOT / PROTO
        if source.is_file():
            target = package / "protos" / PROTO
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        import sys

        sys.path.insert(0, str(Path(self.build_lib)))
        from caravanserai_bot._proto import generate

        generate(package / "protos" if (package / "protos" / PROTO).is_file() else PROTO_ROOT, package)


setup(cmdclass={"build_py": BuildWithStubs})
