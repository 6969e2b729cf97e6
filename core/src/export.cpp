// export.cpp: see export.h.
#include "attnlab/export.h"

#include <stb_image_write.h>

#include <charconv>
#include <cmath>
#include <filesystem>

#include "attnlab/file_io.h"
#include "attnlab/text.h"

namespace attnlab {

namespace {

void AppendBytes(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), size);
}

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r ") == std::string::npos && !s.empty()) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string EncodePng(const Image& image) {
  std::string out;
  // Level 4: stb's deflate is slow at high levels; a T = 2048 figure must export in < 2 s.
  stbi_write_png_compression_level = 4;
  stbi_write_png_to_func(AppendBytes, &out, image.width, image.height, 3, image.rgb.data(),
                         image.width * 3);
  return out;
}

std::string StageCsv(const StageView& v) {
  std::string out = v.row_axis;
  for (const std::string& c : v.col_labels) out += "," + CsvField(c);
  out += "\n";
  for (Eigen::Index r = 0; r < v.values.rows(); ++r) {
    out += CsvField(r < static_cast<Eigen::Index>(v.row_labels.size()) ? v.row_labels[r] : "");
    for (Eigen::Index c = 0; c < v.values.cols(); ++c) out += "," + ShortestFloat(v.values(r, c));
    out += "\n";
  }
  return out;
}

std::string StageNpy(const StageView& v) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                       std::to_string(v.values.rows()) + ", " + std::to_string(v.values.cols()) +
                       "), }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64 and
  // ended by a newline (format version 1.0).
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  const Matrix& m = v.values;  // row-major float32: already C order
  static_assert(sizeof(float) == 4);
  out.append(reinterpret_cast<const char*>(m.data()), m.size() * sizeof(float));
  return out;
}

void ExportView(const StageView& view, const FigureOptions& options, ExportFormat format,
                const std::string& path) {
  std::string bytes;
  switch (format) {
    case ExportFormat::kPng:
      bytes = EncodePng(RenderFigure(view, options));
      break;
    case ExportFormat::kCsv:
      bytes = StageCsv(view);
      break;
    case ExportFormat::kNpy:
      bytes = StageNpy(view);
      break;
  }
  WriteFileAtomic(path, bytes);
}

std::vector<std::string> ExportAll(const Stages& stages, const Scenario& scenario,
                                   const FigureOptions& options, ExportFormat format,
                                   const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir))
    throw FileError(dir + ": cannot create the folder" + (ec ? " (" + ec.message() + ")" : ""));
  const char* ext = format == ExportFormat::kPng   ? ".png"
                    : format == ExportFormat::kCsv ? ".csv"
                                                   : ".npy";
  const Shape& sh = stages.shape;
  std::vector<std::string> written;
  for (Stage stage : AllStages()) {
    if (stage == Stage::kWeightsDropped && stages.weights_dropped.empty()) continue;
    const int64_t heads = StageIsPerHead(stage) ? sh.H : 1;
    const int64_t batches = stage == Stage::kMask ? 1 : sh.B;
    for (int64_t b = 0; b < batches; ++b)
      for (int64_t h = 0; h < heads; ++h) {
        std::string name = StageName(stage);
        if (heads > 1) name += "_h" + std::to_string(h);
        if (batches > 1) name += "_b" + std::to_string(b);
        const std::string path = (std::filesystem::path(dir) / (name + ext)).string();
        ExportView(ExtractStage(stages, scenario, stage, h, b), options, format, path);
        written.push_back(path);
      }
  }
  return written;
}

}  // namespace attnlab
