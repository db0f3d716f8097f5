"""Shared by the CLI tests: run a command in-process, and check a refusal."""
from spacy_punctgen import cli


def run(capsys, *argv):
    """``cli.main(argv)`` in this process: (exit status, stdout, stderr)."""
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, *argv):
    """A refusal: exit status 1, one line ``punctgen restore: error: [Ennn] ...``, no traceback."""
    code, out, err = run(capsys, *argv)
    assert code == 1, (code, out, err)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("punctgen restore: error: [E"), err
    return lines[0]
