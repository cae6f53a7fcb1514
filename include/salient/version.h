#pragma once
// salient's version, the one place it is written: the top CMakeLists.txt reads it for
// project(salient VERSION ...) and the installed package's version file, python/pyproject.toml for
// the Python package's.
#define SALIENT_VERSION "0.1.0"

namespace salient {
inline constexpr const char* kVersion = SALIENT_VERSION;
}  // namespace salient
