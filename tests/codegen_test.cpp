// codegen_test.cpp: the generated PyTorch programs, compared with committed goldens of their
// text (tests/golden/code/, one per golden scenario), so the suite checks them without torch.
// That they really compute the app's stages is checked by the ctest codegen_runs_in_pytorch
// (tools/check_codegen.py) where PyTorch is installed. ATTNLAB_UPDATE_GOLDENS=1 rewrites them.
#include "attnlab/python/codegen.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "attnlab/base/file_io.h"
#include "attnlab/model/pipeline.h"
#include "test_util.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Names() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(std::string(ATTNLAB_GOLDEN_DIR) + "/scenarios")) {
    names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// bfloat16 / float16: each stage computed in float32 and stored (stored()), nn.Linear's weights
// stored and applied as two stored operations, the upcast softmax's weights left in float32.
// (tools/check_codegen.py runs these programs against the app's stages.)
TEST(GeneratePyTorchCode, LowPrecisionStoresEveryStage) {
  auto program = [](const std::string& name) {
    return GeneratePyTorchCode(
        ParseScenario(test::LoadGolden("scenarios/" + name + ".json")["scenario"].dump()));
  };
  const std::string mha = program("lowp-bfloat16-raschka-3.6-mha");
  for (const char* line :
       {"dtype = torch.bfloat16\n", "def stored(t):\n    return t.to(dtype).float()\n",
        "X = stored(X)  # drawn or written in float32, then stored\n",
        "query = stored_layer(torch.nn.Linear(d_in, d_out, bias=False))\n",
        "out_proj = stored_layer(torch.nn.Linear(d_out, d_out))\n", "Q = linear(query, X)\n",
        "scores = stored(scores)\n", "weights = stored(weights)\n", "context = stored(context)\n",
        "context = linear(out_proj, context)\n",
        "print(\"weights:\", weights.to(dtype), sep=\"\\n\")\n"})
    EXPECT_NE(mha.find(line), std::string::npos) << line << "\n" << mha;
  const std::string up = program("lowp-float16-raschka-3.5-causal-softmax-float32");
  EXPECT_NE(up.find("dtype = torch.float16\n"), std::string::npos) << up;
  EXPECT_EQ(up.find("weights = stored(weights)"), std::string::npos) << up;
  EXPECT_NE(up.find("# softmax_dtype float32: the weights stay float32"), std::string::npos) << up;
  EXPECT_NE(up.find("print(\"weights:\", weights, sep="), std::string::npos) << up;
  const std::string fill = program("lowp-float16-fill-1e9-empty-row");
  EXPECT_NE(fill.find("logits = logits.masked_fill(mask == 0, -1e9)\nlogits = stored(logits)"),
            std::string::npos)
      << fill;
}

class GeneratedCode : public ::testing::TestWithParam<std::string> {};

TEST_P(GeneratedCode, MatchesTheCommittedProgram) {
  const Scenario s =
      ParseScenario(test::LoadGolden("scenarios/" + GetParam() + ".json")["scenario"].dump());
  const std::string code = GeneratePyTorchCode(s);
  const std::string path = std::string(ATTNLAB_GOLDEN_DIR) + "/code/" + GetParam() + ".py";
  if (std::getenv("ATTNLAB_UPDATE_GOLDENS")) {
    fs::create_directories(fs::path(path).parent_path());
    WriteFileAtomic(path, code);
  }
  EXPECT_EQ(code, ReadFile(path));
}

