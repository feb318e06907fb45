#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""bfdedup.py - de-duplication beyond one machine, on a Dask distributed cluster.

Usage:
    bfdedup.py (--scheduler ADDR | --scheduler-file FILE) -N PARTITIONS
               --shard-key HEX --state-dir DIR -o OUTDIR [--run NAME]
               [--workers N] [--shards M] [--task-threads J] [-k LIST] [-t C] [-i] [-z] [-v]
               FILE... [-- BFUNIQ-OPTION...]

De-duplication does not merge by OR as filters do (which copy of a key is
first depends on every earlier line with that key), so the seen-set is cut
by key instead, as crawlers cut theirs: partition i of PARTITIONS holds the
keys bf(5)'s partition function puts there, and sees every copy of them in
input order.

Map: each FILE is cut into byte ranges at line ends (NUL ends with -z), one
Dask task each; a task feeds its range to `bfsplit -N PARTITIONS`, which
writes one piece per partition. Reduce: one task per partition runs
`bfuniq -f STATE_i` over its pieces in range order (so in input order) and
writes OUTDIR/part-NNNNN (partition NNNNN's lines whose key no run saw
before, in input order). -k, -t, -i and -z cut keys alike in both;
BFUNIQ-OPTIONs after `--` (-p 1e-9 --key HEX -n N ...) are bfuniq's.
Each program runs with -j J (--task-threads, default 1): a Dask worker
runs a task per thread, and by default has a thread per core, so the
parallelism is the tasks'; more threads a task only contend for the cores.

The pieces are intermediate: renamed into place whole (bfsplit writes all
of its pieces or none), but not made durable (bfsplit --no-sync): a run
cut short by a crash is run again, and its map tasks write them again. The
states and CURRENT are synced to disk before the run counts as done.

States are kept per run: DIR/RUN/part-NNNNN.bf, read from the run DIR/CURRENT
names (none the first time) and never changed in place: a reduce hard-links
(or copies) the previous state to a temporary name, bfuniq replaces that
atomically, and only then are the output and the new state renamed into
place, output first. A task that dies and is run again starts again from
the same previous state, so it writes the same output and state: no
duplicate, nothing lost. DIR/CURRENT moves to RUN (atomically) once every
partition is done; a run that failed can be run again with the same --run,
and the next day's run (another --run, default: the time) writes only the
keys never seen. DIR/config.json keeps PARTITIONS and the shard key, which
every later run must give alike.

The FILEs, DIR and OUTDIR must be at the same paths for the workers and the
driver: one machine, or a shared file system. -v reports per partition the
lines written and the worker that wrote them:
    bfdedup: partition 2/16: 61234 lines: worker tcp://127.0.0.1:40121 pid 4242
Exit status 0, or 2 with one line on stderr (CURRENT not moved then).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import cloudpickle

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bfdask  # noqa: E402 (beside this file: its ranges, tasks and connection)
from bfdask import Failure  # noqa: E402

# bfdask's task functions run in the workers, which cannot import bfdask:
# they go to them by value, as this file's own do.
cloudpickle.register_pickle_by_value(bfdask)

PROG = "bfdedup"


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                 epilog="OPTIONs after -- are given to every partition's bfuniq.")
    bfdask.add_cluster_arguments(ap)
    ap.add_argument("-N", "--partitions", type=int, required=True, metavar="N")
    ap.add_argument("--shard-key", required=True, metavar="HEX",
                    help="the partitioning key, 32 hex digits, the same every run")
    ap.add_argument("--state-dir", required=True, metavar="DIR")
    ap.add_argument("-o", "--output-dir", required=True, metavar="OUTDIR")
    ap.add_argument("--run", default=time.strftime("%Y%m%dT%H%M%S"), metavar="NAME",
                    help="this run's name (default: the time); the same to run a failed run again")
    ap.add_argument("--workers", type=int, default=1, metavar="N",
                    help="wait for N workers before cutting the input (default 1)")
    ap.add_argument("--shards", type=int, default=0, metavar="M",
                    help="ranges to cut the input into (default: twice the workers' threads)")
    ap.add_argument("--task-threads", type=int, default=1, metavar="J",
                    help="threads of each task's bfsplit or bfuniq (-j; default 1)")
    ap.add_argument("-k", "--field", metavar="LIST")
    ap.add_argument("-t", "--separator", metavar="C")
    ap.add_argument("-i", "--ignore-case", action="store_true")
    ap.add_argument("-z", "--null-data", action="store_true",
                    help="records end with NUL, not newline")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="report each partition's lines and worker on stderr")
    ap.add_argument("files", nargs="+", metavar="FILE", help="the input, read by the workers")
    return bfdask.parse_with_extra(ap, argv)


