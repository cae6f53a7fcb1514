#pragma once
// SALIENT_ASAN is 1 in a build with AddressSanitizer (scripts/sanitize.sh), with GCC or clang.
#if defined(__SANITIZE_ADDRESS__)
#define SALIENT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SALIENT_ASAN 1
#endif
#endif
#ifndef SALIENT_ASAN
#define SALIENT_ASAN 0
#endif
