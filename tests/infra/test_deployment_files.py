"""infra/compose.yaml and infra/Procfile, checked without starting anything: the compose file is valid
against the Compose Specification's JSON Schema (vendored: infra/schemas/), and what the schema cannot
see holds too: every command runs a module, program or file that exists, every environment variable the
files set is one the code (or HAProxy's configuration) reads, ports published and advertised are ports the
process listens on, the load balancer points at the gateways' bot ports, the web's buffering proxy
(infra/haproxy-web.cfg) at the web servers, which nothing publishes but the proxy, and depends_on names
services that exist with the condition they can meet. Addresses and variable names are derived from the
files and the code (GatewayConfig), so a new port or setting is checked without editing this test.

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
import yaml

from tests.infra.deployment import (
    COMPOSE,
    COMPOSE_SCHEMA,
    HAPROXY_CFG,
    HAPROXY_WEB_CFG,
    K8S,
    ROOT,
    THIRD_PARTY_ENV,
    Process,
    code_env_names,
    command_listen_ports,
    compose_processes,
    depends_on,
    gateway_address_variables,
    gateway_listen_addresses,
    haproxy_config,
    haproxy_env_names,
    host_port,
    interpolate,
    k8s_find,
    k8s_processes,
    load_compose,
    load_k8s,
    load_procfile,
    procfile_processes,
)
from workers.config import QUEUES

HOST_ENV = {"DJANGO_SECRET_KEY": "a-test-secret-key-of-more-than-thirty-two-characters"}
LB_CONFIG_IN_IMAGE = "/usr/local/etc/haproxy/haproxy.cfg"
PROXIES = ("lb", "web-proxy")  # HAProxy processes, from its image in compose


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
    if p.role == "web":
        config = _option(argv, "-c", "--config")
        assert config == "python:ladder.gunicorn_conf", (
            f"{p.source}: gunicorn without ladder/gunicorn_conf.py"
        )
        assert importlib.util.find_spec(config.removeprefix("python:")), f"{p.source}: no module {config}"
    if p.role in PROXIES and not p.source.startswith("Deployment"):  # k8s: its ConfigMap, checked apart
        config = str(_option(argv, "-f"))
        path = _compose_mounts(p.name).get(config) if p.source.startswith("compose") else ROOT / config
        assert path and path.resolve() == haproxy_config(p).resolve(), (
            f"{p.source}: HAProxy reads {config}, not {haproxy_config(p).relative_to(ROOT)}"
        )


def _compose_mounts(service: str) -> dict[str, Path]:
    """A compose service's bind mounts: the path in the container -> the file on the host."""
    volumes = load_compose()["services"][service].get("volumes") or []
    return {v.split(":")[1]: (COMPOSE.parent / v.split(":")[0]).resolve() for v in volumes}


def test_every_command_runs_something_that_exists():
    processes = built(compose()) + procfile() + [p for p in compose() if p.role in PROXIES]
    for p in processes:
        assert p.role, f"{p.source}: unrecognised command {p.argv}"
        _check_target(p)
    for p in procfile():
        if "/" in p.argv[0]:  # a path from the project root, as the Procfile's header says
            assert (ROOT / p.argv[0]).exists(), f"{p.source}: {p.argv[0]} does not exist (make install)"


def test_the_lb_service_mounts_infra_haproxy_cfg_where_its_image_reads_it():
    assert _compose_mounts("lb")[LB_CONFIG_IN_IMAGE] == HAPROXY_CFG.resolve()


def test_compose_and_the_procfile_run_the_same_roles_on_the_same_queues():
    def roles(processes: list[Process]) -> Counter[tuple[str, str]]:
        return Counter((p.role, _option(p.argv, "-Q") or "") for p in processes if p.role not in ("migrate",))

    app_compose = roles(built(compose()) + [p for p in compose() if p.role in PROXIES])
    app_procfile = roles(procfile())
    assert set(app_compose) == set(app_procfile), (app_compose, app_procfile)
    assert app_compose[("beat", "")] == app_procfile[("beat", "")] == 1, "exactly one beat"