INSTANTIATE_TEST_SUITE_P(Goldens, GeneratedCode, ::testing::ValuesIn(Names()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(GeneratePyTorchCode, UsesTheNotebooksIdioms) {
  Scenario s;
  s.input.source = InputSource::kRandn;
  s.input.length = 8;
  s.input.d_in = 32;
  s.input.batch = 4;
  s.input.seed = 1337;
  s.projections.init = ProjectionInit::kLinear;
  s.projections.d_out = 16;
  s.projections.order = {Projection::kKey, Projection::kQuery, Projection::kValue};
  s.mask.kind = MaskKind::kCausal;
  s.dropout = {0.5, 123};
  const std::string code = GeneratePyTorchCode(s);
  for (const char* want :
       {"torch.manual_seed(1337)\nX = torch.randn(4, 8, 32)",
        "key = torch.nn.Linear(d_in, d_out, bias=False)\nquery = torch.nn.Linear",
        "mask = torch.tril(torch.ones(8, 8))",
        "logits = logits.masked_fill(mask == 0, float('-inf'))", "logits = scores / d_k**0.5",
        "weights = torch.softmax(logits, dim=-1)",
        "torch.manual_seed(123)\ndropout = torch.nn.Dropout(0.5)", "context = weights_dropped @ V"})
    EXPECT_NE(code.find(want), std::string::npos) << want << "\n---\n" << code;
}

// A scenario that draws before any seed: the program pins the seed the engine started from,
// right before that draw, with a comment saying why (the ctest codegen_unseeded_runs_twice runs
// such programs twice in fresh interpreters against the app's numbers).
TEST(GeneratePyTorchCode, PinsTheDefaultSeedBeforeAnUnseededDraw) {
  const auto code = [](const std::string& input, const std::string& rest) {
    return GeneratePyTorchCode(ParseScenario(R"({"format": "attention-lab/scenario@1", "input": )" +
                                             input + ", " + rest + "}"));
  };
  const std::string matrix = R"({"source": "matrix", "values": [[1, 2], [3, 4]]})";
  const std::string torch = code(matrix, R"("projections": {"init": "torch_rand", "d_out": 2})");
  EXPECT_NE(torch.find("# imported, so without this line every run would differ.\n"
                       "torch.manual_seed(67280421310721)\n"
                       "W_query = torch.nn.Parameter(torch.rand(d_in, d_out))"),
            std::string::npos)
      << torch;
  const std::string numpy =
      code(R"({"source": "matrix", "generator": "numpy", "values": [[1, 2]]})",
           R"("projections": {"init": "randn", "d_out": 2})");
  EXPECT_NE(numpy.find("at seed 0.\nnp.random.seed(0)\nW_query = np.random.randn(d_in, d_out)"),
            std::string::npos)
      << numpy;
  const std::string drop =
      code(matrix, R"("projections": {"init": "identity"}, "dropout": {"p": 0.5})");
  EXPECT_NE(drop.find("torch.manual_seed(67280421310721)\ndropout = torch.nn.Dropout(0.5)"),
            std::string::npos)
      << drop;
  // Seeded draws, or draws that continue a seeded stream, pin nothing.
  for (const std::string& seeded :
       {code(matrix, R"("projections": {"init": "torch_rand", "d_out": 2, "seed": 1})"),
        code(R"({"source": "randn", "length": 2, "d_in": 2, "seed": 1})",
             R"("projections": {"init": "randn", "d_out": 2}, "dropout": {"p": 0.5})")})
    EXPECT_EQ(seeded.find("67280421310721"), std::string::npos) << seeded;
}

// ---------------------------------------------------------------------------------------------
// User strings are data: a shared scenario must not make its program run anything.

// Hostile strings: line breaks of every kind, quotes, triple quotes, backslashes, NUL, ANSI and
// bidi controls, and a payload that would run if a literal or a comment could be escaped.
std::vector<std::string> HostileStrings(const std::string& marker) {
  const std::string payload = "import os; os.system(\"touch " + marker + "\")";
  return {"\n" + payload,
          "\"); " + payload + " #",
          "'); " + payload + " #",
          "'''\n" + payload + "\n'''",
          "\"\"\"\n" + payload + "\n\"\"\"",
          "\\\n" + payload,
          "\\",
          "x\r" + payload,
          std::string("nul\0", 4) + "\n" + payload,
          "\u2028" + payload + "\u2029",
          "\x1b[2J\xe2\x80\xae" + payload,
          "it's \"quoted\""};
}

// The program's text with the contents of every string literal removed ('...', "...", r'...',
// a backslash escaping the next character), each literal ending on its own line. Fails the test
// on a literal left open at the end of a line.
std::string OutsideLiterals(const std::string& code) {
  std::string out;
  for (size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '#') {  // a comment: the app's own text, kept (it must not hold user text)
      while (i < code.size() && code[i] != '\n') out += code[i++];
      out += '\n';
      continue;
    }
    if (c != '\'' && c != '"') {
      out += c;
      continue;
    }
    out += c;
    size_t j = i + 1;
    while (j < code.size() && code[j] != c && code[j] != '\n') j += code[j] == '\\' ? 2 : 1;
    EXPECT_TRUE(j < code.size() && code[j] == c) << "literal left open at " << i;
    out += c;
    i = j;
  }
  return out;
}

nlohmann::json HostileTextScenario(const std::string& title, const std::string& text,
                                   const std::string& special,
                                   const std::string& tokenizer = "words_and_spaces") {
  return {{"format", "attention-lab/scenario@1"},
          {"title", title},
          {"input",
           {{"source", "text"},
            {"text", text},
            {"tokenizer", tokenizer},
            {"d_in", 4},
            {"seed", 69},
            {"special_tokens", {special, "<|unk|>"}}}},
          {"projections", {{"init", "torch_rand"}, {"d_out", 3}, {"seed", 69}}},
          {"mask", {{"kind", "causal"}}}};
}

nlohmann::json HostileMatrixScenario(const std::string& title, const std::string& token) {
  return {
      {"format", "attention-lab/scenario@1"},
      {"title", title},
      {"input",
       {{"source", "matrix"}, {"values", {{0.43, 0.15}, {0.55, 0.87}}}, {"tokens", {token, "b"}}}},
      {"projections", {{"init", "identity"}}}};
}

TEST(GeneratePyTorchCode, StringsAreReprLiterals) {
  const std::string s = "a'b\"c\\d\ne\rf\tg" + std::string(1, '\0') +
                        "h\u2028i\u2029j\x1bk\x7fl\xc2\x85m\xc2\xa0n\u202eo\U0001F600p\u00e9q"
                        "\ufeffr\ue000s\U000E0041";
  const std::string code = GeneratePyTorchCode(ParseScenario(HostileMatrixScenario(s, s).dump()));
  // repr(s) in Python 3.11
  const std::string repr = R"('a\'b"c\\d\ne\rf\tg\x00h\u2028i\u2029j\x1bk\x7fl\x85m\xa0n\u202eo)"
                           "\U0001F600p\u00e9"
                           R"(q\ufeffr\ue000s\U000e0041')";
  EXPECT_NE(code.find("\ntitle = " + repr + "\n"), std::string::npos) << code;
  EXPECT_NE(code.find("\ntokens = [" + repr + ", 'b']\n"), std::string::npos) << code;
  const std::string q =
      GeneratePyTorchCode(ParseScenario(HostileMatrixScenario("it's", "'''").dump()));
  EXPECT_NE(q.find("\ntitle = \"it's\"\n"), std::string::npos) << q;
  EXPECT_NE(q.find("\ntokens = [\"'''\", 'b']\n"), std::string::npos) << q;
}

