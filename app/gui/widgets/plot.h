// plot.h: the few plots the panels need (lines on linear or log axes, bars, a histogram),
// drawn with ImGui's draw lists. Not a general plotting library: axes, ticks, labels, series.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

namespace attnlab::gui {

/// Whether a plot `height` pixels tall (labels included) can be read: at least 6.5 lines of
/// the current font (ticks, axis labels and some data between). Below that the panels say
/// where the plot went instead of drawing its labels over each other.
bool RoomForPlot(float height);

/// What a panel draws in place of a plot that has no room: one line that points to "▴ larger".
void NoRoomForPlot();

/// A plot area: its frame on screen and the data ranges it maps.
struct PlotAxes {
  ImVec2 min, max;  ///< the data area on screen (inside the tick labels)
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool log_x = false, log_y = false;
  bool hovered = false;       ///< the mouse is over the data area
  bool legend_above = false;  ///< PlotLegend goes in a line above the data, not on it
  ImVec2 ToScreen(double x, double y) const;
  double XAt(float screen_x) const;  ///< the data x under a screen x
};

struct PlotSpec {
  const char* id = "plot";
  ImVec2 size{0, 0};  ///< whole widget, labels included
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool log_x = false, log_y = false;
  const char* x_label = "";
  const char* x_label_short = nullptr;  ///< used when x_label is wider than the plot
  const char* y_label = "";
  /// A line above the data area for PlotLegend, so that the legend never covers the data.
  bool legend_above = false;
  /// Tick labels along x: empty to use numbers.
  std::vector<std::string> x_tick_labels;
};

/// A curve of many steps as at most two points per pixel column (each column's lowest and highest
/// loss, in step order), x the step index from 0: the same picture, but a 20000-step run no
/// longer costs 40000 segments a frame (measured: 5000 steps took a frame from 47 to 141 ms
/// under llvmpipe). The Training and microgpt views' loss curves.
void ThinCurve(const std::vector<float>& loss, int columns, std::vector<double>* x,
               std::vector<double>* y);

/// Draws the frame, grid, ticks and axis labels, reserves the space, returns the axes.
PlotAxes BeginPlot(const PlotSpec& spec);

/// A polyline through (x[i], y[i]); dashed when dash > 0 (pixels on, then off).
void PlotLine(const PlotAxes& axes, const std::vector<double>& x, const std::vector<double>& y,
              ImU32 color, float thickness = 2.0f, float dash = 0.0f);

/// A filled circle with a ring at (x, y).
void PlotPoint(const PlotAxes& axes, double x, double y, ImU32 color, float radius = 5.0f);

/// A vertical line at x across the plot, with an optional label at its top (or bottom).
void PlotVLine(const PlotAxes& axes, double x, ImU32 color, const char* label = nullptr,
               bool label_at_bottom = false);

/// A horizontal line at y across the plot, with an optional label at its right (or left) end.
void PlotHLine(const PlotAxes& axes, double y, ImU32 color, const char* label = nullptr,
               bool label_left = false);

/// Bars of height y[i] over slots i = 0..n-1 (x from -0.5 to n-0.5); highlight one bar. With
/// more bars than pixels, each pixel column shows the tallest bar it covers.
void PlotBars(const PlotAxes& axes, const std::vector<double>& y, ImU32 color, int highlight = -1,
              ImU32 highlight_color = 0);

/// Histogram bars: counts[i] over [edges[i], edges[i+1]).
void PlotHistogram(const PlotAxes& axes, const std::vector<double>& edges,
                   const std::vector<double>& counts, ImU32 fill, ImU32 outline);

/// A legend in the top-left corner: one coloured line per name.
void PlotLegend(const PlotAxes& axes, const std::vector<std::pair<std::string, ImU32>>& items,
                bool right = false);

/// Text turned to read upwards (rotated 90 degrees counter-clockwise), starting at `start`
/// (its bottom end) and centred on start.x. ImGui cannot rotate text, so the glyph vertices
/// are rotated after they are made; font nullptr: the current font and size.
void AddUpwardText(ImDrawList* dl, ImFont* font, float size, ImVec2 start, ImU32 color,
                   const char* text);

/// A tick or axis number: FormatNumber(v, NumberStyle::kTick) (text.h). Ticks themselves come
/// from the core's NiceTicks (heatmap_spec.h), shared with the colorbars.
std::string ShortNumber(double v);

}  // namespace attnlab::gui