# --- environment ---------------------------------------------------------------------------------------------
def variable_problems(processes: list[Process]) -> list[str]:
    """Variables a file sets that nothing reads: the code for the project's processes, its HAProxy file
    (infra/haproxy.cfg or infra/haproxy-web.cfg) for HAProxy."""
    read = code_env_names() | THIRD_PARTY_ENV
    problems = []
    for p in processes:
        if p.role in PROXIES:
            unknown = sorted(set(p.env) - haproxy_env_names(haproxy_config(p)))
            config = haproxy_config(p).relative_to(ROOT)
            problems += [f"{p.source} sets {unknown}, which {config} does not read"] if unknown else []
        elif (
            p.image is None
        ):  # the Procfile's, or built from infra/Dockerfile (third-party images: their own)
            unknown = sorted(set(p.env) - read)
            problems += [f"{p.source} sets {unknown}, which no code reads"] if unknown else []
    return problems


def test_every_variable_the_files_set_is_read_by_the_code():
    assert variable_problems(compose() + procfile()) == []


def test_the_code_reading_scan_finds_the_documented_settings():
    read = code_env_names()
    # one of each way the code reads: GatewayConfig's env.get and _int, WorkerSettings' reader, the
    # settings module's, the worker metrics'
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
    if p.role in PROXIES:
        name = "CARAVANSERAI_LB_BIND" if p.role == "lb" else "CARAVANSERAI_WEB_BIND"
        address = host_port(p.env.get(name, ""))
        return {name: address[1]} if address else {}
    return {f"{p.program} {i}": port for i, port in enumerate(command_listen_ports(p.argv))}


def published_port_problems(processes: list[Process]) -> list[str]:
    """Published ports no process listens on (third-party servers listen on their image's own port)."""
    problems = []
    for p in processes:
        if p.role == "flower":
            listening = {int(str(_option(p.argv, "--port")))}
        elif p.role in ("postgres", "redis"):
            continue
        else:
            listening = set(listen_ports(p).values())
        if not set(p.ports) <= listening:
            problems.append(
                f"{p.source} publishes {sorted(set(p.ports) - listening)}, not a port it listens on"
            )
    return problems


def advertise_problems(processes: list[Process]) -> list[str]:
    """An `*_ADVERTISE` address whose port is not its `*_ADDR`'s."""
    problems = []
    for p in [p for p in processes if p.role == "gateway"]:
        listening = listen_ports(p)
        for name, value in p.env.items():
            if name.endswith("_ADVERTISE"):
                address, own = host_port(value), name.removesuffix("_ADVERTISE") + "_ADDR"
                if not address or address[1] != listening.get(own):
                    problems.append(f"{p.source}: {name}={value} is not on {own}'s port {listening.get(own)}")
    return problems


def balancer_problems(processes: list[Process]) -> list[str]:
    """HAProxy's CARAVANSERAI_GATEWAY_<n> must name each gateway (compose: by service) at its bot port."""
    gateways = {p.name: p for p in processes if p.role == "gateway"}
    lb = next(p for p in processes if p.role == "lb")
    targets = {k: host_port(v) for k, v in lb.env.items() if re.fullmatch(r"CARAVANSERAI_GATEWAY_\d+", k)}
    problems = [] if targets else [f"{lb.source} names no gateway"]
    for name, target in targets.items():
        gateway = gateways.get(target[0]) if target else None
        if target and not gateway and len(gateways) == 1:  # one host: the Procfile's only gateway
            gateway = next(iter(gateways.values()))
        if not target or not gateway:
            problems.append(f"{lb.source}: {name}={lb.env[name]} is not a gateway's host:port")
        elif target[1] != listen_ports(gateway)["CARAVANSERAI_GATEWAY_ADDR"]:
            problems.append(f"{lb.source}: {name} port {target[1]} is not {gateway.source}'s bot port")
    if lb.image and {t[0] for t in targets.values() if t} != set(gateways):
        problems.append(f"{lb.source}: not every gateway service is behind the balancer")
    return problems


