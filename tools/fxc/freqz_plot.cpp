// SPDX-License-Identifier: Apache-2.0
// Frequency-response plot drawn with cairo. Layout, in SVG user units: a title line, the
// magnitude panel, the phase panel, and the shared frequency axis below them.
#include "tools/fxc/freqz_plot.h"

#include <cairo-svg.h>
#include <cairo.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

#include "formats/signal_file.h"
#include "support/float_format.h"

namespace fxc {
namespace {

constexpr double kWidth = 900, kHeight = 680;
constexpr double kLeft = 84, kRight = 28, kTop = 62, kBottom = 58, kGap = 22;
constexpr double kMagnitudeHeight = 320;
// Deep nulls (-300 dB at an exact zero) would squash everything else into a line.
constexpr double kDynamicRangeDb = 120;
constexpr const char* kFont = "DejaVu Sans";

struct Rgb {
  double r, g, b;
};
// Matplotlib's "tab10": distinct, colour-blind-tolerant, familiar from other plots.
constexpr Rgb kPalette[] = {{0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173},
                            {0.839, 0.153, 0.157}, {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294},
                            {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498}, {0.737, 0.741, 0.133},
                            {0.090, 0.745, 0.812}};

struct Rect {
  double x, y, w, h;
  bool contains(double px, double py) const {
    return px >= x && px <= x + w && py >= y && py <= y + h;
  }
};

struct LogAxis {
  double lo_hz, hi_hz;
  double x(const Rect& r, double f) const {
    return r.x + r.w * std::log10(f / lo_hz) / std::log10(hi_hz / lo_hz);
  }
};

struct LinearAxis {
  double lo, hi, step;
  double y(const Rect& r, double v) const { return r.y + r.h * (hi - v) / (hi - lo); }
};

void set_colour(cairo_t* cr, Rgb c, double alpha = 1) {
  cairo_set_source_rgba(cr, c.r, c.g, c.b, alpha);
}
void set_grey(cairo_t* cr, double level) {
  cairo_set_source_rgb(cr, level, level, level);
}

std::string frequency_label(double f) {
  return f >= 1000 ? format_double(f / 1000) + "k" : format_double(f);
}

std::string hz_text(double f) {
  if (f == std::floor(f) && f < 1e15) return std::to_string(static_cast<long long>(f)) + " Hz";
  return format_double(f) + " Hz";
}

// Text anchored at (x, y): ax and ay pick the reference point (0 left/top, 0.5 centre,
// 1 right/bottom of the ink box, by the font's extents so labels line up).
void text(cairo_t* cr, const std::string& s, double x, double y, double ax, double ay) {
  cairo_text_extents_t te;
  cairo_font_extents_t fe;
  cairo_text_extents(cr, s.c_str(), &te);
  cairo_font_extents(cr, &fe);
  double height = fe.ascent * 0.72;  // cap height, roughly: centres digits and capitals
  cairo_move_to(cr, x - te.x_advance * ax, y + height * (1 - ay));
  cairo_show_text(cr, s.c_str());
}

void font(cairo_t* cr, double size, bool bold = false) {
  cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

// The lowest frequency drawn: a power of ten, about three decades below Nyquist, but not
// below the decade of the lowest frequency the curves have (the axis would start empty).
double low_bound_hz(double nyquist_hz, const std::vector<ResponseCurve>& curves) {
  double lo = std::pow(10.0, std::floor(std::log10(nyquist_hz / 1000)));
  double lowest = std::numeric_limits<double>::infinity();
  for (const auto& c : curves)
    for (double f : c.frequency_hz)
      if (f > 0 && f < nyquist_hz) lowest = std::min(lowest, f);
  if (std::isfinite(lowest)) lo = std::max(lo, std::pow(10.0, std::floor(std::log10(lowest))));
  return lo;
}

double magnitude_db(std::complex<double> h) {
  return 20 * std::log10(std::abs(h));
}

LinearAxis magnitude_axis(const std::vector<ResponseCurve>& curves, const LogAxis& fx) {
  double top = -std::numeric_limits<double>::infinity();
  double bottom = std::numeric_limits<double>::infinity();
  for (const auto& c : curves)
    for (std::size_t i = 0; i < c.response.size(); ++i) {
      double f = c.frequency_hz[i], db = magnitude_db(c.response[i]);
      if (f < fx.lo_hz || f > fx.hi_hz || !std::isfinite(db)) continue;
      top = std::max(top, db);
      bottom = std::min(bottom, db);
    }
  if (!std::isfinite(top)) top = 0, bottom = -60;
  bottom = std::max(bottom, top - kDynamicRangeDb);
  // A flat response still gets a readable scale around it.
  constexpr double kMinSpanDb = 12;
  if (top - bottom < kMinSpanDb) {
    double mid = (top + bottom) / 2;
    top = mid + kMinSpanDb / 2;
    bottom = mid - kMinSpanDb / 2;
  }
  double step = 1;
  for (double s : {1.0, 2.0, 3.0, 5.0, 6.0, 10.0, 12.0, 20.0, 30.0, 40.0, 60.0, 100.0}) {
    step = s;
    if ((top - bottom) / s <= 8) break;
  }
  // Headroom so a peak does not sit on the frame.
  double hi = std::ceil((top + 0.04 * (top - bottom)) / step) * step;
  double lo = std::floor(bottom / step) * step;
  return {lo, hi, step};
}

void draw_frame_and_grid(cairo_t* cr, const Rect& r, const LogAxis& fx, const LinearAxis& y) {
  set_grey(cr, 1);
  cairo_rectangle(cr, r.x, r.y, r.w, r.h);
  cairo_fill(cr);

  cairo_set_line_width(cr, 0.6);
  set_grey(cr, 0.92);
  for (double decade = std::pow(10.0, std::floor(std::log10(fx.lo_hz))); decade < fx.hi_hz;
       decade *= 10)
    for (int m = 2; m <= 9; ++m) {
      double f = decade * m;
      if (f <= fx.lo_hz || f >= fx.hi_hz) continue;
      cairo_move_to(cr, std::round(fx.x(r, f)) + 0.5, r.y);
      cairo_rel_line_to(cr, 0, r.h);
    }
  cairo_stroke(cr);

  cairo_set_line_width(cr, 0.9);
  set_grey(cr, 0.80);
  for (double f = std::pow(10.0, std::ceil(std::log10(fx.lo_hz))); f < fx.hi_hz; f *= 10) {
    cairo_move_to(cr, std::round(fx.x(r, f)) + 0.5, r.y);
    cairo_rel_line_to(cr, 0, r.h);
  }
  for (double v = y.lo; v <= y.hi + 1e-9; v += y.step) {
    cairo_move_to(cr, r.x, std::round(y.y(r, v)) + 0.5);
    cairo_rel_line_to(cr, r.w, 0);
  }
  cairo_stroke(cr);

  font(cr, 11);
  set_grey(cr, 0.2);
  for (double v = y.lo; v <= y.hi + 1e-9; v += y.step) {
    double shown = std::abs(v) < 1e-9 ? 0 : std::round(v * 1000) / 1000;
    // A typographic minus: the hyphen is too short to read as a sign at this size.
    std::string label = format_double(std::abs(shown));
    if (shown < 0) label = "\u2212" + label;
    text(cr, label, r.x - 7, y.y(r, v), 1, 0.5);
  }
}

void draw_frame_border(cairo_t* cr, const Rect& r) {
  cairo_set_line_width(cr, 1);
  set_grey(cr, 0.35);
  cairo_rectangle(cr, r.x + 0.5, r.y + 0.5, r.w - 1, r.h - 1);
  cairo_stroke(cr);
}

void draw_frequency_labels(cairo_t* cr, const Rect& r, const LogAxis& fx) {
  set_grey(cr, 0.2);
  double px_per_decade = r.w / std::log10(fx.hi_hz / fx.lo_hz);
  for (double decade = std::pow(10.0, std::floor(std::log10(fx.lo_hz))); decade < fx.hi_hz;
       decade *= 10)
    for (int m : {1, 2, 5}) {
      double f = decade * m;
      if (f < fx.lo_hz * 0.999 || f > fx.hi_hz * 1.001) continue;
      // 2 and 5 only where a decade is wide enough for them not to crowd.
      if (m != 1 && px_per_decade < 150) continue;
      font(cr, m == 1 ? 11 : 10);
      if (m != 1) set_grey(cr, 0.45);
      text(cr, frequency_label(f), fx.x(r, f), r.y + r.h + 8, 0.5, 0);
      set_grey(cr, 0.2);
    }
  font(cr, 12);
  text(cr, "Frequency (Hz)", r.x + r.w / 2, r.y + r.h + 34, 0.5, 0);
}

void draw_axis_title(cairo_t* cr, const Rect& r, const std::string& title) {
  font(cr, 12);
  set_grey(cr, 0.2);
  cairo_save(cr);
  cairo_translate(cr, r.x - 56, r.y + r.h / 2);
  cairo_rotate(cr, -std::numbers::pi / 2);
  text(cr, title, 0, 0, 0.5, 0.5);
  cairo_restore(cr);
}

void draw_magnitude(cairo_t* cr, const Rect& r, const LogAxis& fx, const LinearAxis& y,
                    const ResponseCurve& c) {
  bool drawing = false;
  for (std::size_t i = 0; i < c.response.size(); ++i) {
    double f = c.frequency_hz[i], db = magnitude_db(c.response[i]);
    if (!(f > 0) || std::isnan(db)) {
      drawing = false;
      continue;
    }
    // An exact zero is drawn as a plunge below the panel, which the clip cuts off.
    db = std::max(db, y.lo - (y.hi - y.lo));
    double px = fx.x(r, f), py = y.y(r, db);
    if (drawing)
      cairo_line_to(cr, px, py);
    else
      cairo_move_to(cr, px, py);
    drawing = true;
  }
  cairo_stroke(cr);
}

// Wrapped phase is drawn as a sawtooth: at each wrap the segment continues past the frame
// edge (and is clipped) and resumes from the opposite edge, instead of a vertical line.
void draw_phase(cairo_t* cr, const Rect& r, const LogAxis& fx, const LinearAxis& y, double floor_db,
                const ResponseCurve& c) {
  bool drawing = false;
  double prev_px = 0, prev_deg = 0;
  for (std::size_t i = 0; i < c.response.size(); ++i) {
    double f = c.frequency_hz[i];
    std::complex<double> h = c.response[i];
    // Below the magnitude floor the phase is numerical noise.
    if (!(f > 0) || !std::isfinite(h.real()) || !std::isfinite(h.imag()) ||
        !(magnitude_db(h) >= floor_db)) {
      drawing = false;
      continue;
    }
    double deg = std::arg(h) * 180 / std::numbers::pi;
    double px = fx.x(r, f);
    if (!drawing) {
      cairo_move_to(cr, px, y.y(r, deg));
    } else {
      double step = std::remainder(deg - prev_deg, 360.0);
      double continued = prev_deg + step;
      if (std::abs(continued - deg) > 1e-6) {
        cairo_line_to(cr, px, y.y(r, continued));
        cairo_move_to(cr, prev_px, y.y(r, deg - step));
      }
      cairo_line_to(cr, px, y.y(r, deg));
    }
    prev_px = px;
    prev_deg = deg;
    drawing = true;
  }
  cairo_stroke(cr);
}

// The legend goes in whichever corner of the magnitude panel the curves cross least.
void draw_legend(cairo_t* cr, const Rect& panel, const LogAxis& fx, const LinearAxis& y,
                 const std::vector<ResponseCurve>& curves) {
  font(cr, 11);
  double text_w = 0;
  for (const auto& c : curves) {
    cairo_text_extents_t te;
    cairo_text_extents(cr, c.label.c_str(), &te);
    text_w = std::max(text_w, te.x_advance);
  }
  const double row = 18, pad = 8, sample = 26;
  const double w = pad + sample + 6 + text_w + pad, h = pad + row * curves.size() + pad - 4;
  const double inset = 10;
  Rect corners[] = {{panel.x + panel.w - w - inset, panel.y + inset, w, h},
                    {panel.x + inset, panel.y + inset, w, h},
                    {panel.x + panel.w - w - inset, panel.y + panel.h - h - inset, w, h},
                    {panel.x + inset, panel.y + panel.h - h - inset, w, h}};
  const Rect* best = &corners[0];
  std::size_t best_hits = SIZE_MAX;
  for (const Rect& box : corners) {
    std::size_t hits = 0;
    for (const auto& c : curves)
      for (std::size_t i = 0; i < c.response.size(); ++i) {
        double f = c.frequency_hz[i];
        if (!(f >= fx.lo_hz && f <= fx.hi_hz)) continue;
        double db = std::clamp(magnitude_db(c.response[i]), y.lo, y.hi);
        if (box.contains(fx.x(panel, f), y.y(panel, db))) ++hits;
      }
    if (hits < best_hits) best = &box, best_hits = hits;
  }

  cairo_rectangle(cr, best->x + 0.5, best->y + 0.5, best->w, best->h);
  cairo_set_source_rgba(cr, 1, 1, 1, 0.92);
  cairo_fill_preserve(cr);
  cairo_set_line_width(cr, 0.8);
  set_grey(cr, 0.7);
  cairo_stroke(cr);
  for (std::size_t i = 0; i < curves.size(); ++i) {
    double cy = best->y + pad + row * i + row / 2 - 2;
    set_colour(cr, kPalette[i % std::size(kPalette)]);
    cairo_set_line_width(cr, 2);
    cairo_move_to(cr, best->x + pad, cy);
    cairo_rel_line_to(cr, sample, 0);
    cairo_stroke(cr);
    set_grey(cr, 0.15);
    text(cr, curves[i].label, best->x + pad + sample + 6, cy, 0, 0.5);
  }
}

void draw(cairo_t* cr, const std::string& title, double fs_hz,
          const std::vector<ResponseCurve>& curves) {
  const double nyquist = fs_hz / 2;
  const LogAxis fx{low_bound_hz(nyquist, curves), nyquist};
  const Rect magnitude{kLeft, kTop, kWidth - kLeft - kRight, kMagnitudeHeight};
  const Rect phase{kLeft, kTop + kMagnitudeHeight + kGap, magnitude.w,
                   kHeight - kTop - kBottom - kMagnitudeHeight - kGap};
  const LinearAxis db = magnitude_axis(curves, fx);
  const LinearAxis deg{-180, 180, 90};

  set_grey(cr, 1);
  cairo_paint(cr);

  font(cr, 17, true);
  set_grey(cr, 0.1);
  text(cr, title, kLeft, 30, 0, 0.5);
  font(cr, 11);
  set_grey(cr, 0.4);
  text(cr, "fs = " + hz_text(fs_hz) + ", phase wrapped to \u00b1180\u00b0", kWidth - kRight, 30, 1,
       0.5);

  draw_frame_and_grid(cr, magnitude, fx, db);
  draw_frame_and_grid(cr, phase, fx, deg);
  draw_axis_title(cr, magnitude, "Magnitude (dB)");
  draw_axis_title(cr, phase, "Phase (degrees)");
  draw_frequency_labels(cr, phase, fx);

  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
  cairo_set_line_width(cr, 1.7);
  for (const Rect* panel : {&magnitude, &phase}) {
    cairo_save(cr);
    cairo_rectangle(cr, panel->x, panel->y, panel->w, panel->h);
    cairo_clip(cr);
    for (std::size_t i = 0; i < curves.size(); ++i) {
      set_colour(cr, kPalette[i % std::size(kPalette)]);
      if (panel == &magnitude)
        draw_magnitude(cr, *panel, fx, db, curves[i]);
      else
        draw_phase(cr, *panel, fx, deg, db.lo, curves[i]);
    }
    cairo_restore(cr);
  }
  draw_frame_border(cr, magnitude);
  draw_frame_border(cr, phase);

  bool labelled = std::any_of(curves.begin(), curves.end(),
                              [](const ResponseCurve& c) { return !c.label.empty(); });
  if (labelled) draw_legend(cr, magnitude, fx, db, curves);
}

struct StreamTarget {
  int fd;
  std::string error;
};

cairo_status_t write_to_fd(void* closure, const unsigned char* data, unsigned int length) {
  auto* target = static_cast<StreamTarget*>(closure);
  if (auto w = write_all(target->fd, data, length); !w) {
    if (target->error.empty()) target->error = w.error();
    return CAIRO_STATUS_WRITE_ERROR;
  }
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

Expected<std::monostate, std::string> write_freqz_svg(const std::string& path,
                                                      const std::string& title, double fs_hz,
                                                      const std::vector<ResponseCurve>& curves) {
  auto fail = [&](const std::string& reason) {
    return Unexpected{"cannot write '" + path + "': " + reason};
  };
  if (!(fs_hz > 0) || !std::isfinite(fs_hz))
    return fail("the sample rate must be a positive number of Hz, not " + format_double(fs_hz));
  for (const auto& c : curves)
    if (c.frequency_hz.size() != c.response.size())
      return fail("curve '" + c.label + "' has " + std::to_string(c.frequency_hz.size()) +
                  " frequencies but " + std::to_string(c.response.size()) + " responses");

  // The stream surface, not cairo_svg_surface_create(path): it writes through our descriptor,
  // so every write is checked and the file is the temporary one that is renamed at the end.
  return write_file_atomically(
      path, [&](int fd, const std::string&) -> Expected<std::monostate, std::string> {
        StreamTarget target{fd, {}};
        cairo_surface_t* surface =
            cairo_svg_surface_create_for_stream(write_to_fd, &target, kWidth, kHeight);
#if CAIRO_VERSION >= CAIRO_VERSION_ENCODE(1, 16, 0)
        cairo_svg_surface_set_document_unit(surface, CAIRO_SVG_UNIT_PX);
#endif
        cairo_t* cr = cairo_create(surface);
        draw(cr, title, fs_hz, curves);
        cairo_status_t status = cairo_status(cr);
        cairo_destroy(cr);
        cairo_surface_finish(surface);
        if (status == CAIRO_STATUS_SUCCESS) status = cairo_surface_status(surface);
        cairo_surface_destroy(surface);
        if (!target.error.empty()) return Unexpected{target.error};
        if (status != CAIRO_STATUS_SUCCESS)
          return Unexpected{std::string("cairo: ") + cairo_status_to_string(status)};
        return std::monostate{};
      });
}

}  // namespace fxc
