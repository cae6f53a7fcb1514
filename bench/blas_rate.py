"""The sgemm rate of the BLAS behind the torch this Python imports (a 1536² product, median of five
after two warm-ups): the FLOP floors of bench/hf_vs_captum.py divide by it. Shared by its two
processes' sides (bench/peer_side.py)."""
import statistics
import time

import torch


def sgemm_gflops(n=1536):
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(2):
        torch.mm(a, b)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        torch.mm(a, b)
        times.append(time.perf_counter() - t0)
    return 2.0 * n ** 3 / statistics.median(times) / 1e9
