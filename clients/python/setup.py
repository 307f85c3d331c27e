"""Build hook: a wheel carries the protocol's .proto file and the stubs generated from it.

The stubs are never committed. A wheel's are generated here, into the build directory, by
`caravanserai_bot/_codegen.py`, loaded by file path (the package is not importable from a build directory,
and importing it would generate into the source tree). An editable install (`make install`) builds nothing
here: its stubs are generated into the checkout by `make install` (infra/scripts/install-extras.sh), or on
first import when missing (`caravanserai_bot/_proto.py`), from the repository's `protos/`.
"""

import importlib.util
import shutil
from pathlib import Path
from types import ModuleType

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
PROTO_ROOT = HERE.parents[1] / "protos"
PROTO = "caravanserai/bot/v1/bot.proto"


def load_codegen() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "caravanserai_bot_codegen", HERE / "caravanserai_bot" / "_codegen.py"
    )
    if spec is None or spec.loader is None:
        raise RuntimeError("cannot load caravanserai_bot/_codegen.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildWithStubs(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return  # the checkout's own stubs serve an editable install (see the module docstring)
        package = Path(self.build_lib) / "caravanserai_bot"
        root = PROTO_ROOT
        if (PROTO_ROOT / PROTO).is_file():  # from a checkout: package the .proto with the stubs
            target = package / "protos" / PROTO
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(PROTO_ROOT / PROTO, target)
            root = package / "protos"
        elif (package / "protos" / PROTO).is_file():  # from an sdist that carries it
            root = package / "protos"
        load_codegen().generate(root, package)


setup(cmdclass={"build_py": BuildWithStubs})
