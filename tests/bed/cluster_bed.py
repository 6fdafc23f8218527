"""A Spark standalone cluster of separate hosts on one machine, for tests and
for a user who wants to see sparkjournal on one.

    python tests/bed/cluster_bed.py --hosts 2 --dir /tmp/bed

Each host is a pair of Linux namespaces (mount and UTS, ``unshare -m -u``)
held open by a sleeping holder process: its own host name (``sjhost1``, ...),
its own loopback address (127.0.0.2, ...), and its own private folder
(``<dir>/private/<host>``) mounted at the node root ``<dir>/node`` - the same
path on every host, each host's own "local disk". ``<dir>/shared`` is seen
alike by every namespace: it stands in for HDFS or S3 (commit logs,
checkpoints). A generated hosts file mounted over /etc/hosts in every
namespace names every host. One more namespace, the edge (``sjedge``,
127.0.0.1), mounts nothing over the node root: a driver there sees no node's
data, as a client-mode driver on an edge machine. The master runs in the edge
namespace; each host runs one worker (1 core, 1 GiB) whose executors, and
their Python workers, inherit the host's namespaces and address. The master
and the workers run from a Spark folder of their own, ``<dir>/spark`` (its
own SPARK_HOME: a hard-linked copy of the installed pyspark's distribution,
no sparkjournal jar in it), as a cluster's own Spark installation: whatever
of sparkjournal's the executors load, the application shipped them.

Every process the bed starts is recorded by pid and stopped by ``stop()``:
drivers and workers are started in process groups of their own and killed by
group, and any process left in a host's mount namespace is killed by pid.
``kill_host`` is a host dying: everything in its namespaces is SIGKILLed
(worker, executors, Python workers, any driver there); its private folder
stays, as a disk does. The master forgets a worker 15 s after its heartbeats
stop (``spark.worker.timeout=15``: less loses live workers on a busy two-core machine).

Requires root (or user namespaces), ``unshare`` and ``nsenter`` from
util-linux, and a JDK; ``unshare_unavailable()`` says why not where it cannot
run.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

EDGE = "sjedge"
EDGE_ADDRESS = "127.0.0.1"
START_TIMEOUT_S = 180
WORKER_TIMEOUT_S = 15


def unshare_unavailable() -> str | None:
    """Why the bed cannot run on this machine, or None when it can."""
    if not sys.platform.startswith("linux"):
        return f"Linux namespaces are needed, this is {sys.platform}"
    for tool in ("unshare", "nsenter", "java"):
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH"
    probe = subprocess.run(["unshare", "-m", "-u", "--propagation", "private", "--", "true"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare -m -u is not permitted here: {probe.stderr.strip() or probe.returncode}"
    try:
        with socket.socket() as sock:
            sock.bind(("127.0.0.2", 0))
    except OSError as error:
        return f"loopback address 127.0.0.2 cannot be bound: {error}"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((EDGE_ADDRESS, 0))
        return sock.getsockname()[1]


def _spark_home() -> Path:
    import pyspark
    return Path(pyspark.__file__).parent


def _kill_group(child: subprocess.Popen | None) -> None:
    if child is None or child.poll() is not None:
        return
    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait()


class ClusterBed:
    """A standalone master and ``hosts`` workers on separate namespaces (module doc)."""

    def __init__(self, base, hosts: int = 2):
        self.base = Path(base).resolve()
        self.shared = self.base / "shared"
        self.node_root = self.base / "node"
        self.host_names = [f"sjhost{i + 1}" for i in range(hosts)]
        self.start_seconds = 0.0
        self._holders: dict[str, subprocess.Popen] = {}
        self._workers: dict[str, subprocess.Popen] = {}
        self._drivers: list[subprocess.Popen] = []
        self._master: subprocess.Popen | None = None
        self._master_port = self._ui_port = 0

    # --- what the bed is ------------------------------------------------------------

    def address(self, host: str) -> str:
        return EDGE_ADDRESS if host == EDGE else f"127.0.0.{self.host_names.index(host) + 2}"

    def private(self, host: str) -> Path:
        """The host's own disk, as seen from outside the bed's namespaces."""
        return self.base / "private" / host

    @property
    def master_url(self) -> str:
        return f"spark://{EDGE_ADDRESS}:{self._master_port}"

    def driver_conf(self, on: str | None = None) -> dict:
        """The Spark confs of a client-mode driver on host ``on`` (None: the edge)."""
        host = on or EDGE
        return {"spark.master": self.master_url, "spark.driver.host": host,
                "spark.driver.bindAddress": self.address(host),
                "spark.pyspark.python": sys.executable, "spark.ui.enabled": "false",
                "spark.executor.memory": "512m", "spark.executor.cores": "1",
                "spark.cores.max": str(len(self.host_names))}

    def driver_command(self, argv: list[str], on: str | None = None) -> list[str]:
        """``argv`` run inside host ``on``'s namespaces (None: the edge's)."""
        holder = self._holders[on or EDGE]
        return ["nsenter", "-t", str(holder.pid), "-m", "-u", "--", *argv]

    def driver_env(self, on: str | None = None, env: dict | None = None) -> dict:
        host = on or EDGE
        return {**os.environ, **self._spark_env(), **(env or {}),
                "SPARK_LOCAL_IP": self.address(host), "SPARK_LOCAL_HOSTNAME": host,
                "SJ_BED_CONF": json.dumps(self.driver_conf(on)), "SJ_BED_BASE": str(self.base)}

    # --- lifecycle --------------------------------------------------------------------

    def start(self) -> "ClusterBed":
        started = time.monotonic()
        for folder in (self.shared, self.node_root, self.base / "logs", self.base / "conf"):
            folder.mkdir(parents=True, exist_ok=True)
        hosts_file = self.base / "hosts"
        hosts_file.write_text(f"{EDGE_ADDRESS} localhost {EDGE}\n::1 localhost\n" + "".join(
            f"{self.address(h)} {h}\n" for h in self.host_names))
        try:
            self._copy_spark()
            for host in [EDGE, *self.host_names]:
                self._hold(host, hosts_file)
            self._start_master()
            for host in self.host_names:
                self._start_worker(host)
            self._wait_workers(set(self.host_names))
        except BaseException:
            self.stop()
            raise
        self.start_seconds = time.monotonic() - started
        return self

    def stop(self) -> None:
        """Stops every process the bed started, by pid; idempotent."""
        for child in self._drivers:
            _kill_group(child)
        for host in list(self._workers):
            self._kill_namespace(host)
        _kill_group(self._master)
        for host in list(self._holders):
            self._kill_namespace(host)
            _kill_group(self._holders.pop(host))
        self._drivers.clear()
        self._master = None

    def __enter__(self) -> "ClusterBed":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def kill_host(self, host: str) -> None:
        """The host dies: SIGKILL to everything in its namespaces but the holder."""
        self._kill_namespace(host)

    def restart_host(self, host: str) -> None:
        """The host is back with its disk: a new worker, registered with the master."""
        self._start_worker(host)
        self._wait_workers({host})

    def alive_workers(self) -> list[str]:
        """The host names of the workers the master counts as alive."""
        url = f"http://{EDGE_ADDRESS}:{self._ui_port}/json/"
        with urllib.request.urlopen(url, timeout=5) as response:
            state = json.load(response)
        return sorted(w["host"] for w in state.get("workers", []) if w.get("state") == "ALIVE")

    # --- drivers -----------------------------------------------------------------------

    def run_driver(self, argv: list[str], on: str | None = None, timeout: float = 600,
                   env: dict | None = None) -> subprocess.CompletedProcess:
        """Runs a driver program to its end inside ``on``'s namespaces."""
        child = self.popen_driver(argv, on, env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        try:
            out, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(child)
            out, err = child.communicate()
            err += f"\n[cluster_bed] driver killed after {timeout:.0f}s"
        return subprocess.CompletedProcess(argv, child.returncode, out, err)

    def popen_driver(self, argv: list[str], on: str | None = None, env: dict | None = None,
                     **kwargs) -> subprocess.Popen:
        """Starts a driver in a process group of its own; ``stop()`` kills it."""
        child = subprocess.Popen(self.driver_command(argv, on), env=self.driver_env(on, env),
                                 cwd=self.base, start_new_session=True, **kwargs)
        self._drivers.append(child)
        return child

    # --- inside -----------------------------------------------------------------------

    def _spark_env(self, home: Path | None = None) -> dict:
        return {"SPARK_HOME": str(home or _spark_home()), "SPARK_CONF_DIR": str(self.base / "conf"),
                "PYSPARK_PYTHON": sys.executable}

    @property
    def cluster_spark_home(self) -> Path:
        """The master's and workers' own Spark folder (module doc)."""
        return self.base / "spark"

    def _copy_spark(self) -> None:
        home = self.cluster_spark_home
        if home.exists():
            shutil.rmtree(home)
        home.mkdir()
        for part in ("bin", "sbin", "jars", "python", "conf"):
            source = _spark_home() / part
            if source.is_dir():
                subprocess.run(["cp", "-al", str(source), str(home / part)], check=True)
        for jar in (home / "jars").glob("*sparkjournal*"):
            jar.unlink()

    def _hold(self, host: str, hosts_file: Path) -> None:
        """Creates ``host``'s namespaces, held open by a sleeping process."""
        ready = self.base / "logs" / f"{host}.ready"
        ready.unlink(missing_ok=True)
        mounts = [f"mount --bind {hosts_file} /etc/hosts"]
        if host != EDGE:
            self.private(host).mkdir(parents=True, exist_ok=True)
            mounts.append(f"mount --bind {self.private(host)} {self.node_root}")
        script = " && ".join([f"hostname {host}", *mounts, f"touch {ready}", "exec sleep infinity"])
        self._holders[host] = subprocess.Popen(
            ["unshare", "-m", "-u", "--propagation", "private", "--", "sh", "-c", script],
            start_new_session=True, stdout=subprocess.DEVNULL,
            stderr=open(self.base / "logs" / f"{host}.holder.log", "w"))
        self._wait(lambda: ready.exists(), f"the namespaces of {host}",
                   self.base / "logs" / f"{host}.holder.log", self._holders[host])

    def _java(self, host: str, main: str, args: list[str], log_name: str) -> subprocess.Popen:
        env = {**os.environ, **self._spark_env(self.cluster_spark_home), "SPARK_DAEMON_MEMORY": "256m",
               "SPARK_LOCAL_IP": self.address(host), "SPARK_LOCAL_HOSTNAME": host,
               "SPARK_MASTER_OPTS": f"-Dspark.worker.timeout={WORKER_TIMEOUT_S}",
               "SPARK_WORKER_OPTS": "-Dspark.worker.cleanup.enabled=false"}
        spark_class = str(self.cluster_spark_home / "bin" / "spark-class")
        log = open(self.base / "logs" / log_name, "a")
        return subprocess.Popen(self.driver_command([spark_class, main, *args], host),
                                env=env, cwd=self.base, start_new_session=True,
                                stdout=log, stderr=subprocess.STDOUT)

    def _start_master(self) -> None:
        self._master_port, self._ui_port = _free_port(), _free_port()
        self._master = self._java(EDGE, "org.apache.spark.deploy.master.Master", [
            "--host", EDGE_ADDRESS, "--port", str(self._master_port),
            "--webui-port", str(self._ui_port)], "master.log")

        def answers() -> bool:
            try:
                self.alive_workers()
                return True
            except OSError:
                return False
        self._wait(answers, "the master", self.base / "logs" / "master.log", self._master)

    def _start_worker(self, host: str) -> None:
        work = self.base / "work" / host
        work.mkdir(parents=True, exist_ok=True)
        self._workers[host] = self._java(host, "org.apache.spark.deploy.worker.Worker", [
            "--host", host, "--cores", "1", "--memory", "1g", "--work-dir", str(work),
            "--webui-port", "0", self.master_url], f"worker-{host}.log")

    def _wait_workers(self, hosts: set) -> None:
        self._wait(lambda: hosts <= set(self.alive_workers()),
                   f"worker(s) {', '.join(sorted(hosts))} to register",
                   self.base / "logs" / f"worker-{sorted(hosts)[0]}.log",
                   self._workers[sorted(hosts)[0]])

    def _wait(self, ready, what: str, log: Path, child: subprocess.Popen) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready():
            if child.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
                why = f"exited {child.returncode}" if child.poll() is not None else "timed out"
                raise RuntimeError(f"cluster bed: {what} {why}; {log}:\n{tail}")
            time.sleep(0.2)

    def processes_on(self, host: str) -> list[int]:
        """The pids in ``host``'s mount namespace, its holder left out."""
        holder = self._holders.get(host)
        if holder is None or holder.poll() is not None:
            return []
        namespace = os.readlink(f"/proc/{holder.pid}/ns/mnt")
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != holder.pid:
                try:
                    if os.readlink(f"/proc/{entry}/ns/mnt") == namespace:
                        found.append(int(entry))
                except OSError:
                    continue              # exited while we looked
        return found

    def _kill_namespace(self, host: str) -> None:
        """SIGKILLs the host's worker group and every other process in its mount
        namespace (executors, Python workers, drivers), by pid; not the holder."""
        _kill_group(self._workers.pop(host, None))
        for _ in range(10):               # a child forked while we kill is caught next pass
            found = self.processes_on(host)
            if not found:
                return
            for pid in found:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.2)
        raise RuntimeError(f"cluster bed: processes {self.processes_on(host)} on {host} survive SIGKILL")

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Start a multi-host Spark bed on this machine.")
    parser.add_argument("--hosts", type=int, default=2)
    parser.add_argument("--dir", required=True, help="the bed's folder (created)")
    args = parser.parse_args(argv)
    reason = unshare_unavailable()
    if reason:
        print(f"cluster_bed: cannot run here: {reason}", file=sys.stderr)
        return 2
    with ClusterBed(args.dir, hosts=args.hosts).start() as bed:
        print(f"{len(bed.host_names)} hosts up in {bed.start_seconds:.1f}s: master {bed.master_url}")
        print(f"journal root (each host's own disk): {bed.node_root}; shared: {bed.shared}")
        conf = " ".join(f"--conf {k}={v}" for k, v in bed.driver_conf().items())
        print("a driver on the edge (sees no node root):")
        print(f"  {' '.join(bed.driver_command(['pyspark'], None))} {conf}")
        print("a driver on sjhost1: the same with -t of its holder, "
              f"{bed._holders[bed.host_names[0]].pid}, and spark.driver.host=sjhost1")
        print("Ctrl-C stops every process of the bed.")
        try:
            signal.pause()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
