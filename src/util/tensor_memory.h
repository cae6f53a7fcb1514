#pragma once
// Exact bytes held by CPU tensors, for checking memory estimates (tests, bench/): a counting
// allocator put in place of LibTorch's CPU allocator. Tensors allocated before install() keep their
// own deleters and are not counted. Sampling malloc (util/memory.h) misses peaks shorter than its
// period, which on a small model is every peak.
#include <cstdint>

namespace salient::tensor_memory {

void install();         // idempotent; every CPU allocation after it is counted
int64_t current();      // bytes held now by tensors allocated since install()
int64_t peak();         // most bytes held at once since install() or the last reset_peak()
void reset_peak();      // peak := current

}  // namespace salient::tensor_memory
