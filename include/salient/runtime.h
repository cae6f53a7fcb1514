#pragma once
// Process-wide settings of the library: threads, the device, OpenBLAS's kernels, how freed memory is
// kept, progress output.
#include <cstdint>
#include <string>

namespace salient {

// Sets LibTorch intra-op threads (and OpenMP's, which the OpenMP OpenBLAS uses). n <= 0: default
// = number of cores ($SALIENT_THREADS overrides). Returns the count set.
int set_threads(int n);
int default_threads();
int current_threads();

// OpenBLAS's name for the kernels it chose ("Prescott", "SkylakeX", ...; "" for another BLAS).
std::string openblas_core();
// The kernels to ask OpenBLAS for (through $OPENBLAS_CORETYPE, read when the library loads): the
// CPU's when OpenBLAS runs others; "" when they are the same, on another BLAS, or when the user
// set the variable.
std::string better_openblas_core();
// Called first in main(): when better_openblas_core() names kernels, sets $OPENBLAS_CORETYPE and
// executes this program again with the same arguments (the library is already initialised). A
// failed exec leaves everything as it was.
void reexec_with_better_blas(char** argv);
// Warns once on stderr when the reference BLAS is active.
void check_blas();

// The device models load on unless a call says otherwise: "cpu", "cuda" or "cuda:N", checked
// against this build and machine (errors name --device). Default: $SALIENT_DEVICE, else the CPU.
void set_device(const std::string& name);
std::string device_name();  // "cpu", "cuda:0", ...
bool device_is_cpu();

// Progress bars and log lines on stderr (on by default; the CLI's --quiet turns them off).
void set_progress(bool enabled);

// Keeps memory that tensors free inside the process for the next ones. By default glibc hands a
// freed block over its mmap threshold (32 MiB at most) back to the kernel, and trims the heap's
// free top, so the next large tensor (a batch's attention scores, the MLM logits) takes fresh
// pages: a page fault and zeroing per 4 KiB, which on this machine made an ERASER evaluation at
// batch 16 2.5 times slower than at batch 1 (docs/PERFORMANCE.md). After this call large blocks
// come from the heap and freed ones are reused; the process's resident size stays at its peak.
// $SALIENT_RETAIN_MEMORY=0 leaves glibc's defaults (1 or unset: on; anything else is an error).
// Returns whether it is on. The CLI and the benchmarks call it first thing.
bool retain_freed_memory();

// The machine's memory as this process sees it: MemTotal, lowered to a cgroup limit when there is
// one. -1 when it cannot be read.
int64_t total_memory_bytes();

// The process's resident set now (/proc/self/statm). -1 when it cannot be read.
int64_t resident_bytes();

// Blocks of at least `bytes` get their own mapping, handed back to the system as soon as they are
// freed (glibc: a fixed M_MMAP_THRESHOLD, undoing retain_freed_memory for them). The server's
// resident memory then follows the tensors alive, at the cost of faulting each large block in
// anew. Returns whether it took effect.
bool release_large_blocks(int64_t bytes);

// Hands freed memory that malloc keeps back to the system when it holds more than `keep_bytes`
// (glibc's malloc_trim: every arena, not only the heap's top). What retain_freed_memory keeps is
// then capped, so a long-running process (the server) returns close to its idle size after a
// burst. Returns the bytes malloc held free before (0 where it cannot tell).
int64_t trim_freed_memory(int64_t keep_bytes);

}  // namespace salient
