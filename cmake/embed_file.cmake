# Writes OUT, a C++ header holding the bytes of IN as NAME (an unsigned char array) and NAME_size.
# Run by CMake at build time: cmake -DIN=... -DOUT=... -DNAME=... -P embed_file.cmake.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR size "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by cmake/embed_file.cmake: do not edit.\n#pragma once\n#include <cstddef>\n"
     "inline constexpr unsigned char ${NAME}[] = {\n${bytes}\n};\ninline constexpr std::size_t ${NAME}_size = ${size};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
