"""Reading the deployment files as an operator's tools would: infra/compose.yaml (YAML with its anchors and
merge keys, Compose's `${VAR}` interpolation), infra/Procfile (honcho's `name: command` lines), the
Dockerfile's ENV, and the environment variables the project's code reads (found in its source, so a
variable added to the code or to a file is picked up without a list kept by hand).

Test helper only: it reads files and imports nothing of the project but its configuration classes; it
starts no process (`tests/infra/launch.py` does).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
INFRA = ROOT / "infra"
COMPOSE = INFRA / "compose.yaml"
PROCFILE = INFRA / "Procfile"
DOCKERFILE = INFRA / "Dockerfile"
HAPROXY_CFG = INFRA / "haproxy.cfg"
HAPROXY_WEB_CFG = INFRA / "haproxy-web.cfg"
COMPOSE_SCHEMA = INFRA / "schemas" / "compose-spec.json"
CODE_PACKAGES = ("engine_service", "workers", "ladder")

# Read by third-party programs, not by the project's code (Python itself, Django's entry points).
THIRD_PARTY_ENV = {
    "DJANGO_SETTINGS_MODULE",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONUNBUFFERED",
    "PIP_NO_CACHE_DIR",
}
_ENV_NAME = re.compile(r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$")
_ENV_HELPERS = {"getenv", "env_bool", "env_list"}  # called with a variable's name, without the mapping
_SHELL_ASSIGNMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=((?:\$\([^)]*\)|[^\s$]|\$(?!\())*)\s+")
_INTERPOLATION = re.compile(
    r"\$(?:(\$)|\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))"
)


class DeploymentFileError(ValueError):
    """A deployment file that cannot be read as its tool would read it; the message says where."""


# --- files ---------------------------------------------------------------------------------------------------
def load_compose(path: Path = COMPOSE) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("services"), dict):
        raise DeploymentFileError(f"{path}: no services mapping")
    return data


def load_procfile(path: Path = PROCFILE) -> dict[str, str]:
    """Process name -> command line, as honcho and foreman read it (comments and blank lines skipped)."""
    entries: dict[str, str] = {}
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, command = line.partition(":")
        if not sep or not re.fullmatch(r"[A-Za-z0-9_-]+", name) or not command.strip():
            raise DeploymentFileError(f"{path}:{number}: not a `name: command` line: {line!r}")
        if name in entries:
            raise DeploymentFileError(f"{path}:{number}: process {name!r} defined twice")
        entries[name] = command.strip()
    return entries


def dockerfile_env(path: Path = DOCKERFILE) -> dict[str, str]:
    """The image's ENV (the `ENV A=1 B=2` form, continuation lines joined)."""
    text = path.read_text().replace("\\\n", " ")
    env: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            for pair in shlex.split(line[4:]):
                name, sep, value = pair.partition("=")
                if not sep:
                    raise DeploymentFileError(f"{path}: ENV {pair!r} is not NAME=value")
                env[name] = value
    return env


def interpolate(value: str, env: Mapping[str, str]) -> str:
    """Compose's interpolation: `$$`, `$VAR`, `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?error}`
    and `${VAR?error}`; a required variable that is missing raises with Compose's message."""

    def one(m: re.Match[str]) -> str:
        if m.group(1):
            return "$"
        name = m.group(2) or m.group(5)
        op, arg = m.group(3), m.group(4) or ""
        present = name in env and (env[name] != "" or not (op or "").startswith(":"))
        if present:
            return env[name]
        if op in (":?", "?"):
            raise DeploymentFileError(f"required variable {name} is missing a value: {arg}")
        return arg if op in (":-", "-") else ""

    return _INTERPOLATION.sub(one, value)


# --- services and commands -----------------------------------------------------------------------------------
@dataclass
class Process:
    """One process a deployment file starts: its argv (shell wrappers and `env` assignments taken apart),
    the environment the file gives it, and where it comes from."""

    name: str
    argv: list[str]
    env: dict[str, str]
    source: str
    image: str | None = None
    shell: str | None = None  # the script of an `sh -c` wrapper, as written
    ports: list[int] = field(default_factory=list)  # container ports published
    depends_on: dict[str, str] = field(default_factory=dict)  # process name -> Compose condition
    stop_grace: float = 10.0

    @property
    def program(self) -> str:
        return Path(self.argv[0]).name if self.argv else ""

    @property
    def role(self) -> str:
        return command_role(self.argv)


def split_command(argv: list[str]) -> tuple[list[str], dict[str, str], str | None]:
    """(the program's argv, `NAME=value` assignments before it, the `sh -c` script if wrapped)."""
    assigned: dict[str, str] = {}
    script = None
    if len(argv) >= 3 and Path(argv[0]).name in ("sh", "bash") and argv[1] == "-c":
        script = argv[2]
        rest = script.strip()
        while m := _SHELL_ASSIGNMENT.match(rest):  # values may hold `$(...)`, which shlex cannot split
            assigned[m.group(1)] = m.group(2)
            rest = rest[m.end() :]
        argv = shlex.split(rest)
    if argv and Path(argv[0]).name == "env":
        argv = argv[1:]
    while argv and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", argv[0]):
        name, _, value = argv[0].partition("=")
        assigned[name] = value
        argv = argv[1:]
    if argv and argv[0] == "exec":
        argv = argv[1:]
    return argv, assigned, script


