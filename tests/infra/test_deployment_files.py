"""infra/compose.yaml and infra/Procfile, checked without starting anything: the compose file is valid
against the Compose Specification's JSON Schema (vendored: infra/schemas/), and what the schema cannot
see holds too: every command runs a module, program or file that exists, every environment variable the
files set is one the code (or HAProxy's configuration) reads, ports published and advertised are ports the
process listens on, the load balancer points at the gateways' bot ports, and depends_on names services
that exist with the condition they can meet. Addresses and variable names are derived from the files and
the code (GatewayConfig), so a new port or setting is checked without editing this test.

Starting every command once as written: tests/infra/test_deployment_start.py."""

from __future__ import annotations

import ast
import copy
import hashlib
import importlib.util
import json
import re
from collections import Counter
from pathlib import Path

import jsonschema
import pytest

from tests.infra.deployment import (
    COMPOSE,
    COMPOSE_SCHEMA,
    HAPROXY_CFG,
    ROOT,
    THIRD_PARTY_ENV,
    Process,
    code_env_names,
    command_listen_ports,
    compose_processes,
    gateway_listen_addresses,
    haproxy_env_names,
    host_port,
    interpolate,
    load_compose,
    load_procfile,
    procfile_processes,
)
from workers.config import QUEUES

HOST_ENV = {"DJANGO_SECRET_KEY": "a-test-secret-key-of-more-than-thirty-two-characters"}
LB_CONFIG_IN_IMAGE = "/usr/local/etc/haproxy/haproxy.cfg"


def compose() -> list[Process]:
    return compose_processes(load_compose(), HOST_ENV)


def procfile() -> list[Process]:
    return procfile_processes(load_procfile())


def built(processes: list[Process]) -> list[Process]:
    """The processes of the project's own image (compose: built from infra/Dockerfile)."""
    services = load_compose()["services"]
    return [p for p in processes if "build" in services.get(p.name, {})]


def schema_errors(document: object) -> list[str]:
    validator = jsonschema.Draft7Validator(json.loads(COMPOSE_SCHEMA.read_text()))
    return sorted(
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)
    )


# --- the schema ----------------------------------------------------------------------------------------------
def test_the_compose_file_is_valid_against_the_compose_specification():
    assert schema_errors(load_compose()) == []


def test_the_schema_check_rejects_what_docker_compose_would():
    broken = copy.deepcopy(load_compose())
    broken["services"]["web"]["comand"] = broken["services"]["web"].pop("command")
    broken["services"]["worker"]["stop_grace_period"] = ["60s"]
    broken["services"]["lb"]["depends_on"] = "gateway1"
    errors = schema_errors(broken)
    assert any(e.startswith("services/web:") and "'comand' does not match" in e for e in errors), errors
    assert any(e.startswith("services/worker/stop_grace_period:") for e in errors), errors
    assert any(e.startswith("services/lb/depends_on:") for e in errors), errors


def test_the_vendored_schema_is_the_one_its_notes_name():
    notes = (COMPOSE_SCHEMA.parent / "README.md").read_text()
    digest = hashlib.sha256(COMPOSE_SCHEMA.read_bytes()).hexdigest()
    assert digest in notes, "infra/schemas/README.md must give the sha256 of compose-spec.json"
    assert json.loads(COMPOSE_SCHEMA.read_text())["title"] == "Compose Specification"


