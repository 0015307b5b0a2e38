"""Helpers shared by the CLI tests."""

from traincost.cli import main


def run(args, capsys):
    """Run the CLI in-process: (exit code, stdout, stderr)."""
    rc = main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def with_flags(base, flags):
    """``base`` with each (flag, value) pair of ``flags`` replaced or appended."""
    args = list(base)
    for name, value in zip(flags[::2], flags[1::2]):
        if name in args:
            args[args.index(name) + 1] = value
        else:
            args += [name, value]
    return args
