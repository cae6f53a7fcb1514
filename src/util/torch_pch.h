// Precompiled header for the translation units that use LibTorch.
#pragma once
#include <torch/torch.h>
#include <nlohmann/json.hpp>
#include <fmt/format.h>
#include <string>
#include <vector>
#include <map>
#include <optional>