# --- commands ------------------------------------------------------------------------------------------------
def _module_defines(module: str, name: str) -> bool:
    spec = importlib.util.find_spec(module)
    assert spec and spec.origin, f"no module {module}"
    tree = ast.parse(Path(spec.origin).read_text())
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def _option(argv: list[str], *names: str) -> str | None:
    for i, arg in enumerate(argv):
        for name in names:
            if arg == name and i + 1 < len(argv):
                return argv[i + 1]
            if arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def _check_target(p: Process) -> None:
    """The module, application object, queue or file the command names exists."""
    argv = p.argv
    if module := _option(argv, "-m"):
        assert importlib.util.find_spec(module), f"{p.source}: no module {module}"
    if p.role == "web":
        module, _, attr = argv[1].partition(":")
        assert _module_defines(module, attr or "application"), f"{p.source}: {argv[1]} does not exist"
    if p.role in ("worker", "beat") or (p.program == "celery" and "-A" in argv):
        app = _option(argv, "-A", "--app")
        assert app and _module_defines(app, "app"), f"{p.source}: no Celery app {app}"
    if queues := _option(argv, "-Q", "--queues"):
        assert set(queues.split(",")) <= set(QUEUES), f"{p.source}: unknown queue in {queues}"
    if p.role == "migrate":
        assert (ROOT / argv[argv.index("manage.py") if "manage.py" in argv else 1]).exists()
    if p.role == "lb":
        config = _option(argv, "-f")
        path = HAPROXY_CFG if config == LB_CONFIG_IN_IMAGE and p.image else ROOT / str(config)
        assert path.resolve() == HAPROXY_CFG.resolve(), (
            f"{p.source}: HAProxy reads {config}, not infra/haproxy.cfg"
        )


def test_every_command_runs_something_that_exists():
    processes = built(compose()) + procfile() + [p for p in compose() if p.role == "lb"]
    for p in processes:
        assert p.role, f"{p.source}: unrecognised command {p.argv}"
        _check_target(p)
    for p in procfile():
        if "/" in p.argv[0]:  # a path from the project root, as the Procfile's header says
            assert (ROOT / p.argv[0]).exists(), f"{p.source}: {p.argv[0]} does not exist (make install)"


def test_the_lb_service_mounts_infra_haproxy_cfg_where_its_image_reads_it():
    volumes = load_compose()["services"]["lb"]["volumes"]
    mounts = {v.split(":")[1]: (COMPOSE.parent / v.split(":")[0]).resolve() for v in volumes}
    assert mounts[LB_CONFIG_IN_IMAGE] == HAPROXY_CFG.resolve()


def test_compose_and_the_procfile_run_the_same_roles_on_the_same_queues():
    def roles(processes: list[Process]) -> Counter[tuple[str, str]]:
        return Counter((p.role, _option(p.argv, "-Q") or "") for p in processes if p.role not in ("migrate",))

    app_compose = roles(built(compose()) + [p for p in compose() if p.role == "lb"])
    app_procfile = roles(procfile())
    assert set(app_compose) == set(app_procfile), (app_compose, app_procfile)
    assert app_compose[("beat", "")] == app_procfile[("beat", "")] == 1, "exactly one beat"


# --- environment ---------------------------------------------------------------------------------------------
def test_every_variable_the_files_set_is_read_by_the_code():
    read = code_env_names() | THIRD_PARTY_ENV
    for p in built(compose()) + [p for p in procfile() if p.role != "lb"]:
        unknown = sorted(set(p.env) - read)
        assert not unknown, f"{p.source} sets {unknown}, which no code reads"
    for p in [p for p in compose() + procfile() if p.role == "lb"]:
        unknown = sorted(set(p.env) - haproxy_env_names())
        assert not unknown, f"{p.source} sets {unknown}, which infra/haproxy.cfg does not read"


def test_the_code_reading_scan_finds_the_documented_settings():
    read = code_env_names()
    # one of each way the code reads: GatewayConfig's env.get and _int, WorkerSettings' _number, the
    # settings module's os.environ.get and env_bool, the worker metrics' os.environ.get
    for name in ("CARAVANSERAI_GATEWAY_ADDR", "CARAVANSERAI_GATEWAY_MAX_SESSIONS_PER_BOT", "CARAVANSERAI_LEASE_SECONDS",
                 "DATABASE_URL", "DJANGO_DEBUG", "CARAVANSERAI_WORKER_METRICS_PORT"):  # fmt: skip
        assert name in read, name