# ---------------------------------------------------------------- planning (driver)

def key_options(args):
    """The options that cut keys, for bfsplit and bfuniq alike."""
    opts = []
    if args.field:
        opts += ["-k", args.field]
    if args.separator:
        opts += ["-t", args.separator]
    if args.ignore_case:
        opts.append("-i")
    if args.null_data:
        opts.append("-z")
    return opts


# ---------------------------------------------------------------- tasks (workers)

def run_checked(cmd, **kw):
    """Run CMD; its standard error, or raise with it when CMD fails (Dask carries it back)."""
    with tempfile.TemporaryFile() as err:
        status = subprocess.run(cmd, stderr=err, **kw).returncode
        err.seek(0)
        message = err.read().decode(errors="replace").strip()
    if status != 0:
        raise RuntimeError(message or f"{cmd[0]} exited with status {status}")
    return message


def lines_written(report):
    """The lines bfuniq -v --json says it wrote: its report is its last line on stderr."""
    try:
        return json.loads(report.splitlines()[-1])["written"]
    except (IndexError, ValueError, KeyError, TypeError):
        raise RuntimeError(f"bfuniq -v --json gave no report: {report[:300]!r}")


def link_or_copy(source, target):
    """TARGET a new name of SOURCE (a hard link: bfuniq replaces, never writes into, it)."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copyfile(source, target)


def dedup_partition(cmd, pieces, previous, state, output, *maps):
    """Reduce, in a worker: bfuniq -f over one partition's pieces, in input order.

    PREVIOUS (the last run's state, or None) is never changed: the run
    starts from a new name for it, so a task run again starts from the
    same state and writes the same OUTPUT and STATE. Both are renamed
    into place only once bfuniq has finished, the output first. CMD ends
    in -v --json: bfuniq counts the lines it writes (reading the output
    again to count them cost a fifth of the reduce's time)."""
    import socket
    del maps  # the map tasks' results: only their order in the graph matters
    tag = f".{socket.gethostname()}.{os.getpid()}.tmp"
    temp_state, temp_output = state + tag, output + tag
    try:
        if previous is not None:
            link_or_copy(previous, temp_state)
        with open(temp_output, "wb") as out:
            lines = lines_written(run_checked(cmd + ["-f", temp_state] + pieces, stdout=out))
        os.replace(temp_output, output)
        os.replace(temp_state, state)
    finally:
        # bfuniq's lock beside the temporary state (lock.h's name), and what a failure left
        lock = os.path.join(os.path.dirname(temp_state), "." + os.path.basename(temp_state) + ".lock")
        for leftover in (temp_output, temp_state, lock):
            if os.path.exists(leftover):
                os.unlink(leftover)
    return {"output": output, "lines": lines, "pid": os.getpid(), "host": socket.gethostname()}


# ---------------------------------------------------------------- the job (driver)

def check_config(args):
    """DIR/config.json: this run's partitions and key must be the first run's."""
    path = os.path.join(args.state_dir, "config.json")
    mine = {"partitions": args.partitions, "shard_key": args.shard_key.lower()}
    if not os.path.exists(path):
        write_atomically(path, json.dumps(mine) + "\n")
        return
    with open(path) as f:
        kept = json.load(f)
    if kept != mine:
        raise Failure(f"{path}: the states were made with {kept['partitions']} partitions "
                      "and another shard key: give the same -N and --shard-key")


def write_atomically(path, text):
    fd, temp = tempfile.mkstemp(prefix=".", dir=os.path.dirname(path))
    with os.fdopen(fd, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(temp, path)


def previous_run(args):
    """The run DIR/CURRENT names, or None before the first."""
    try:
        with open(os.path.join(args.state_dir, "CURRENT")) as f:
            name = f.read().strip()
    except FileNotFoundError:
        return None
    if name == args.run:
        raise Failure(f"run {args.run} is already done (DIR/CURRENT names it): give another --run")
    return name


def submit_maps(client, args, work):
    """One bfsplit task per range; returns the ranges and their futures."""
    if args.shards <= 0:
        args.shards = 2 * sum(client.nthreads().values())
    ranges = bfdask.plan_ranges([os.path.abspath(p) for p in args.files], args.shards,
                                b"\0" if args.null_data else b"\n")
    # bfsplit renames all its pieces into place at its end, or none: a map
    # task run again writes the same pieces again, whole
    cmd = (["bfsplit", "--no-sync", "-j", str(args.task_threads), "-N", str(args.partitions),
            "--shard-key", args.shard_key] + key_options(args))
    futures = [client.submit(bfdask.run_shard, cmd, path, a, b,
                             os.path.join(work, f"map{r:05d}-part%05d"), pure=False,
                             key=f"bfdedup-map-{args.run}-{r}")
               for r, (path, a, b) in enumerate(ranges)]
    return ranges, futures


def submit_reduces(client, args, work, maps, previous):
    """One bfuniq task per partition, after every map task."""
    cmd = (["bfuniq", "-j", str(args.task_threads)] + key_options(args) + args.extra
           + ["-v", "--json"])
    run_dir = os.path.join(args.state_dir, args.run)
    os.makedirs(run_dir, exist_ok=True)
    futures = []
    for p in range(args.partitions):
        pieces = [os.path.join(work, f"map{r:05d}-part{p:05d}") for r in range(len(maps))]
        before = (os.path.join(args.state_dir, previous, f"part-{p:05d}.bf")
                  if previous is not None else None)
        futures.append(client.submit(
            dedup_partition, cmd, pieces, before, os.path.join(run_dir, f"part-{p:05d}.bf"),
            os.path.join(args.output_dir, f"part-{p:05d}"), *maps, pure=False,
            key=f"bfdedup-reduce-{args.run}-{p}"))
    return futures


def gather(client, args, futures):
    for p, future in enumerate(futures):
        try:
            done = future.result()
        except Exception as e:  # the task's own exception, raised again here
            raise Failure(f"partition {p}/{args.partitions}: {e}")
        if args.verbose:
            where = client.who_has([future]).get(future.key, ()) or ("?",)
            print(f"{PROG}: partition {p}/{args.partitions}: {done['lines']} lines: "
                  f"worker {where[0]} pid {done['pid']}", file=sys.stderr)


def main(argv):
    args = parse_args(argv)
    if not 1 <= args.partitions <= 65536:
        raise Failure(f"-N {args.partitions}: partitions are 1 to 65536")
    if args.task_threads < 1:
        raise Failure(f"--task-threads {args.task_threads}: 1 or more")
    for path in args.files:
        if not os.path.isfile(path):
            raise Failure(f"{path}: not a regular file")
    for d in (args.state_dir, args.output_dir):
        os.makedirs(d, exist_ok=True)
    args.state_dir, args.output_dir = map(os.path.abspath, (args.state_dir, args.output_dir))
    check_config(args)
    previous = previous_run(args)
    with bfdask.connect(args) as client:
        work = tempfile.mkdtemp(prefix=f".bfdedup.{args.run}.", dir=args.output_dir)
        try:
            _, maps = submit_maps(client, args, work)
            gather(client, args, submit_reduces(client, args, work, maps, previous))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    # every partition done: this run's states are the ones to start from
    write_atomically(os.path.join(args.state_dir, "CURRENT"), args.run + "\n")
    if previous is not None:
        shutil.rmtree(os.path.join(args.state_dir, previous), ignore_errors=True)


if __name__ == "__main__":
    bfdask.run_main(PROG, main)