def web_proxy_problems(processes: list[Process]) -> list[str]:
    """Clients reach the web servers only through the buffering proxy: its CARAVANSERAI_WEB_<n> name every
    web server (compose: by service) at the port it binds, and no web server is published or listens
    beyond the host's loopback where the proxy is on the same host (the Procfile)."""
    webs = {p.name: p for p in processes if p.role == "web"}
    proxies = [p for p in processes if p.role == "web-proxy"]
    if len(proxies) != 1:
        return [f"{len(proxies)} web proxies (infra/haproxy-web.cfg), not one"]
    proxy = proxies[0]
    targets = {k: host_port(v) for k, v in proxy.env.items() if re.fullmatch(r"CARAVANSERAI_WEB_\d+", k)}
    problems = []
    for name, target in targets.items():
        web = webs.get(target[0]) if target else None
        if target and not web and len(webs) == 1 and not proxy.image:  # one host: the only web server
            web = next(iter(webs.values()))
        if not target or not web:
            problems.append(f"{proxy.source}: {name}={proxy.env[name]} is not a web server's host:port")
        elif target[1] not in command_listen_ports(web.argv):
            problems.append(f"{proxy.source}: {name} port {target[1]} is not the port {web.source} binds")
    if {t[0] for t in targets.values() if t} != set(webs) and proxy.image:
        problems.append(f"{proxy.source}: not every web service is behind the proxy")
    for web in webs.values():
        if web.ports:
            problems.append(f"{web.source} is published ({web.ports}): clients must come through the proxy")
        if (
            not proxy.image
            and _option(web.argv, "--bind", "-b") != f"127.0.0.1:{command_listen_ports(web.argv)[0]}"
        ):
            problems.append(f"{web.source} binds {_option(web.argv, '--bind', '-b')}, not the loopback")
    return problems


def test_published_advertised_and_balanced_ports_are_ports_the_processes_listen_on():
    assert published_port_problems(compose()) == []
    assert advertise_problems(compose() + procfile()) == []
    assert balancer_problems(compose()) == [] and balancer_problems(procfile()) == []
    assert web_proxy_problems(compose()) == [] and web_proxy_problems(procfile()) == []


def test_procfile_processes_listen_on_distinct_ports():
    seen: dict[int, str] = {}
    for p in procfile():
        for what, port in listen_ports(p).items():
            assert port not in seen, f"Procfile {p.name} ({what}) and {seen[port]} both listen on {port}"
            seen[port] = f"{p.name} ({what})"


# --- depends_on ----------------------------------------------------------------------------------------------
def dependency_problems(services: dict) -> list[str]:
    problems = []
    for name, service in services.items():
        for other, condition in depends_on(service).items():
            if other not in services:
                problems.append(f"service {name} depends on {other}, which does not exist")
            elif condition == "service_healthy" and "healthcheck" not in services[other]:
                problems.append(f"{name} waits for {other} to be healthy: {other} has no healthcheck")
            elif condition == "service_completed_successfully" and "restart" in services[other]:
                problems.append(f"{name} waits for {other} to complete: {other} restarts")
    return problems


def test_depends_on_names_services_that_can_meet_the_condition():
    assert dependency_problems(load_compose()["services"]) == []


def test_the_checks_catch_a_compose_file_gone_wrong():
    data = copy.deepcopy(load_compose())
    services = data["services"]
    services["gateway2"] = copy.deepcopy(services["gateway1"])  # an alias of gateway1 until now
    services["gateway2"]["environment"]["CARAVANSERAI_GATEWAY_DRAIN_SECOND"] = "30"  # misspelt
    services["gateway2"]["command"][2] = services["gateway2"]["command"][2].replace(":50052", ":50062")
    services["web"]["ports"] = ["8080:8080"]
    services["lb"]["environment"]["CARAVANSERAI_GATEWAY_2"] = "gateway2:50052"  # the relay, not bots
    services["web-proxy"]["environment"]["CARAVANSERAI_WEB_2"] = "web:8001"  # no web server binds it
    # depends_on is the x-app anchor's one mapping until a service has its own
    services["worker"]["depends_on"] = {
        **services["worker"]["depends_on"],
        "postgress": {"condition": "service_healthy"},
    }
    services["beat"]["depends_on"] = {
        **services["beat"]["depends_on"],
        "web": {"condition": "service_completed_successfully"},
    }
    processes = compose_processes(data, HOST_ENV)
    assert variable_problems(processes) == [
        "compose service gateway2 sets ['CARAVANSERAI_GATEWAY_DRAIN_SECOND'], which no code reads"
    ]
    assert published_port_problems(processes) == [
        "compose service web publishes [8080], not a port it listens on"
    ]
    assert advertise_problems(processes) == [
        "compose service gateway2: CARAVANSERAI_RELAY_ADVERTISE=$(hostname -i | cut -d' ' -f1):50062"
        " is not on CARAVANSERAI_RELAY_ADDR's port 50052"
    ]
    assert balancer_problems(processes) == [
        "compose service lb: CARAVANSERAI_GATEWAY_2 port 50052 is not compose service gateway2's bot port"
    ]
    assert web_proxy_problems(processes) == [
        "compose service web-proxy: CARAVANSERAI_WEB_2 port 8001 is not the port compose service web binds",
        "compose service web is published ([8080]): clients must come through the proxy",
    ]
    assert dependency_problems(services) == [
        "service worker depends on postgress, which does not exist",
        "beat waits for web to complete: web restarts",
    ]