def test_interpolation_follows_compose():
    env = {"SET": "v", "EMPTY": ""}
    assert (
        interpolate("$$(hostname) ${SET} $SET ${EMPTY:-d} ${EMPTY-d} ${UNSET:-d}", env)
        == "$(hostname) v v d  d"
    )
    with pytest.raises(ValueError, match="required variable UNSET is missing a value: say so"):
        interpolate("${UNSET:?say so}", env)
    with pytest.raises(ValueError, match="required variable EMPTY"):
        interpolate("${EMPTY:?}", env)


# --- ports ---------------------------------------------------------------------------------------------------
def listen_ports(p: Process) -> dict[str, int]:
    """What the process listens on: the gateway's address settings (its config, defaults included), or
    the command's own --bind/--port, or HAProxy's bind."""
    if p.role == "gateway":
        return {name: address[1] for name, address in gateway_listen_addresses(p.env).items()}
    if p.role == "lb":
        address = host_port(p.env.get("CARAVANSERAI_LB_BIND", ""))
        return {"CARAVANSERAI_LB_BIND": address[1]} if address else {}
    return {f"{p.program} {i}": port for i, port in enumerate(command_listen_ports(p.argv))}


def test_published_ports_are_ports_the_service_listens_on():
    for p in compose():
        if p.ports and p.role not in ("postgres", "redis", "flower"):
            assert set(p.ports) <= set(listen_ports(p).values()), (p.source, p.ports, listen_ports(p))
    flower = next(p for p in compose() if p.role == "flower")
    assert flower.ports == [int(str(_option(flower.argv, "--port")))]


def test_each_advertised_address_has_the_port_of_its_listening_address():
    for p in [p for p in compose() + procfile() if p.role == "gateway"]:
        listening = listen_ports(p)
        for name, value in p.env.items():
            if name.endswith("_ADVERTISE"):
                address = host_port(value)
                own = name.removesuffix("_ADVERTISE") + "_ADDR"
                assert address and own in listening, f"{p.source}: {name}={value} has no {own}"
                assert address[1] == listening[own], f"{p.source}: {name} port {address[1]} != {own}"


def test_the_load_balancer_points_at_each_gateways_bot_port():
    for processes in (compose(), procfile()):
        gateways = {p.name: p for p in processes if p.role == "gateway"}
        lb = next(p for p in processes if p.role == "lb")
        targets = {k: host_port(v) for k, v in lb.env.items() if re.fullmatch(r"CARAVANSERAI_GATEWAY_\d+", k)}
        assert targets, f"{lb.source} names no gateway"
        for name, target in targets.items():
            assert target, f"{lb.source}: {name} is not host:port"
            host, port = target
            gateway = gateways.get(host) or (next(iter(gateways.values())) if len(gateways) == 1 else None)
            assert gateway, f"{lb.source}: {name} names {host}, not a gateway service"
            assert port == listen_ports(gateway)["CARAVANSERAI_GATEWAY_ADDR"], f"{lb.source}: {name}"
        if lb.image:  # every gateway service is behind the balancer
            assert {t[0] for t in targets.values() if t} == set(gateways)


def test_procfile_processes_listen_on_distinct_ports():
    seen: dict[int, str] = {}
    for p in procfile():
        for what, port in listen_ports(p).items():
            assert port not in seen, f"Procfile {p.name} ({what}) and {seen[port]} both listen on {port}"
            seen[port] = f"{p.name} ({what})"


# --- depends_on ----------------------------------------------------------------------------------------------
def test_depends_on_names_services_that_can_meet_the_condition():
    services = load_compose()["services"]
    for name, service in services.items():
        depends = service.get("depends_on") or {}
        if isinstance(depends, list):
            depends = {d: {"condition": "service_started"} for d in depends}
        for other, rule in depends.items():
            assert other in services, f"service {name} depends on {other}, which does not exist"
            condition = rule.get("condition", "service_started")
            if condition == "service_healthy":
                assert "healthcheck" in services[other], (
                    f"{name} waits for {other} to be healthy: no healthcheck"
                )
            if condition == "service_completed_successfully":
                assert "restart" not in services[other], (
                    f"{other} is a one-shot for {name}: no restart policy"
                )
