"""A running Kafka oracle (tools/kafka-oracle/Oracle.java, built elsewhere), fed one op at a time.

The oracle reads JSON-lines ops on stdin and, after every op, prints what happened (responses,
timer firings, log writes) and then a ``state`` line. ``OracleProcess.send`` writes one op and
returns every line up to and including that op's state line, so a generator can react to
Kafka's answers. ``reset`` starts a fresh coordinator (clock 0, member-id counter 0) in the same
JVM. Only the re-record command uses this; the test suite replays recorded answers.
"""

from __future__ import annotations

import json
import shlex
import subprocess


class OracleError(RuntimeError):
    pass


class OracleProcess:
    def __init__(self, command: str) -> None:
        self.command = command
        self.proc = subprocess.Popen(
            shlex.split(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def _write(self, op: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(op, separators=(",", ":")) + "\n")
        self.proc.stdin.flush()

    def _read(self) -> dict:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise OracleError(f"the oracle ({self.command}) stopped: exit {self.proc.poll()}")
        return json.loads(line)

    def config(self, op: dict) -> None:
        """A ``config`` op: the oracle answers nothing."""
        self._write(op)

    def send(self, op: dict) -> list[dict]:
        """One op; the oracle's lines up to and including its ``state`` line."""
        self._write(op)
        out = []
        while True:
            event = self._read()
            out.append(event)
            if event.get("ev") == "state":
                return out

    def reset(self) -> None:
        self._write({"op": "reset"})
        while self._read().get("ev") != "reset":
            pass

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)