def command_role(argv: list[str]) -> str:
    """What a command runs: gateway, web, worker, beat, flower, migrate, lb (HAProxy with infra/haproxy.cfg),
    web-proxy (HAProxy with infra/haproxy-web.cfg), redis, postgres, `module` (any other `python -m` of the
    project's: it prints a READY line when up, as the gateway does), or ''."""
    program = Path(argv[0]).name if argv else ""
    if "engine_service.gateway.server" in argv:
        return "gateway"
    if program == "gunicorn":
        return "web"
    if program == "celery":
        for role in ("worker", "beat", "flower"):
            if role in argv:
                return role
    if "manage.py" in (Path(a).name for a in argv) and "migrate" in argv:
        return "migrate"
    if program.startswith("python") and "-m" in argv[:-1]:
        return "module"
    if program == "haproxy":  # the bots' balancer or the web's buffering proxy, by the file it reads
        config = argv[argv.index("-f") + 1] if "-f" in argv[:-1] else ""
        return "web-proxy" if Path(config).name == HAPROXY_WEB_CFG.name else "lb"
    return {"redis-server": "redis", "postgres": "postgres"}.get(program, "")


# Images whose default command the compose file relies on (it gives them none).
IMAGE_COMMANDS = {"haproxy": ["haproxy", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]}


def _duration(raw: str | None) -> float:
    if not raw:
        return 10.0  # Compose's default stop grace period
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", raw):
        total += float(number) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600}[unit]
    return total


def depends_on(service: dict[str, Any]) -> dict[str, str]:
    """A service's dependencies -> their condition (the short list form means `service_started`)."""
    depends = service.get("depends_on") or {}
    if isinstance(depends, list):
        return dict.fromkeys(depends, "service_started")
    return {name: rule.get("condition", "service_started") for name, rule in depends.items()}


def compose_processes(data: dict[str, Any], host_env: Mapping[str, str]) -> list[Process]:
    """Every compose service as a process: its command (or its image's), the Dockerfile's ENV under its
    environment when it is built from infra/Dockerfile, values interpolated from `host_env`."""
    image_env = dockerfile_env()
    found = []
    for name, service in data["services"].items():
        command = service.get("command")
        image = service.get("image")
        if command is None:
            base = (image or "").split(":")[0].split("/")[-1]
            if base not in IMAGE_COMMANDS:
                raise DeploymentFileError(f"service {name}: no command and no known default for {image!r}")
            command = IMAGE_COMMANDS[base]
        if isinstance(command, str):
            command = shlex.split(command)
        raw_env = service.get("environment") or {}
        if isinstance(raw_env, list):
            raw_env = dict(item.partition("=")[::2] for item in raw_env)
        env = {**(image_env if "build" in service else {})}
        env.update({k: interpolate(str(v), host_env) for k, v in raw_env.items()})
        argv, assigned, script = split_command([interpolate(str(a), host_env) for a in command])
        env.update(assigned)
        depends = depends_on(service)
        published = [int(str(p).split(":")[-1].split("/")[0]) for p in service.get("ports") or []]
        found.append(
            Process(
                name, argv, env, f"compose service {name}", image=image, shell=script, ports=published,
                depends_on=depends, stop_grace=_duration(service.get("stop_grace_period")),
            )
        )  # fmt: skip
    return found


def procfile_processes(entries: Mapping[str, str]) -> list[Process]:
    found = []
    for name, line in entries.items():
        argv, assigned, _ = split_command(shlex.split(line))
        found.append(Process(name, argv, assigned, f"Procfile {name}"))
    return found


