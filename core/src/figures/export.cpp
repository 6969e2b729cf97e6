// export.cpp: see export.h.
#include "attnlab/figures/export.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "attnlab/base/file_io.h"
#include "attnlab/base/text.h"
#include "attnlab/figures/figure_meta.h"

namespace attnlab {

namespace {

// One CSV field. Text that a spreadsheet would run as a formula (a leading =, +, -, @, tab or
// carriage return, as in "=HYPERLINK(...)") is prefixed with a single quote and quoted, as OWASP's
// CSV injection guidance recommends; numbers are written by the caller and stay numbers.
std::string CsvField(const std::string& s) {
  const bool formula = !s.empty() && std::string_view("=+-@\t\r").find(s[0]) != std::string::npos;
  if (!formula && s.find_first_of(",\"\n\r ") == std::string::npos && !s.empty()) return s;
  std::string out = formula ? "\"'" : "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

void CheckFigureSize(Stage stage, int64_t rows, int64_t cols, int scale) {
  // The grid alone bounds the figure below.
  const int64_t cell = FigureCellSize(rows, cols, scale);
  const int64_t width = cell * cols, height = cell * rows;
  if (width * height > kMaxFigurePixels)
    throw std::invalid_argument(
        TooManyPixelsMessage(std::string("the ") + StageName(stage) + " figure", width, height));
}

void CheckFigureSize(const StageView& view, const FigureOptions& options) {
  CheckFigureSize(view.stage, view.values.rows(), view.values.cols(), options.scale);
}

void WriteStageCsv(std::ostream& out, const StageView& v) {
  std::string line = CsvField(v.row_axis);
  for (const std::string& c : v.col_labels) line += "," + CsvField(c);
  out << line << "\n";
  for (Eigen::Index r = 0; r < v.values.rows(); ++r) {
    line = CsvField(r < static_cast<Eigen::Index>(v.row_labels.size()) ? v.row_labels[r] : "");
    for (Eigen::Index c = 0; c < v.values.cols(); ++c)
      line += "," + (v.values64.size() > 0 ? ShortestDouble(v.values64(r, c))
                                           : ShortestFloat(v.values(r, c)));
    out << line << "\n";
  }
}

std::string StageCsv(const StageView& v) {
  std::ostringstream os;
  WriteStageCsv(os, v);
  return std::move(os).str();
}

void WriteStageNpy(std::ostream& out, const StageView& v) {
  const bool f64 = v.values64.size() > 0;  // a float64 scenario: '<f8', as NumPy saves it
  std::string header = std::string("{'descr': '") + (f64 ? "<f8" : "<f4") +
                       "', 'fortran_order': False, 'shape': (" + std::to_string(v.values.rows()) +
                       ", " + std::to_string(v.values.cols()) + "), }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces to a multiple of 64 and
  // ended by a newline (format version 1.0).
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string head = "\x93NUMPY";
  head += '\x01';
  head += '\x00';
  head += static_cast<char>(header.size() & 0xFF);
  head += static_cast<char>(header.size() >> 8);
  out << head << header;
  static_assert(sizeof(float) == 4 && sizeof(double) == 8);
  if (f64) {
    const MatrixD& m = v.values64;  // row-major: already C order
    out.write(reinterpret_cast<const char*>(m.data()),
              static_cast<std::streamsize>(m.size() * sizeof(double)));
  } else {
    const Matrix& m = v.values;
    out.write(reinterpret_cast<const char*>(m.data()),
              static_cast<std::streamsize>(m.size() * sizeof(float)));
  }
}

std::string StageNpy(const StageView& v) {
  std::ostringstream os;
  WriteStageNpy(os, v);
  return std::move(os).str();
}

namespace {

// The figure format of an export format, or nullopt for CSV and NPY.
std::optional<FigureFormat> AsFigure(ExportFormat format) {
  switch (format) {
    case ExportFormat::kPng:
      return FigureFormat::kPng;
    case ExportFormat::kSvg:
      return FigureFormat::kSvg;
    case ExportFormat::kPdf:
      return FigureFormat::kPdf;
    default:
      return std::nullopt;
  }
}

// Stages one view in `format` for `path` in `files`: a figure's bytes, or CSV / NPY streamed
// (never a second copy of the stage in memory). Errors as ExportView.
void AddExport(AtomicFileSet& files, const std::string& path, const StageView& view,
               const FigureOptions& options, ExportFormat format, const Scenario* scenario) {
  if (AsFigure(format)) {
    files.Add(path, ExportBytes(view, options, format, scenario));
    return;
  }
  files.AddStream(path, [&](std::ostream& os) {
    if (format == ExportFormat::kCsv)
      WriteStageCsv(os, view);
    else
      WriteStageNpy(os, view);
  });
}

}  // namespace

std::string ExportBytes(const StageView& view, const FigureOptions& options, ExportFormat format,
                        const Scenario* scenario) {
  if (const std::optional<FigureFormat> figure = AsFigure(format)) {
    CheckFigureSize(view, options);
    const std::string meta =
        scenario ? FigureMetadata(*scenario, {view.stage}, view.head, view.batch, options) : "";
    return FigureFile({view}, "", options, *figure, meta);
  }
  return format == ExportFormat::kCsv ? StageCsv(view) : StageNpy(view);
}

double EstimateExportBytes(int64_t rows, int64_t cols, ExportFormat format,
                           const FigureOptions& options, bool float64) {
  const double values = static_cast<double>(rows) * static_cast<double>(cols);
  double bytes = values * (float64 ? 12.0 : 4.0);
  if (AsFigure(format)) {
    const double cell = static_cast<double>(FigureCellSize(rows, cols, options.scale));
    bytes += 32.0 * values * cell * cell + 32.0 * 1024 * 1024;
  }
  return bytes;
}

void CheckExportMemory(const Scenario& scenario,
                       const std::vector<std::pair<int64_t, int64_t>>& sizes, ExportFormat format,
                       const FigureOptions& options, bool one_file_each) {
  double extra = 0;
  for (const auto& [rows, cols] : sizes) {
    const double e =
        EstimateExportBytes(rows, cols, format, options, scenario.dtype == Dtype::kFloat64);
    extra = one_file_each ? std::max(extra, e) : extra + e;
  }
  std::string name = std::string(ExportExtension(format)).substr(1);  // "png"
  for (char& ch : name) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  CheckCommandMemory(scenario, ValidateScenario(scenario), "the " + name + " export", extra);
}

std::optional<ExportFormat> ParseExportFormat(const std::string& name) {
  for (ExportFormat f : {ExportFormat::kPng, ExportFormat::kCsv, ExportFormat::kNpy,
                         ExportFormat::kSvg, ExportFormat::kPdf})
    if ("." + name == ExportExtension(f)) return f;
  return std::nullopt;
}

const char* ExportExtension(ExportFormat format) {
  switch (format) {
    case ExportFormat::kPng:
      return ".png";
    case ExportFormat::kCsv:
      return ".csv";
    case ExportFormat::kNpy:
      return ".npy";
    case ExportFormat::kSvg:
      return ".svg";
    case ExportFormat::kPdf:
      return ".pdf";
  }
  return "";
}

void ExportView(const StageView& view, const FigureOptions& options, ExportFormat format,
                const std::string& path, const Scenario* scenario) {
  AtomicFileSet files;
  AddExport(files, path, view, options, format, scenario);
  files.Commit();
}

void ExportPanels(const std::vector<StageView>& views, const Scenario& scenario,
                  const FigureOptions& options, ExportFormat format, const std::string& path) {
  const std::optional<FigureFormat> figure = AsFigure(format);
  if (!figure) throw std::invalid_argument("a multi-stage export is a figure: PNG, SVG or PDF");
  std::vector<Stage> stages;
  int64_t head = 0, batch = 0;  // the per-head panels' head; stages without heads show head 0
  for (const StageView& v : views) {
    CheckFigureSize(v, options);
    stages.push_back(v.stage);
    head = std::max(head, v.head), batch = std::max(batch, v.batch);
  }
  WriteFileAtomic(path, FigureFile(views, scenario.title, options, *figure,
                                   FigureMetadata(scenario, stages, head, batch, options)));
}

std::vector<std::string> ExportAll(const Stages& stages, const Scenario& scenario,
                                   const FigureOptions& options, ExportFormat format,
                                   const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool existed = fs::exists(dir, ec);
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir))
    throw FileError(dir + ": cannot create the folder" + (ec ? " (" + ec.message() + ")" : ""));
  const char* ext = ExportExtension(format);
  const Shape& sh = stages.shape;
  std::vector<std::string> written;
  AtomicFileSet files;  // all or nothing: temporaries until every file is ready
  try {
    for (Stage stage : AllStages()) {
      if (!StageInRun(stage, scenario)) continue;  // e.g. no weights_dropped without dropout
      const int64_t heads = StageIsPerHead(stage) ? sh.H : 1;
      const int64_t batches = RowOf(stage).batched ? sh.B : 1;
      for (int64_t b = 0; b < batches; ++b)
        for (int64_t h = 0; h < heads; ++h) {
          std::string name = StageName(stage);
          if (heads > 1) name += "_h" + std::to_string(h);
          if (batches > 1) name += "_b" + std::to_string(b);
          const std::string path = (fs::path(dir) / (name + ext)).string();
          AddExport(files, path, ExtractStage(stages, scenario, stage, h, b), options, format,
                    &scenario);
          written.push_back(path);
        }
    }
    files.Commit();
  } catch (...) {
    if (!existed) fs::remove(dir, ec);  // the folder this call made, if still empty
    throw;
  }
  return written;
}

}  // namespace attnlab
