// match.cpp: see match.h. Sections: [1] the known causes, [2] comparing a pasted tensor with a
// stage's candidates (whole, a block, a run of rows), [3] MatchPasted's four steps.
#include "attnlab/python/match.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "attnlab/model/bugs.h"
#include "attnlab/model/pipeline.h"
#include "attnlab/python/torch_print.h"

namespace attnlab {

// [1] The known causes ----------------------------------------------------------------------

namespace {

using Variant = std::function<std::optional<Scenario>(const Scenario&)>;

// The gallery's entry `id` as a cause: its name and diagnosis, and ApplyBug as its variant.
KnownCause GalleryCause(const char* id) {
  const BugInfo* bug = FindBug(id);
  return {id, std::string(bug->name) + ": " + bug->diagnosis,
          [id](const Scenario& s) { return ApplyBug(id, s); }};
}

// A seed one off: `which` picks the seed (input, projections, dropout), `delta` +1 or -1.
Variant SeedOff(int which, int delta) {
  return [which, delta](const Scenario& s) -> std::optional<Scenario> {
    Scenario v = s;
    auto shift = [delta](uint64_t seed) -> std::optional<uint64_t> {
      if (delta < 0 && seed == 0) return std::nullopt;
      return seed + static_cast<uint64_t>(static_cast<int64_t>(delta));
    };
    std::optional<uint64_t> next;
    const bool input_seeded = s.input.source == InputSource::kRandn ||
                              s.input.source == InputSource::kText ||
                              (s.input.source == InputSource::kQkv && !s.input.QkvGiven());
    if (which == 0 && input_seeded) {
      if (!(next = shift(s.input.seed))) return std::nullopt;
      v.input.seed = *next;
    } else if (which == 1 && s.projections.seed && ProjectionInitDraws(s.projections.init)) {
      if (!(next = shift(*s.projections.seed))) return std::nullopt;
      v.projections.seed = *next;
    } else if (which == 2 && s.dropout.seed && s.dropout.p > 0) {
      if (!(next = shift(*s.dropout.seed))) return std::nullopt;
      v.dropout.seed = *next;
    } else {
      return std::nullopt;
    }
    return v;
  };
}

// One more nn.Linear(in, out, bias) created after the seed, before the three projections
// (nn.Linear(d_in, d_out) each, no bias): they take the draws that come after it. Written as a
// scenario with the W's the shifted draws give (init "matrix"), for float32 torch scenarios
// whose projections are seeded, without bias, out_proj, per-head modules or grouped K/V heads
// (which a matrix init cannot hold), and whose dropout does not follow on from their draws.
// `same`: in, out, bias = the projections' (d_in, d_out, no bias); else nn.Linear(d_out,
// d_out) with its bias, as an out_proj created first.
Variant ExtraLinearFirst(bool same) {
  return [same](const Scenario& s) -> std::optional<Scenario> {
    const ProjectionSpec& p = s.projections;
    if (s.input.generator != Generator::kTorch || s.dtype != Dtype::kFloat32 ||
        p.init != ProjectionInit::kLinear || !p.seed || p.bias || p.out_proj || p.per_head ||
        (p.kv_heads != 0 && p.kv_heads != p.heads) || s.input.source == InputSource::kQkv ||
        (s.dropout.p > 0 && !s.dropout.seed))
      return std::nullopt;
    const Shape sh = ValidateScenario(s);
    DrawSource gen(Generator::kTorch);
    gen.Seed(*p.seed);
    if (same)
      gen.torch().Linear(sh.d_in, sh.d_out, false);
    else
      gen.torch().Linear(sh.d_out, sh.d_out, true);
    Scenario v = s;
    v.projections.init = ProjectionInit::kMatrix;
    v.projections.seed.reset();
    for (Projection w : p.order) {
      // nn.Linear(d_in, d_out).weight is d_out x d_in, row-major; W = weight.T (x @ W)
      const TorchGenerator::LinearInit lin = gen.torch().Linear(sh.d_in, sh.d_out, false);
      Matrix m(sh.d_in, sh.d_out);
      for (int64_t o = 0; o < sh.d_out; ++o)
        for (int64_t i = 0; i < sh.d_in; ++i)
          m(i, o) = lin.weight[static_cast<size_t>(o * sh.d_in + i)];
      v.projections.W[static_cast<size_t>(w)] = m;
    }
    return v;
  };
}

// The draw-order cause: K's projection (or K's randn) drawn before Q's; nullopt when nothing
// is drawn.
std::optional<Scenario> KeyDrawnFirst(const Scenario& s) {
  Scenario v = s;
  auto swap_qk = [](std::array<Projection, 3>& order) {
    for (Projection& p : order)
      p = p == Projection::kQuery ? Projection::kKey
          : p == Projection::kKey ? Projection::kQuery
                                  : p;
  };
  if (s.input.source == InputSource::kQkv && !s.input.QkvGiven())
    swap_qk(v.input.order);
  else if (ProjectionInitDraws(s.projections.init))
    swap_qk(v.projections.order);
  else
    return std::nullopt;
  return v;
}

std::vector<KnownCause> MakeCauses() {
  std::vector<KnownCause> c;
  c.push_back({"scale-off", "no scaling: the scores were not divided by sqrt(d_k)",
               [](const Scenario& s) -> std::optional<Scenario> {
                 if (!s.scaling.sqrt_dk) return std::nullopt;
                 Scenario v = s;
                 v.scaling.sqrt_dk = false;
                 return v;
               }});
  c.push_back({"scale-by-d-k", "the scores were divided by d_k instead of sqrt(d_k)",
               [](const Scenario& s) -> std::optional<Scenario> {
                 if (!s.scaling.sqrt_dk) return std::nullopt;
                 const Shape sh = ValidateScenario(s);
                 if (sh.dh == 1) return std::nullopt;  // the same number either way
                 Scenario v = s;
                 v.scaling.multiplier =
                     s.scaling.multiplier / std::sqrt(static_cast<double>(sh.dh));
                 return v;
               }});
  c.push_back(GalleryCause("bug-scale-d-model"));
  c.push_back(GalleryCause("bug-softmax-dim"));
  c.push_back(GalleryCause("bug-mask-after-softmax"));
  c.push_back(GalleryCause("bug-view-no-transpose"));
  c.push_back({"draw-order-k-first",
               "the key projection was drawn before the query's (nn.Linear for W_key created "
               "first, or torch.randn for k before q)",
               KeyDrawnFirst});
  c.push_back({"extra-linear-same",
               "one more nn.Linear of the same shape was created after the seed, before "
               "W_query, W_key and W_value: they take the draws after it",
               ExtraLinearFirst(true)});
  c.push_back({"extra-linear-other",
               "one more nn.Linear(d_out, d_out) (an out_proj, say) was created after the seed, "
               "before W_query, W_key and W_value: they take the draws after it",
               ExtraLinearFirst(false)});
  c.push_back({"rand-vs-linear",
               "the weights were made with torch.rand where the scenario uses nn.Linear (or the "
               "other way round)",
               [](const Scenario& s) -> std::optional<Scenario> {
                 if (s.input.generator != Generator::kTorch) return std::nullopt;
                 Scenario v = s;
                 if (s.projections.init == ProjectionInit::kLinear && !s.projections.bias &&
                     !s.projections.out_proj)
                   v.projections.init = ProjectionInit::kTorchRand;
                 else if (s.projections.init == ProjectionInit::kTorchRand)
                   v.projections.init = ProjectionInit::kLinear;
                 else
                   return std::nullopt;
                 return v;
               }});
  c.push_back({"dropout-eval",
               "dropout was off (the model in eval mode, model.eval()) where the scenario "
               "trains it",
               [](const Scenario& s) -> std::optional<Scenario> {
                 if (s.dropout.p <= 0) return std::nullopt;
                 Scenario v = s;
                 v.dropout.p = 0;
                 v.dropout.seed.reset();
                 return v;
               }});
  c.push_back({"float64-vs-float32",
               "the numbers were computed in float64 where the scenario uses float32 (or the "
               "other way round)",
               [](const Scenario& s) -> std::optional<Scenario> {
                 Scenario v = s;
                 if (s.dtype == Dtype::kFloat32)
                   v.dtype = Dtype::kFloat64;
                 else if (s.dtype == Dtype::kFloat64)
                   v.dtype = Dtype::kFloat32;
                 else
                   return std::nullopt;
                 return v;
               }});
  const char* seeds[] = {"input", "projections", "dropout"};
  for (int delta : {1, -1})
    for (int which = 0; which < 3; ++which)
      c.push_back({std::string("seed-") + seeds[which] + (delta > 0 ? "-plus-1" : "-minus-1"),
                   std::string("the ") + seeds[which] + " seed is one " +
                       (delta > 0 ? "more" : "less") + " than the scenario's",
                   SeedOff(which, delta)});
  // The rest of the gallery: every bug is in this one list (KnownCausesCoverTheGallery).
  for (const BugInfo& b : Bugs())
    if (std::none_of(c.begin(), c.end(), [&](const KnownCause& k) { return k.id == b.id; }))
      c.push_back(GalleryCause(b.id));
  return c;
}

}  // namespace

const std::vector<KnownCause>& KnownCauses() {
  static const std::vector<KnownCause> causes = MakeCauses();
  return causes;
}

// [2] Comparing ------------------------------------------------------------------------------

namespace {

// One place in a stage the pasted tensor may be: `count` elements from flat `offset`.
struct Candidate {
  std::string stage;
  int64_t batch = -1, head = -1, row_begin = 0, row_end = 0;
  int64_t offset = 0;
};

struct Comparison {
  bool equal = true;
  bool dtype_ok = true;
  double max_abs_diff = 0;
  double scale = 0;  // largest finite |stage value| compared
  int64_t differing = 0;
  bool nonfinite_differs = false;  // a nan or inf on one side only
};

// Whether the pasted number p (printed to within half_unit) and the stage's x agree.
bool SameToDigits(double p, double half_unit, double x) {
  if (std::isnan(p) || std::isnan(x)) return std::isnan(p) && std::isnan(x);
  if (std::isinf(p) || std::isinf(x)) return p == x;
  return std::fabs(p - x) <= half_unit + std::ldexp(std::max(std::fabs(p), std::fabs(x)), -20);
}

Comparison Compare(const PastedTensor& t, const ElementAt& at, int64_t offset,
                   std::vector<uint8_t>* differs) {
  Comparison c;
  if (differs) differs->assign(t.values.size(), 0);
  for (size_t i = 0; i < t.values.size(); ++i) {
    const double x = at(offset + static_cast<int64_t>(i)), p = t.values[i];
    if (std::isfinite(x)) c.scale = std::max(c.scale, std::fabs(x));
    if (!SameToDigits(p, t.half_unit[i], x)) {
      c.equal = false;
      ++c.differing;
      if (differs) (*differs)[i] = 1;
    }
    if (std::isfinite(p) && std::isfinite(x))
      c.max_abs_diff = std::max(c.max_abs_diff, std::fabs(p - x));
    else if (!SameToDigits(p, 0, x))
      c.nonfinite_differs = true;
  }
  return c;
}

// The dtype a print of `st` names, as `form` writes it ("" for the form's default).
bool DtypeAgrees(const PastedTensor& t, const Stages& st) {
  if (t.form == PastedForm::kBare) return true;
  if (t.form == PastedForm::kTorch) {
    const char* want = st.dtype == Dtype::kFloat64    ? "torch.float64"
                       : st.dtype == Dtype::kBfloat16 ? "torch.bfloat16"
                       : st.dtype == Dtype::kFloat16  ? "torch.float16"
                                                      : "";
    return t.dtype == want;
  }
  if (st.dtype == Dtype::kFloat64) return t.dtype.empty();
  return t.dtype == "float32" || (st.dtype == Dtype::kFloat16 && t.dtype == "float16");
}

std::vector<int64_t> Squeezed(const std::vector<int64_t>& shape) {
  size_t k = 0;
  while (k + 1 < shape.size() && shape[k] == 1) ++k;
  return {shape.begin() + static_cast<std::ptrdiff_t>(k), shape.end()};
}

int64_t Product(const std::vector<int64_t>& v, size_t from = 0) {
  int64_t n = 1;
  for (size_t i = from; i < v.size(); ++i) n *= v[i];
  return n;
}

// Every candidate of stage `p` for a pasted tensor of shape `want` (squeezed), in the order
// they are reported: the whole stage, then blocks with more leading indices fixed (batch, then
// head), then runs of rows of each matrix. Bounded: runs of rows only while the work stays
// under 5e7 comparisons.
void Candidates(const PrintedStage& p, const std::vector<int64_t>& want,
                std::vector<Candidate>& out) {
  const std::vector<int64_t>& shape = p.shape;
  const size_t r = shape.size();
  for (size_t k = 0; k + 2 <= r; ++k) {  // k leading indices fixed
    const std::vector<int64_t> sub(shape.begin() + static_cast<std::ptrdiff_t>(k), shape.end());
    if (Squeezed(sub) != want) continue;
    const int64_t blocks = Product(std::vector<int64_t>(shape.begin(), shape.begin() + k));
    const int64_t per = Product(sub);
    for (int64_t b = 0; b < blocks; ++b) {
      Candidate c{p.name};
      c.offset = b * per;
      if (k == 1) c.batch = b;
      if (k == 2) {
        c.batch = b / shape[1];
        c.head = b % shape[1];
      }
      out.push_back(c);
    }
  }
  if (want.size() > 2 || want.empty() || r < 2) return;
  const int64_t cols = shape[r - 1], rows = shape[r - 2];
  const int64_t n = want.size() == 2 ? want[0] : 1;
  if (want.back() != cols || n >= rows) return;
  const int64_t matrices = Product(std::vector<int64_t>(shape.begin(), shape.end() - 2));
  if (static_cast<double>(matrices) * static_cast<double>(rows - n + 1) *
          static_cast<double>(n * cols) >
      5e7)
    return;
  for (int64_t m = 0; m < matrices; ++m)
    for (int64_t row = 0; row + n <= rows; ++row) {
      Candidate c{p.name};
      c.offset = (m * rows + row) * cols;
      if (r >= 3) c.batch = r == 4 ? m / shape[1] : m;
      if (r == 4) c.head = m % shape[1];
      c.row_begin = row;
      c.row_end = row + n;
      out.push_back(c);
    }
}

struct Found {
  Candidate where;
  Comparison cmp;
  bool any = false;
};

// The first candidate of `st` equal to `t` to its digits (with its dtype), and the closest one.
void Search(const Stages& st, const PastedTensor& t, Found& exact, Found& closest) {
  const std::vector<int64_t> want = Squeezed(t.shape);
  const bool dtype_ok = DtypeAgrees(t, st);
  for (const std::string& name : PrintableStageNames()) {
    const std::optional<PrintedStage> p = PrintStage(st, name);
    if (!p || !p->present) continue;
    std::vector<Candidate> cands;
    Candidates(*p, want, cands);
    for (const Candidate& c : cands) {
      Comparison cmp = Compare(t, p->at, c.offset, nullptr);
      cmp.dtype_ok = dtype_ok;
      if (cmp.equal && dtype_ok && !exact.any) exact = {c, cmp, true};
      if (!closest.any || std::make_tuple(cmp.nonfinite_differs, cmp.max_abs_diff, cmp.differing) <
                              std::make_tuple(closest.cmp.nonfinite_differs,
                                              closest.cmp.max_abs_diff, closest.cmp.differing))
        closest = {c, cmp, true};
      if (exact.any) return;
    }
  }
}

// "weights (batch 0, head 1, rows 2-3)".
std::string Where(const Candidate& c) {
  std::string parts;
  auto add = [&](const std::string& s) { parts += (parts.empty() ? "" : ", ") + s; };
  if (c.batch >= 0) add("batch " + std::to_string(c.batch));
  if (c.head >= 0) add("head " + std::to_string(c.head));
  if (c.row_end > c.row_begin)
    add(c.row_end - c.row_begin == 1
            ? "row " + std::to_string(c.row_begin)
            : "rows " + std::to_string(c.row_begin) + "-" + std::to_string(c.row_end - 1));
  return c.stage + (parts.empty() ? "" : " (" + parts + ")");
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

MatchResult Result(MatchVerdict v, const Found& f, const PastedTensor& t, const Stages& st) {
  MatchResult r;
  r.verdict = v;
  r.stage = f.where.stage;
  r.batch = f.where.batch;
  r.head = f.where.head;
  r.row_begin = f.where.row_begin;
  r.row_end = f.where.row_end;
  r.max_abs_diff = f.cmp.max_abs_diff;
  r.differing = f.cmp.differing;
  const std::optional<PrintedStage> p = PrintStage(st, f.where.stage);
  Compare(t, p->at, f.where.offset, &r.differs);
  return r;
}

}  // namespace

// [3] MatchPasted ----------------------------------------------------------------------------

MatchResult MatchPasted(const Scenario& scenario, const PastedTensor& pasted) {
  const Stages st = RunScenario(scenario);
  Found exact, closest;
  Search(st, pasted, exact, closest);
  if (exact.any) {
    MatchResult r = Result(MatchVerdict::kMatch, exact, pasted, st);
    r.cause_text = "equals " + Where(exact.where) + " to the printed digits";
    return r;
  }
  // Close: every cell within 1% of the stage's largest magnitude (the last digit or two, a GPU's
  // rounding), the same non-finite cells, and the dtype the scenario prints.
  if (closest.any && closest.cmp.dtype_ok && !closest.cmp.nonfinite_differs &&
      closest.cmp.max_abs_diff <= 0.01 * std::max(closest.cmp.scale, 1e-30)) {
    MatchResult r = Result(MatchVerdict::kClose, closest, pasted, st);
    r.cause_text = "close to " + Where(closest.where) + ": " + std::to_string(r.differing) +
                   " of " + std::to_string(pasted.values.size()) + " numbers differ, by at most " +
                   Number(r.max_abs_diff);
    return r;
  }
  for (const KnownCause& cause : KnownCauses()) {
    std::optional<Scenario> v;
    try {
      v = cause.variant(scenario);
      if (!v) continue;
      ValidateScenario(*v);
      const Stages vst = RunScenario(*v);
      Found e, c;
      Search(vst, pasted, e, c);
      if (!e.any) continue;
      MatchResult r = Result(MatchVerdict::kExplained, e, pasted, vst);
      r.cause = cause.id;
      r.cause_text = cause.text;
      return r;
    } catch (const std::exception&) {
      continue;  // a variant the scenario cannot take (ScenarioError): not this cause
    }
  }
  MatchResult r;
  r.verdict = MatchVerdict::kNone;
  if (closest.any) {
    r = Result(MatchVerdict::kNone, closest, pasted, st);
    r.cause_text = "no stage and no known mistake gives these numbers; the closest is " +
                   Where(closest.where) + ", which differs by up to " + Number(r.max_abs_diff);
  } else {
    std::string shape;
    for (int64_t d : pasted.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    r.cause_text = "no stage of the scenario has the shape (" + shape + ")";
  }
  return r;
}

}  // namespace attnlab
