"""PyTorch c10d's Gloo allreduce (Debian python3-torch, the same LibTorch 1.13 as salient's) on the
buffer bench_allreduce measures with Open MPI: median milliseconds over ITERATIONS, 2 processes.
    python3 bench/allreduce_gloo.py [FLOATS] [ITERATIONS] [RANKS]"""
import json
import os
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def worker(rank, world, floats, iterations, init_file, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank, world_size=world)
    buf = torch.full((floats,), 1.0 + rank, dtype=torch.float32)
    times = []
    for i in range(-3, iterations):
        dist.barrier()
        t0 = time.perf_counter()
        dist.all_reduce(buf)
        t = (time.perf_counter() - t0) * 1e3
        if i >= 0:
            times.append(t)
    times.sort()
    if rank == 0:
        out.put({"engine": f"c10d Gloo (torch {torch.__version__})", "ranks": world, "floats": floats,
                 "mb": round(floats * 4 / 1e6, 1), "median_ms": round(times[len(times) // 2], 2),
                 "min_ms": round(times[0], 2)})
    dist.destroy_process_group()


if __name__ == "__main__":
    floats = int(sys.argv[1]) if len(sys.argv) > 1 else 11000000
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    world = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    init_file = os.path.join(tempfile.mkdtemp(), "rendezvous")
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    mp.spawn(worker, args=(world, floats, iterations, init_file, out), nprocs=world)
    print(json.dumps(out.get()))
