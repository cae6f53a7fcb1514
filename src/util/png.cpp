#include "util/png.h"

#include <png.h>

#include "util/error.h"

namespace salient {
namespace {

void append_bytes(png_structp png, png_bytep data, png_size_t length) {
  auto* out = static_cast<std::string*>(png_get_io_ptr(png));
  out->append(reinterpret_cast<const char*>(data), length);
}

void no_flush(png_structp) {}

}  // namespace

std::string encode_rgb_png(const std::vector<uint8_t>& rgb, int64_t height, int64_t width) {
  if (height < 1 || width < 1 || static_cast<int64_t>(rgb.size()) != height * width * 3)
    fail("encode_rgb_png: {} bytes for a {}x{} RGB image", rgb.size(), height, width);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) fail("libpng: cannot create a writer");
  std::string out;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    fail("libpng: writing the image failed");
  }
  png_set_write_fn(png, &out, append_bytes, no_flush);
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  std::vector<png_byte> row(static_cast<size_t>(width * 3));
  for (int64_t y = 0; y < height; ++y) {
    std::copy(rgb.begin() + y * width * 3, rgb.begin() + (y + 1) * width * 3, row.begin());
    png_write_row(png, row.data());
  }
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return out;
}

}  // namespace salient
