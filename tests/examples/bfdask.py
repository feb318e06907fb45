#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bfdask.py - the README's map-reduce recipe on a Dask distributed cluster.

Usage:
    bfdask.py (--scheduler ADDR | --scheduler-file FILE) --like TEMPLATE
              -o OUTPUT [--count] [--workers N] [--shards N] [-z] [-v]
              FILE... [-- OPTION...]

Map: each FILE is cut into byte ranges at line ends (NUL ends with -z),
one per shard, and every range becomes a Dask task. The task, in whichever
worker process the scheduler picks, reads its range of the file itself and
feeds it to `bfbuild --like TEMPLATE -o SHARD` (with --count, to `bfcount
--like TEMPLATE -o SHARD`, TEMPLATE then being a sketch). OPTIONs after
`--` (-k 2 -t , ...) are given to every shard's program. Reduce: the
driver waits for every task, then `bfmerge -o OUTPUT` ORs the shards
(registers, for sketches) into the filter one serial run would have
written, byte for byte. With --count it also prints the count, as bfcount.

The FILEs, TEMPLATE and the shard directory must be at the same paths for
the workers and the driver: one machine, or a shared file system. Shards
are written into a fresh directory beside OUTPUT and removed at the end.
A task's result is small (its shard's path, the worker's address and process
id), never the shard itself, which may be gigabytes. A retried task writes
the same shard again (bfbuild and bfcount replace it atomically), so what
is merged is one complete shard per range whatever the retries.

-v reports on stderr, per shard, its range and the worker that built it:
    bfdask: shard 2/6: urls.txt bytes 1048583-2097166: worker tcp://127.0.0.1:40121 pid 4242
Exit status 0, or 2 with one line on stderr (no OUTPUT is written then).

It runs with the Debian package python3-distributed; tests/scaleout_dask.bats
runs it against a scheduler and workers started on 127.0.0.1.
"""
import argparse
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from distributed import Client

PROG = "bfdask"
CHUNK = 1 << 20  # bytes read and piped at a time, in the tasks and at cuts


class Failure(Exception):
    """A problem worth one line on stderr and exit status 2."""


def add_cluster_arguments(ap):
    """The options that find the cluster: --scheduler or --scheduler-file, --wait."""
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", metavar="ADDR", help="tcp://HOST:PORT")
    where.add_argument("--scheduler-file", metavar="FILE",
                       help="the file dask scheduler --scheduler-file wrote")
    ap.add_argument("--wait", type=float, default=60, metavar="SECONDS",
                    help="how long to wait for the scheduler and workers (default 60)")


def parse_with_extra(ap, argv):
    """ap's arguments before `--`; those after it, for the programs, in .extra."""
    cut = argv.index("--") if "--" in argv else len(argv)
    args = ap.parse_args(argv[:cut])
    args.extra = argv[cut + 1:]
    return args


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 epilog="OPTIONs after -- are given to every shard's bfbuild or bfcount.")
    add_cluster_arguments(ap)
    ap.add_argument("--like", required=True, metavar="TEMPLATE",
                    help="the template every shard copies its shape and key from")
    ap.add_argument("-o", "--output", required=True, metavar="OUTPUT")
    ap.add_argument("--count", action="store_true",
                    help="sketches with bfcount instead of filters with bfbuild")
    ap.add_argument("--workers", type=int, default=1, metavar="N",
                    help="wait for N workers before cutting the input (default 1)")
    ap.add_argument("--shards", type=int, default=0, metavar="N",
                    help="ranges to cut the input into (default: the workers' threads)")
    ap.add_argument("-z", "--null-data", action="store_true",
                    help="records end with NUL, not newline")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="report each shard's range and worker on stderr")
    ap.add_argument("files", nargs="+", metavar="FILE", help="the input, read by the workers")
    return parse_with_extra(ap, argv)


def find_cut(f, target, sep, size):
    """The offset just after the first SEP at or after TARGET (or SIZE)."""
    f.seek(target)
    pos = target
    while pos < size:
        block = f.read(CHUNK)
        if not block:
            break
        at = block.find(sep)
        if at >= 0:
            return pos + at + 1
        pos += len(block)
    return size


