#include "salient/distributed.h"

#include <algorithm>
#include <cstdlib>

#ifdef SALIENT_WITH_MPI
#include <mpi.h>
#endif

namespace salient::dist {

namespace {
int g_rank = 0, g_size = 1;
bool g_mpi = false;  // MPI_Init was called (a launcher started us)

#ifdef SALIENT_WITH_MPI
// Launchers that set these: Open MPI's mpirun (OMPI_*), PMIx (srun --mpi=pmix), PMI-1/2 (srun).
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(v)) return true;
  return false;
}
#endif
}  // namespace

void init(int* argc, char*** argv) {
#ifdef SALIENT_WITH_MPI
  // A plain `salient ...` does not start MPI at all: MPI_Init as a singleton costs ~0.1 s and
  // talks to no one.
  if (!launched_by_mpi()) return;
#ifdef OMPI_MAJOR_VERSION
  // salient's allreduces are gradients (tens of MB). Open MPI 4.1's default choice for them took
  // 157 ms for 44 MB with 2 ranks on this machine, its ring algorithm 14-18 ms and PyTorch's Gloo
  // 44 ms (bench/allreduce.sh, docs/distributed.md): use the ring unless the user chose otherwise
  // (setenv does not overwrite their OMPI_MCA_* settings). Read by Open MPI at MPI_Init.
  setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
  setenv("OMPI_MCA_coll_tuned_allreduce_algorithm", "4", 0);
#endif
  int provided = 0;
  // FUNNELED: only the main thread calls MPI; OpenMP and LibTorch's pools never do.
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  g_mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
#else
  (void)argc;
  (void)argv;
#endif
}

void finalize() {
#ifdef SALIENT_WITH_MPI
  if (g_mpi) MPI_Finalize();
  g_mpi = false;
#endif
}

void abort_all(int code) {
#ifdef SALIENT_WITH_MPI
  if (g_mpi && g_size > 1) MPI_Abort(MPI_COMM_WORLD, code);
#else
  (void)code;
#endif
}

int rank() { return g_rank; }
int size() { return g_size; }

std::string engine() {
#ifdef SALIENT_WITH_MPI
#ifdef OMPI_MAJOR_VERSION
  return "MPI (Open MPI " + std::to_string(OMPI_MAJOR_VERSION) + "." + std::to_string(OMPI_MINOR_VERSION) + "." +
         std::to_string(OMPI_RELEASE_VERSION) + ")";
#else
  return "MPI";
#endif
#else
  return "none";
#endif
}

void barrier() {
#ifdef SALIENT_WITH_MPI
  if (g_mpi && g_size > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

#ifdef SALIENT_WITH_MPI
namespace {
template <typename T>
void allreduce_sum_as(T* data, size_t count, MPI_Datatype type) {
  if (!g_mpi || g_size < 2) return;
  // MPI counts are int: long buffers go in pieces.
  constexpr size_t kPiece = size_t(1) << 30;
  for (size_t at = 0; at < count; at += kPiece)
    MPI_Allreduce(MPI_IN_PLACE, data + at, static_cast<int>(std::min(kPiece, count - at)), type, MPI_SUM, MPI_COMM_WORLD);
}
}  // namespace
void allreduce_sum(float* data, size_t count) { allreduce_sum_as(data, count, MPI_FLOAT); }
void allreduce_sum(double* data, size_t count) { allreduce_sum_as(data, count, MPI_DOUBLE); }
#else
void allreduce_sum(float*, size_t) {}
void allreduce_sum(double*, size_t) {}
#endif

long long broadcast_from_root(long long value) {
#ifdef SALIENT_WITH_MPI
  if (g_mpi && g_size > 1) MPI_Bcast(&value, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
#endif
  return value;
}

}  // namespace salient::dist