# --- Kubernetes (infra/k8s) ----------------------------------------------------------------------------------
K8S_VERSIONS = ("1.29.0", "1.37.0")  # the oldest still widely run with grpc probes GA, and the newest bundled
# Settings a cluster must give: DJANGO_SECRET_KEY has no usable default (every process refuses to start
# without it); DATABASE_URL and REDIS_URL default to per-process SQLite files, which pods do not share.
CORE_ROLES = {"web", "gateway", "worker", "beat", "migrate"}  # what every deployment runs
REQUIRED_IN_A_CLUSTER = {"DJANGO_SECRET_KEY", "DATABASE_URL", "REDIS_URL"}
README = ROOT / "infra" / "README.md"


def k8s() -> list[dict]:
    return load_k8s()


def _pod_labels(workload: dict) -> dict[str, str]:
    return workload["spec"]["template"]["metadata"]["labels"]


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in selector.items())


def _memory_mb(quantity: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(Mi|Gi|M|G)", quantity)
    assert m, f"memory quantity {quantity!r}"
    return float(m.group(1)) * {"Mi": 1.048576, "Gi": 1073.741824, "M": 1, "G": 1000}[m.group(2)]


def _cpu(quantity: str) -> float:
    return float(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity)


def test_every_manifest_is_valid_against_the_kubernetes_schemas():
    import kubernetes_validate

    for doc in k8s():
        for version in K8S_VERSIONS:
            kubernetes_validate.validate(doc, version, strict=True)


def test_the_schema_check_rejects_a_broken_manifest():
    import kubernetes_validate

    gateway = copy.deepcopy(k8s_find(k8s(), "Deployment", "gateway")[0])
    container = gateway["spec"]["template"]["spec"]["containers"][0]
    container["readinessProbe"]["grpc"]["port"] = "grpc"  # grpc probes take a number, not a port name
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(gateway, K8S_VERSIONS[-1], strict=True)
    container["readinessProbe"]["grpc"]["port"] = 50051
    container["resource"] = container.pop("resources")  # a misspelt field: only strict validation sees it
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(gateway, K8S_VERSIONS[-1], strict=True)


def test_the_kustomization_lists_every_manifest():
    listed = set(yaml.safe_load((K8S / "kustomization.yaml").read_text())["resources"])
    assert listed == {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}


def test_selectors_match_the_pod_labels():
    docs = k8s()
    workloads = [d for d in docs if d["kind"] in ("Deployment", "StatefulSet", "Job")]
    for w in workloads:
        if w["kind"] != "Job":
            assert _selects(w["spec"]["selector"]["matchLabels"], _pod_labels(w)), w["metadata"]["name"]
    for kind in ("Service", "PodDisruptionBudget"):
        for d in k8s_find(docs, kind):
            selector = d["spec"]["selector"].get("matchLabels", d["spec"]["selector"])
            chosen = [w for w in workloads if _selects(selector, _pod_labels(w))]
            assert len(chosen) == 1, f"{kind} {d['metadata']['name']} selects {len(chosen)} workloads"
            if kind == "Service":
                ports = chosen[0]["spec"]["template"]["spec"]["containers"][0]["ports"]
                names = {p.get("name") for p in ports} | {p["containerPort"] for p in ports}
                for port in d["spec"]["ports"]:
                    assert port["targetPort"] in names, f"Service {d['metadata']['name']}: {port}"


def test_the_containers_run_what_compose_runs_and_it_exists():
    processes = [p for _, _, p in k8s_processes(k8s())]
    for p in processes:
        assert p.role, f"{p.source}: unrecognised command {p.argv}"
        _check_target(p)

    def roles(items: list[Process]) -> set[tuple[str, str]]:
        return {(p.role, _option(p.argv, "-Q") or "") for p in items if p.role in CORE_ROLES}

    assert roles(processes) == roles(built(compose())), "the same core processes as compose"


def test_every_variable_is_read_by_the_code_and_the_required_ones_are_set():
    read = code_env_names() | THIRD_PARTY_ENV
    for _, container, p in k8s_processes(k8s()):
        if p.role in PROXIES:  # HAProxy's image: its file reads its variables; it needs no secret
            assert variable_problems([p]) == []
            continue
        helpers = {e["name"] for e in container.get("env") or [] if "valueFrom" in e}  # downward API
        used = {n for v in p.env.values() for n in re.findall(r"\$\(([A-Z_]+)\)", v)}
        assert helpers <= used, f"{p.source}: {helpers - used} set from the pod but never used"
        unknown = sorted(set(p.env) - read - helpers)
        assert not unknown, f"{p.source} sets {unknown}, which no code reads"
        assert set(p.env) >= REQUIRED_IN_A_CLUSTER, f"{p.source} lacks {REQUIRED_IN_A_CLUSTER - set(p.env)}"


def _container_ports(container: dict) -> dict[str | int, int]:
    ports: dict[str | int, int] = {}
    for port in container.get("ports") or []:
        ports[port["containerPort"]] = port["containerPort"]
        if "name" in port:
            ports[port["name"]] = port["containerPort"]
    return ports


def test_probe_ports_and_listen_addresses_are_container_ports():
    for _, container, p in k8s_processes(k8s()):
        ports = _container_ports(container)
        for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
            spec = container.get(probe) or {}
            for handler in ("grpc", "httpGet", "tcpSocket"):
                if handler in spec:
                    assert spec[handler]["port"] in ports, f"{p.source}: {probe} port {spec[handler]['port']}"
        if p.role == "gateway":  # each address a gateway listens on for others: all interfaces, exposed
            for name, (host, port) in gateway_listen_addresses(p.env).items():
                if name in p.env:
                    assert host == "0.0.0.0" and port in ports.values(), f"{p.source}: {name}={p.env[name]}"
        for port in command_listen_ports(p.argv):
            if _option(p.argv, "--bind", "-b") == f"127.0.0.1:{port}":
                continue  # the pod's loopback: for a sidecar only (test_the_web_pods_serve_through_the_proxy)
            assert port in ports.values(), f"{p.source}: listens on {port}, not a containerPort"


def test_the_web_pods_serve_through_the_proxy():
    """gunicorn on the pod's loopback, the sidecar HAProxy pointed at it with infra/haproxy-web.cfg (the
    ConfigMap's copy equal to the file, mounted where the command reads it), the Service on the sidecar."""
    docs = k8s()
    (workload,) = k8s_find(docs, "Deployment", "web")
    pod = workload["spec"]["template"]["spec"]
    found = {p.role: (c, p) for w, c, p in k8s_processes(docs) if w is workload}
    assert set(found) == {"web", "web-proxy"}, set(found)
    (_, web), (proxy_container, proxy) = found["web"], found["web-proxy"]
    (port,) = command_listen_ports(web.argv)
    assert (
        _option(web.argv, "--bind") == f"127.0.0.1:{port}"
        and proxy.env["CARAVANSERAI_WEB_1"] == f"127.0.0.1:{port}"
    )
    config = str(_option(proxy.argv, "-f"))
    (mount,) = [m for m in proxy_container["volumeMounts"] if m["mountPath"] == config]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    (config_map,) = k8s_find(docs, "ConfigMap", volume["configMap"]["name"])
    assert config_map["data"][mount["subPath"]] == HAPROXY_WEB_CFG.read_text(), (
        f"ConfigMap {config_map['metadata']['name']} is not a copy of infra/haproxy-web.cfg"
    )
    bind = host_port(proxy.env["CARAVANSERAI_WEB_BIND"])
    assert bind and _container_ports(proxy_container)["http"] == bind[1]
    (service,) = k8s_find(docs, "Service", "web")
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]
    assert proxy_container["readinessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}


def test_each_gateway_is_reachable_on_its_own_relay_addresses():
    docs = k8s()
    (_, container, gateway) = next(x for x in k8s_processes(docs) if x[2].role == "gateway")
    pod_ip = next(e for e in container["env"] if e["name"] == "POD_IP")
    assert pod_ip["valueFrom"] == {"fieldRef": {"fieldPath": "status.podIP"}}
    service_ports = {p["port"] for p in k8s_find(docs, "Service", "gateway")[0]["spec"]["ports"]}
    variables = gateway_address_variables()
    relays = [
        n for n in variables if n.endswith("_ADDR") and n.removesuffix("_ADDR") + "_ADVERTISE" in variables
    ]
    assert "CARAVANSERAI_RELAY_ADDR" in relays
    listening = gateway_listen_addresses(gateway.env)
    for name in relays:  # every relay the code serves, including any added later
        if name not in listening:
            continue  # no fixed port (the code picks one and advertises it beside the relay's address)
        port = listening[name][1]
        advertise = name.removesuffix("_ADDR") + "_ADVERTISE"
        assert gateway.env.get(name) == f"0.0.0.0:{port}", f"{name} must listen on all interfaces"
        if advertise in gateway.env or name == "CARAVANSERAI_RELAY_ADDR":
            assert gateway.env.get(advertise) == f"$(POD_IP):{port}", (
                f"{advertise}: not the pod's own address"
            )
        # else: advertised on CARAVANSERAI_RELAY_ADVERTISE's host (the pod IP) with its own port (config.py)
        assert port in _container_ports(container).values() and port in service_ports, name
    bot_port = listening["CARAVANSERAI_GATEWAY_ADDR"][1]
    assert bot_port in service_ports
    # ready: the bot port's health (NOT_SERVING while draining); alive: the relay's, SERVING until it exits
    assert container["readinessProbe"]["grpc"]["port"] == bot_port
    assert container["livenessProbe"]["grpc"]["port"] == listening["CARAVANSERAI_RELAY_ADDR"][1]


def test_a_gateway_has_time_to_drain_and_beat_is_one():
    docs = k8s()
    config = k8s_find(docs, "ConfigMap")[0]["data"]
    for workload, container, p in k8s_processes(docs):
        if p.role == "gateway":
            pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
            assert pre_stop[0] == "sleep"
            drain = float(p.env["CARAVANSERAI_GATEWAY_DRAIN_SECONDS"])
            assert drain > 0, "SIGTERM must drain a gateway"
            assert p.stop_grace >= float(pre_stop[1]) + drain + 5, (p.stop_grace, pre_stop, drain)
            assert workload["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
        if p.role == "worker" and _option(p.argv, "-Q") == "matches":
            compose_worker = next(c for c in compose() if c.name == "worker")
            assert p.stop_grace >= compose_worker.stop_grace  # the warm shutdown compose gives it
        if p.role == "beat":
            assert workload["spec"]["replicas"] == 1 and workload["spec"]["strategy"]["type"] == "Recreate"
    assert config["CARAVANSERAI_GATEWAY_DRAIN_SECONDS"]
    budgets = {
        d["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"]
        for d in k8s_find(docs, "PodDisruptionBudget")
    }
    assert {"gateway", "worker"} <= budgets


def test_resource_requests_follow_the_capacity_model():
    """The requests cover infra/README.md's measured figures (a worker process's base plus its cost per match
    in flight, a gateway's memory, each process planned at 0.7 of a core), read from the README, not copied."""
    text = README.read_text()
    per_process, per_match = map(
        float, re.search(r"(\d+) MB per process \+ ([\d.]+) MB per match", text).groups()
    )
    gateway_mb = float(re.search(r"\| gateway memory \| (\d+) MB", text).group(1))
    core_share = float(re.search(r"plan a process at ([\d.]+) of\s+its one core", text).group(1))
    for _, container, p in k8s_processes(k8s()):
        requests = container["resources"]["requests"]
        assert {"cpu", "memory"} <= set(requests), p.source
        memory, cpu = _memory_mb(requests["memory"]), _cpu(requests["cpu"])
        if p.role == "worker" and _option(p.argv, "-Q") == "matches":
            in_flight = int(p.env.get("CARAVANSERAI_MATCHES_PER_WORKER", "64"))
            assert memory >= per_process + per_match * in_flight, (p.source, memory)
            assert cpu == core_share, p.source
        if p.role == "gateway":
            assert memory >= gateway_mb and cpu == core_share, p.source
        if limit := container["resources"].get("limits", {}).get("memory"):
            assert _memory_mb(limit) >= memory