# --- what the code reads -------------------------------------------------------------------------------------
def _is_env(node: ast.expr) -> bool:
    """`env`, `environ`, `os.environ` (the names the project gives the mapping it reads)."""
    if isinstance(node, ast.Name):
        return node.id in ("env", "environ")
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def _env_reads(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        names: list[ast.expr] = []
        if isinstance(node, ast.Subscript) and _is_env(node.value):
            names = [node.slice]
        elif isinstance(node, ast.Call):
            func = node.func
            callee = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            on_env = isinstance(func, ast.Attribute) and _is_env(func.value)
            helper = callee in _ENV_HELPERS or callee.startswith("env_")  # settings_env's readers
            if on_env or helper or any(_is_env(a) for a in node.args):
                names = list(node.args)
        for arg in names:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _ENV_NAME.match(arg.value):
                yield arg.value


@functools.cache  # the source does not change while the suite runs
def code_env_names(packages: tuple[str, ...] = CODE_PACKAGES) -> frozenset[str]:
    """Every environment variable the project's code reads (`env.get("X")`, `os.environ["X"]`,
    `_int(env, "X", ...)`, `env_bool("X")`...), from its source."""
    names: set[str] = set()
    for package in packages:
        for path in (ROOT / package).rglob("*.py"):
            if "_generated" in path.parts or "migrations" in path.parts:
                continue
            names.update(_env_reads(ast.parse(path.read_text(), filename=str(path))))
    return frozenset(names)


def haproxy_env_names(path: Path = HAPROXY_CFG) -> set[str]:
    """The variables an HAProxy file reads: `${NAME}`, `${NAME-default}` and `.if defined(NAME)`."""
    text = path.read_text()
    used = set(re.findall(r"\$\{([A-Z0-9_]+)(?:-[^}]*)?\}", text))
    return used | set(re.findall(r"defined\(([A-Z0-9_]+)\)", text))


def haproxy_config(p: Process) -> Path:
    """The HAProxy file a process of role lb or web-proxy reads."""
    return HAPROXY_WEB_CFG if p.role == "web-proxy" else HAPROXY_CFG


# --- addresses -----------------------------------------------------------------------------------------------
def host_port(value: str) -> tuple[str, int] | None:
    """`host:port` (host may be empty or an IP) -> (host, port); anything else -> None."""
    m = re.fullmatch(r"\[?([A-Za-z0-9_.\-:$()' |]*?)\]?:(\d{1,5})", value.strip())
    return (m.group(1), int(m.group(2))) if m else None


@functools.cache
def gateway_address_variables() -> dict[str, str]:  # cached: callers only read it
    """The gateway's address variables -> the GatewayConfig field each sets, found by setting each
    CARAVANSERAI_* variable the code reads to an address and seeing which field takes it."""
    from engine_service.gateway.config import GatewayConfig

    base = dataclasses.asdict(GatewayConfig.from_env({}))
    found = {}
    for name in sorted(n for n in code_env_names(("engine_service",)) if n.startswith("CARAVANSERAI_")):
        try:
            changed = dataclasses.asdict(GatewayConfig.from_env({name: "127.0.0.9:1"}))
        except ValueError:
            continue  # a numeric setting
        fields = [f for f, v in changed.items() if v != base[f] and v == "127.0.0.9:1"]
        if fields:
            found[name] = fields[0]
    return found


def gateway_listen_addresses(env: Mapping[str, str]) -> dict[str, tuple[str, int]]:
    """The addresses a gateway with `env` listens on (its config's `*_address` fields), by variable."""
    from engine_service.gateway.config import GatewayConfig

    config = dataclasses.asdict(GatewayConfig.from_env(dict(env)))
    found = {}
    for name, field_name in gateway_address_variables().items():
        if field_name.endswith("_address") and (address := host_port(str(config[field_name]))):
            found[name] = address
    return found


def command_listen_ports(argv: list[str]) -> list[int]:
    """Ports a command line binds itself (`--bind HOST:PORT`, `-b`, `--port N`, `--port=N`)."""
    ports = []
    for i, arg in enumerate(argv):
        value = None
        if arg in ("--bind", "-b", "--port") and i + 1 < len(argv):
            value = argv[i + 1]
        elif arg.startswith(("--bind=", "--port=")):
            value = arg.split("=", 1)[1]
        if value is None:
            continue
        address = host_port(value) if ":" in value else ("", int(value)) if value.isdigit() else None
        if address:
            ports.append(address[1])
    return ports


# --- Kubernetes ----------------------------------------------------------------------------------------------
K8S = INFRA / "k8s"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")


def load_k8s(directory: Path = K8S) -> list[dict[str, Any]]:
    """The resources the kustomization lists, in its order (each file may hold several documents)."""
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    docs = []
    for name in kustomization["resources"]:
        path = directory / name
        if not path.is_file():
            raise DeploymentFileError(f"{directory}/kustomization.yaml lists {name}, which does not exist")
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def k8s_find(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> list[dict[str, Any]]:
    return [d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)]


def _env_from(docs: list[dict[str, Any]], container: dict[str, Any]) -> dict[str, str]:
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        for kind, key in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            if key in source:
                found = k8s_find(docs, kind, source[key]["name"])
                if not found:
                    raise DeploymentFileError(f"{container['name']}: no {kind} {source[key]['name']}")
                env.update(
                    {k: str(v) for k, v in (found[0].get("data") or found[0].get("stringData") or {}).items()}
                )
    for item in container.get("env") or []:
        env[item["name"]] = str(item.get("value", "$(downward API)"))
    return env


def k8s_processes(docs: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any], Process]]:
    """(workload, container, process) for every container of every workload: argv is command + args, env
    the ConfigMaps' and Secrets' it takes (envFrom) under its own `env`."""
    found = []
    for workload in (d for d in docs if d["kind"] in WORKLOAD_KINDS):
        pod = workload["spec"]["template"]["spec"]
        for container in pod["containers"]:
            argv = [*container.get("command", []), *container.get("args", [])]
            name = f"{workload['kind']} {workload['metadata']['name']}/{container['name']}"
            grace = float(pod.get("terminationGracePeriodSeconds", 30))
            process = Process(
                name, argv, _env_from(docs, container), name, image=container["image"], stop_grace=grace
            )
            found.append((workload, container, process))
    return found