def cut_file(path, pieces, sep):
    """[(path, start, end)]: PIECES ranges of PATH, each ending after SEP."""
    size = os.path.getsize(path)
    cuts = [0]
    with open(path, "rb") as f:
        for i in range(1, pieces):
            cut = find_cut(f, max(size * i // pieces - 1, 0), sep, size)
            if cut > cuts[-1] and cut < size:
                cuts.append(cut)
    cuts.append(size)
    return [(path, a, b) for a, b in zip(cuts, cuts[1:])] or [(path, 0, 0)]


def plan_ranges(files, shards, sep):
    """Every file cut into shares of SHARDS in proportion to its size."""
    sizes = [os.path.getsize(p) for p in files]
    total = max(sum(sizes), 1)
    ranges = []
    for path, size in zip(files, sizes):
        ranges += cut_file(path, max(1, round(shards * size / total)), sep)
    return ranges


# sendfile(2) errors that mean "not for these files here": then read and write
NO_SENDFILE = (errno.EINVAL, errno.ENOSYS, errno.ENOTSOCK, errno.EOPNOTSUPP)


def copy_range(f, start, end, pipe):
    """Bytes START..END of the file F into PIPE: by sendfile(2) where the
    system does it for a pipe (no copy through Python, which took a sixth
    of the CPU time bfsplit took on the same bytes), else read and written."""
    at = start
    try:
        while at < end:
            sent = os.sendfile(pipe.fileno(), f.fileno(), at, min(end - at, 1 << 30))
            if sent == 0:
                return  # the file is shorter than planned: the program sees its end
            at += sent
        return
    except OSError as e:
        if at > start or e.errno not in NO_SENDFILE:
            raise
    f.seek(start)
    while at < end:
        block = f.read(min(end - at, CHUNK))
        if not block:
            break
        pipe.write(block)
        at += len(block)


def run_shard(cmd, path, start, end, shard):
    """Runs in a worker: CMD -o SHARD fed bytes START..END of PATH.

    Returns what the driver reports; raises if the program fails, so the
    driver sees the failure (Dask carries the exception back)."""
    import socket
    with tempfile.TemporaryFile() as err, open(path, "rb") as f:
        prog = subprocess.Popen(cmd + ["-o", shard], stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=err)
        try:
            copy_range(f, start, end, prog.stdin)
            prog.stdin.close()
        except BrokenPipeError:
            pass  # it stopped reading: its status and message say why
        status = prog.wait()
        err.seek(0)
        message = err.read().decode(errors="replace").strip()
    if status != 0:
        raise RuntimeError(message or f"{cmd[0]} exited with status {status}")
    return {"shard": shard, "pid": os.getpid(), "host": socket.gethostname()}


def program(args):
    """The command each shard runs, less its -o."""
    cmd = ["bfcount" if args.count else "bfbuild", "--like", os.path.abspath(args.like)]
    if args.null_data:
        cmd.append("-z")
    return cmd + args.extra


def build_shards(client, args, shard_dir):
    """Submits one task per range; returns the shards' paths in order."""
    if args.shards <= 0:
        args.shards = sum(client.nthreads().values())
    ranges = plan_ranges([os.path.abspath(p) for p in args.files], args.shards,
                         b"\0" if args.null_data else b"\n")
    cmd = program(args)
    suffix = ".hll" if args.count else ".bf"
    futures = [client.submit(run_shard, cmd, path, a, b,
                             os.path.join(shard_dir, f"shard{i}{suffix}"), pure=False)
               for i, (path, a, b) in enumerate(ranges, 1)]
    shards = []
    for i, ((path, a, b), future) in enumerate(zip(ranges, futures), 1):
        try:
            done = future.result()
        except Exception as e:  # the task's own exception, raised again here
            raise Failure(f"shard {i}/{len(ranges)} ({path} bytes {a}-{b}): {e}")
        if args.verbose:
            print(f"{PROG}: shard {i}/{len(ranges)}: {os.path.basename(path)} bytes {a}-{b}: "
                  f"worker {future_worker(client, future)} pid {done['pid']}", file=sys.stderr)
        shards.append(done["shard"])
    return shards


def future_worker(client, future):
    """The address of the worker holding FUTURE's result (for -v)."""
    where = client.who_has([future]).get(future.key, ())
    return where[0] if where else "?"


def merge(args, shards):
    """bfmerge the shards into OUTPUT; with --count, print the count."""
    done = subprocess.run(["bfmerge", "-o", args.output] + shards,
                          stderr=subprocess.PIPE)
    if done.returncode != 0:
        raise Failure(done.stderr.decode(errors="replace").strip())
    if args.count:
        done = subprocess.run(["bfcount", "-s", args.output], stderr=subprocess.PIPE)
        if done.returncode != 0:
            raise Failure(done.stderr.decode(errors="replace").strip())


def scheduler_address(path, wait):
    """The address in the scheduler's file, read once it is there and whole.

    Dask's own Client(scheduler_file=) would wait for the file forever."""
    deadline = time.monotonic() + wait
    while True:
        try:
            with open(path) as f:
                return json.load(f)["address"]
        except (OSError, ValueError, KeyError, TypeError) as e:
            if time.monotonic() >= deadline:
                raise Failure(f"{path}: no scheduler address after {wait:g} s ({e})")
        time.sleep(0.1)


def connect(args):
    address = args.scheduler or scheduler_address(args.scheduler_file, args.wait)
    try:
        client = Client(address, timeout=args.wait)
        client.wait_for_workers(args.workers, timeout=args.wait)
    except Exception as e:
        raise Failure(f"cannot use the scheduler: {e}")
    return client


def main(argv):
    args = parse_args(argv)
    for path in [args.like] + args.files:
        if not os.path.isfile(path):
            raise Failure(f"{path}: not a regular file")
    with connect(args) as client:
        shard_dir = tempfile.mkdtemp(prefix=".bfdask.",
                                     dir=os.path.dirname(os.path.abspath(args.output)))
        try:
            merge(args, build_shards(client, args, shard_dir))
        finally:
            shutil.rmtree(shard_dir, ignore_errors=True)


def run_main(prog, main):
    """main(argv), its Failure one line on stderr and status 2."""
    # stopped (make's ^C, kill): the work directory is removed all the same
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        main(sys.argv[1:])
    except Failure as e:
        print(f"{prog}: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    run_main(PROG, main)
