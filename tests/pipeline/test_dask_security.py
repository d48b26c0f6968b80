"""The Dask path is closed by default: the local cluster of ``deidlib deidentify --engine dask``
listens with TLS and a certificate made for the run, so a client without it (plain TCP, TLS without
credentials, TLS with credentials of its own) cannot connect and run code on the workers, which hold
the original notes; a remote scheduler without TLS is refused unless ``--insecure-scheduler``."""

from __future__ import annotations

import argparse

import pytest

from deidlib.cli import main
from deidlib.commands._safety import UsageError
from deidlib.commands.deidentify import _check_scheduler

pytest.importorskip("dask.distributed")


def test_local_cluster_is_tls_and_refuses_a_plain_client():
    from dask.distributed import Client
    from distributed.security import Security

    from deidlib.pipeline.run import _local_cluster

    cluster = _local_cluster(1)
    try:
        addr = cluster.scheduler_address
        assert addr.startswith("tls://127.0.0.1:"), addr
        for kwargs in ({"address": addr}, {"address": "tcp://" + addr[len("tls://"):]},
                       {"address": addr, "security": Security.temporary()}):
            with pytest.raises(Exception):  # noqa: B017 - refused at the handshake, whichever way
                Client(**kwargs, timeout=5)
        with Client(cluster) as own:  # the run's own client holds the credentials
            assert own.submit(sum, [1, 2], pure=False).result() == 3
    finally:
        cluster.close()


def _args(scheduler, insecure=False):
    return argparse.Namespace(scheduler=scheduler, insecure_scheduler=insecure)


@pytest.mark.parametrize("address", ["tcp://10.0.0.5:8786", "10.0.0.5:8786", "ws://h:1", "ucx://h:1"])
def test_a_remote_scheduler_without_tls_is_refused_unless_insecure(address):
    with pytest.raises(UsageError, match="not a tls:// address"):
        _check_scheduler(_args(address))
    _check_scheduler(_args(address, insecure=True))  # the user said so
    _check_scheduler(_args("tls://10.0.0.5:8786"))


def test_insecure_scheduler_without_a_scheduler_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("x")
    assert main(["deidentify", str(tmp_path / "in"), str(tmp_path / "o"), "--engine", "dask",
                 "--insecure-scheduler", "--no-progress"]) == 2
    assert "--insecure-scheduler is for --scheduler" in capsys.readouterr().err
    assert main(["deidentify", str(tmp_path / "in"), str(tmp_path / "o"), "--engine", "dask", "--scheduler",
                 "tcp://127.0.0.1:1", "--no-progress"]) == 2
    assert "not a tls:// address" in capsys.readouterr().err


def test_the_command_runs_on_the_tls_cluster(tmp_path, monkeypatch, capsys):
    """``deidentify --engine dask`` without ``--scheduler`` runs on :func:`_local_cluster` (TLS) and
    writes every note."""
    import deidlib.pipeline.run as run_mod
    from deidlib.corpus import Document, Span
    from deidlib.corpus.i2b2 import write_i2b2_dir

    text = "Pt stable overnight. Plan: follow up in clinic.\n"
    write_i2b2_dir([Document(f"{k}-01", text, [Span.of(text, 40, 46, "HOSPITAL")], str(k)) for k in range(5)],
                   tmp_path / "in")
    seen, real = [], run_mod._local_cluster

    def spy(workers):
        cluster = real(workers)
        seen.append(cluster.scheduler_address)
        return cluster

    monkeypatch.setattr(run_mod, "_local_cluster", spy)
    assert main(["deidentify", str(tmp_path / "in"), str(tmp_path / "o"), "--engine", "dask", "--workers", "1",
                 "--spans", "input", "--replace", "mask", "--no-progress"]) == 0, capsys.readouterr().err
    assert len(seen) == 1 and seen[0].startswith("tls://")
    assert len(list((tmp_path / "o").glob("*.xml"))) == 5
