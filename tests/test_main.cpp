// main() of the LibTorch tests: first the OpenBLAS kernels the salient binary itself runs
// (util/runtime.h: a CPU newer than OpenBLAS's tables gets its generic kernels unless asked), so
// that a test comparing its numbers with the binary's compares the same arithmetic.
#include <gtest/gtest.h>

#include "util/runtime.h"

int main(int argc, char** argv) {
  salient::reexec_with_better_blas(argv);
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
