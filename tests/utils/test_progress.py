"""Progress bars and epoch lines: nothing without verbose, one formatted line at verbose=2."""

from skembed.utils._progress import progress, report_epoch

RECORD = {"epoch": 3, "loss": 0.123456, "valid_loss": None, "seconds": 1.2}


def test_epoch_line_at_verbose_two(capsys):
    bar = progress(total=5, verbose=2, desc="E")
    report_epoch(bar, RECORD, 2)
    assert bar.n == 1 and bar.postfix == "loss=0.1235"
    bar.close()
    out = capsys.readouterr()
    lines = [ln for ln in (out.out + out.err).splitlines() if ln.startswith("epoch ")]
    assert lines == ["epoch 3: loss=0.1235 1.20 s"]  # valid_loss=None is not shown


def test_nothing_is_shown_without_verbose(capsys):
    bar = progress(range(3), verbose=False)
    assert list(bar) == [0, 1, 2] and bar.disable
    report_epoch(progress(total=2, verbose=0), RECORD, 0)
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""