TEST(GeneratePyTorchCode, HostileStringsStayInsideLiterals) {
  const std::string benign =
      GeneratePyTorchCode(ParseScenario(HostileTextScenario("x", "the cat sat", "<pad>").dump()));
  const std::string benign_m =
      GeneratePyTorchCode(ParseScenario(HostileMatrixScenario("x", "x").dump()));
  for (const std::string& h : HostileStrings("/tmp/pwned")) {
    const std::string code =
        GeneratePyTorchCode(ParseScenario(HostileTextScenario(h, "the cat sat", h).dump()));
    const std::string outside = OutsideLiterals(code);
    EXPECT_EQ(outside.find("os.system"), std::string::npos) << h << "\n---\n" << code;
    EXPECT_EQ(outside.find("pwned"), std::string::npos) << h << "\n---\n" << code;
    // Apart from the literals, the program is the one of plain strings, line for line.
    EXPECT_EQ(outside, OutsideLiterals(benign)) << h;
    const std::string m = GeneratePyTorchCode(ParseScenario(HostileMatrixScenario(h, h).dump()));
    EXPECT_EQ(OutsideLiterals(m), OutsideLiterals(benign_m)) << h << "\n---\n" << m;
  }
}

// Runs the programs with Debian's Python and PyTorch (skipped without them): nothing but the
// computation happens (the payload's marker file stays absent), every string reads back as the
// scenario's, and the weights are the app's. (Text is split into characters: the engine's word
// tokenizer treats only ASCII whitespace as Python's \s, see tokenizer.cpp.)
TEST(GeneratePyTorchCode, HostileProgramsOnlyCompute) {
  if (std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no /usr/bin/python3 with torch";
  const fs::path dir = fs::temp_directory_path() / ("attnlab_hostile_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string marker = (dir / "pwned").string();
  const auto hostile = HostileStrings(marker);
  std::vector<Scenario> scenarios;
  std::string programs;
  for (size_t i = 0; i < hostile.size(); ++i) {
    const std::string& h = hostile[i];
    scenarios.push_back(ParseScenario(HostileTextScenario(h, "cat: " + h, h, "chars").dump()));
    const std::string py = (dir / ("p" + std::to_string(i) + ".py")).string();
    WriteFileAtomic(py, GeneratePyTorchCode(scenarios.back()) +
                            "\nimport json\nprint('RESULT', json.dumps({'title': title, 'text': "
                            "text, 'vocab': vocab, 'weights': weights.tolist()}))\n");
    programs += " " + py;
  }
  // One interpreter runs every program, each in its own namespace, as `python3 p.py` would.
  const std::string cmd = "cd " + dir.string() +
                          " && /usr/bin/python3 -c 'import sys\nfor p in sys.argv[1:]: "
                          "exec(compile(open(p, encoding=\"utf-8\").read(), p, \"exec\"), "
                          "{\"__name__\": \"__main__\"})'" +
                          programs + " 2>&1";
  const auto [status, out] = test::RunShell(cmd);
  ASSERT_EQ(status, 0) << out;
  EXPECT_FALSE(fs::exists(marker));
  std::vector<nlohmann::json> results;
  for (size_t at = out.find("RESULT "); at != std::string::npos; at = out.find("RESULT ", at + 1))
    results.push_back(nlohmann::json::parse(out.substr(at + 7, out.find('\n', at) - at - 7)));
  ASSERT_EQ(results.size(), scenarios.size()) << out;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const Scenario& s = scenarios[i];
    EXPECT_EQ(results[i]["title"], s.title) << i;
    EXPECT_EQ(results[i]["text"], s.input.text) << i;
    const Stages st = RunScenario(s);
    EXPECT_EQ(results[i]["vocab"], st.vocab) << i;
    EXPECT_TRUE(test::MatrixNear("weights", st.weights[0], test::JsonMatrix(results[i]["weights"]),
                                 1e-6, 1e-5))
        << i;
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace attnlab
