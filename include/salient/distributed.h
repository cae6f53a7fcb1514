#pragma once
// The process world of a run: one process, or N ranks launched by Open MPI's mpirun (or Slurm's srun
// with Open MPI's PMIx) when salient was built with MPI (docs/distributed.md). Everything here is a
// no-op with one process, so callers need no #ifdef: a build without MPI, or a plain `salient ...`,
// is rank 0 of 1.
#include <cstddef>
#include <string>

namespace salient::dist {

// Joins the MPI world when a launcher started this process (its environment says so); otherwise,
// or in a build without MPI, stays one process. Call once, first thing in main.
void init(int* argc, char*** argv);
// Leaves it (MPI_Finalize); call once before a normal exit.
void finalize();
// One rank failed with `message`: print it (once per rank) and end every rank with `code`, so the
// others never wait forever at a collective. With one process: just returns.
void abort_all(int code);

int rank();
int size();
inline bool is_root() { return rank() == 0; }
inline bool sharded() { return size() > 1; }
// "MPI (Open MPI 4.1.4)" or "none": what this build can use.
std::string engine();

void barrier();
// Element-wise sum across ranks, in place, of `count` floats / doubles (every rank the result).
void allreduce_sum(float* data, size_t count);
void allreduce_sum(double* data, size_t count);
// The same value on every rank: rank 0's (a status, a decision).
long long broadcast_from_root(long long value);

}  // namespace salient::dist
