"""A Spark Connect server for the tests, started as a user starts one: the
installed pyspark's spark-submit running SparkConnectServer (its jar ships in
pyspark 4.x) with sparkjournal's connector jar, local[2], listening on a free
loopback port. The server's Python workers (foreachBatch, Python data
sources, mapInArrow) run this interpreter. Stopped by its pid (the process
group spark-submit's JVM leads, with its Python workers).

Connect clients run in child processes (connect_child.py): a client sets
process-wide state (SPARK_CONNECT_MODE_ENABLED) that would turn the test
session's classic pyspark into a Connect client.
"""
from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import time

import pyspark

from conftest import SPARK_TEST_CONF

CLIENT_MODULES = ("grpc", "grpc_status", "google.rpc", "zstandard")   # pyspark[connect]'s


def client_missing() -> str | None:
    """Why a Connect client cannot run here (a module of pyspark[connect]
    missing: the test extra installs them), or None."""
    import importlib.util
    missing = [name for name in CLIENT_MODULES if importlib.util.find_spec(name.split(".")[0]) is None]
    return (f"Spark Connect client modules missing ({', '.join(missing)}): pip install -e "
            f"'.[test]' installs pyspark[connect]") if missing else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclasses.dataclass
class ConnectServer:
    process: subprocess.Popen
    port: int
    log_path: str

    @property
    def url(self) -> str:
        return f"sc://127.0.0.1:{self.port}"

    def log_tail(self, lines: int = 40) -> str:
        with open(self.log_path, errors="replace") as handle:
            return "".join(handle.readlines()[-lines:])

    def kill(self) -> None:
        """SIGKILL to the server and its Python workers (its process group)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        """SIGTERM (the server's own shutdown), SIGKILL after 20 s."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


def start(jar: str, log_path: str, port: int | None = None, timeout: float = 120.0,
          **conf) -> ConnectServer:
    """A server listening on ``port`` (a free one if None), its output in ``log_path``."""
    home = os.path.dirname(pyspark.__file__)
    port = port or free_port()
    settings = {**SPARK_TEST_CONF, "spark.connect.grpc.binding.port": str(port),
                "spark.connect.grpc.binding.address": "127.0.0.1",
                "spark.pyspark.python": sys.executable, **conf}
    command = [os.path.join(home, "bin", "spark-submit"), "--class",
               "org.apache.spark.sql.connect.service.SparkConnectServer",
               "--master", "local[2]", "--jars", jar]
    for key, value in settings.items():
        command += ["--conf", f"{key}={value}"]
    command.append("spark-internal")
    env = {**os.environ, "SPARK_HOME": home, "PYSPARK_PYTHON": sys.executable}
    env.pop("PYSPARK_GATEWAY_PORT", None)
    with open(log_path, "ab") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env,
                                   start_new_session=True)
    server = ConnectServer(process, port, log_path)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the Spark Connect server exited ({process.returncode}):\n"
                               f"{server.log_tail()}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        time.sleep(0.2)
    server.kill()
    raise RuntimeError(f"the Spark Connect server did not listen on {port} within {timeout} s:\n"
                       f"{server.log_tail()}")
