"""The trainer's learning-rate decay is torch's scheduler machinery (training.loop.lr_schedule)
giving exactly the rates of the formula it replaced: epoch t trains at lr / (1 + ρ·t)."""

import pytest
import torch

from deidlib.training import train
from deidlib.training.loop import lr_schedule

from .conftest import TINY


def _old_rate(lr: float, decay: float, epoch: int) -> float:
    """The hand-written rule the schedule replaced."""
    return lr / (1 + decay * epoch)


@pytest.mark.parametrize("lr", [0.3, 1e-3, 0.9, 0.015])
@pytest.mark.parametrize("decay", [0.0, 0.05, 0.15, 0.5])
@pytest.mark.parametrize("start", [0, 3])
def test_schedule_gives_the_old_rates_bit_for_bit(lr, decay, start):
    p = torch.nn.Parameter(torch.zeros(2))
    opt = torch.optim.SGD([p], lr=123.0)  # a loaded optimizer state may hold any rate
    schedule = lr_schedule(opt, lr, decay, start)
    got = []
    for _ in range(start, start + 40):
        got.append(opt.param_groups[0]["lr"])
        p.grad = torch.ones(2)
        opt.step()
        schedule.step()
    assert got == [_old_rate(lr, decay, ep) for ep in range(start, start + 40)]


def test_negative_decay_is_refused():
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)
    with pytest.raises(ValueError, match="lr_decay"):
        lr_schedule(opt, 0.1, -0.5)


def test_trainer_and_a_resumed_run_follow_the_old_rates(splits, tmp_path):
    from deidlib.training import prepare_tagger
    from deidlib.training.trainer import TrainingInterrupted

    def tagger():
        return prepare_tagger("gru", splits.train, encoding="BIOES", embeddings=None, seed=0, **TINY)

    sents, t = tagger()
    kw = dict(epochs=4, optimizer="sgd", lr=0.3, lr_decay=0.5, batch_size=8, progress=False)
    h = train(t, sents[:40], **kw)
    assert h.column("lr") == [_old_rate(0.3, 0.5, ep) for ep in range(4)]

    def stop(epoch, rec, model):
        if epoch == 2:
            raise TrainingInterrupted("simulated crash")

    sents, t = tagger()
    with pytest.raises(TrainingInterrupted):
        train(t, sents[:40], checkpoint_dir=tmp_path, callbacks=[stop], **kw)
    sents, t = tagger()
    resumed = train(t, sents[:40], checkpoint_dir=tmp_path, resume=True, **kw)
    assert resumed.column("lr") == h.column("lr")
