// cli_microgpt_test.cpp: `attention-lab microgpt` end to end: the default run's output equal to
// what Karpathy's microgpt.py printed (golden/microgpt/expected-default.log), --hex and -o on a
// short run against tools/microgpt_reference.py (golden/microgpt/short-run.json), bad input
// (exit 2, one line naming the culprit, nothing written) and Ctrl+C.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "attnlab/base/file_io.h"
#include "test_util.h"

namespace attnlab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Result {
  int status;
  std::string out, err;
};

class MicrogptCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("attnlab_microgpt_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  std::string Write(const std::string& name, const std::string& bytes) const {
    std::ofstream(Path(name), std::ios::binary) << bytes;
    return Path(name);
  }
  Result Run(const std::string& args) const {
    const std::string err = Path("stderr.txt");
    const auto [status, out] =
        test::RunShell(std::string(ATTNLAB_CLI) + " microgpt " + args + " 2>" + err);
    Result r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, ReadFile(err)};
    fs::remove(err);
    return r;
  }
  fs::path dir_;
};

std::string Golden(const std::string& relative) {
  return std::string(ATTNLAB_GOLDEN_DIR) + "/" + relative;
}

TEST_F(MicrogptCli, DefaultRunPrintsExactlyWhatMicrogptPyPrinted) {
  const Result r = Run("");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, ReadFile(Golden("microgpt/expected-default.log")));
  EXPECT_EQ(r.err, "");
}

TEST_F(MicrogptCli, HexAndSavedRunMatchTheReferenceBitForBit) {
  const json g = test::LoadGolden("microgpt/short-run.json");
  const std::string settings = "--input " + Golden("microgpt/short-input.txt") + " --seed " +
                               std::to_string(g["seed"].get<int64_t>()) + " --steps " +
                               std::to_string(g["steps"].get<int64_t>()) +
                               " --temperature 0.8 --samples " +
                               std::to_string(g["samples"].size());
  const Result r = Run(settings + " --hex -o " + Path("run.json"));
  ASSERT_EQ(r.status, 0) << r.err;
  std::string want = "num docs: " + std::to_string(g["docs"].size()) + "\n";
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line + "\n", want);
  std::getline(lines, line);  // vocab size
  std::getline(lines, line);  // num params
  for (size_t i = 0; i < g["losses_hex"].size(); ++i) {
    std::getline(lines, line);
    char head[64];
    std::snprintf(head, sizeof head, "step %4zu /   12 | loss ", i + 1);
    EXPECT_EQ(line, head + g["losses_hex"][i].get<std::string>());
  }
  std::getline(lines, line);
  EXPECT_EQ(line, "");
  std::getline(lines, line);
  EXPECT_EQ(line, "--- inference (new, hallucinated names) ---");
  for (size_t i = 0; i < g["samples"].size(); ++i) {
    std::getline(lines, line);
    EXPECT_EQ(line, "sample  " + std::to_string(i + 1) + ": " + g["samples"][i].get<std::string>());
  }
  const json saved = json::parse(ReadFile(Path("run.json")));
  EXPECT_EQ(saved["settings"]["seed"], std::to_string(g["seed"].get<int64_t>()));
  EXPECT_EQ(saved["losses_hex"], g["losses_hex"]);
  EXPECT_EQ(saved["samples"], g["samples"]);
  ASSERT_EQ(saved["checkpoints"].size(), 2u);
  EXPECT_EQ(saved["checkpoints"][1]["step"], 12);
  const std::vector<double> final_params = saved["checkpoints"][1]["params"];
  ASSERT_EQ(final_params.size(), g["final_params_bits"].size());
  for (size_t i = 0; i < final_params.size(); ++i) {
    uint64_t u;
    std::memcpy(&u, &final_params[i], sizeof u);
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(u));
    ASSERT_EQ(hex, g["final_params_bits"][i].get<std::string>()) << "parameter " << i;
  }
}

TEST_F(MicrogptCli, BadInputIsOneClearLineAndExit2) {
  const std::string empty = Write("empty.txt", ""), blank = Write("blank.txt", " \n\t\n\n");
  const std::string binary = Write("binary.bin", std::string("\x7f"
                                                             "ELF\x02\x01\x01\0\xff\xfe",
                                                             10));
  const struct {
    std::string args, culprit;
  } cases[] = {
      {"--input " + empty, "no documents"},
      {"--input " + blank, "no documents"},
      {"--input " + binary, "not UTF-8"},
      {"--input " + Path("missing.txt"), "missing.txt"},
      {"--input " + dir_.string(), dir_.string()},
      {"--steps -1", "--steps"},
      {"--steps 1x", "--steps"},
      {"--samples 100001", "--samples"},
      {"--temperature 0", "--temperature"},
      {"--temperature nan", "--temperature"},
      {"--seed 4.2", "seed '4.2'"},
      {"--save-every -3", "--save-every"},
  };
  for (const auto& c : cases) {
    const Result r = Run(c.args + " -o " + Path("run.json"));
    EXPECT_EQ(r.status, 2) << c.args;
    EXPECT_NE(r.err.find(c.culprit), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_FALSE(fs::exists(Path("run.json"))) << c.args;
  }
}

TEST_F(MicrogptCli, OneLineAndALongDocumentRunAsTheScriptRunsThem) {
  const Result one = Run("--input " + Write("one.txt", "abcdefghijklmnopqrstuvwxyz0123\n") +
                         " --steps 3 --samples 2");
  ASSERT_EQ(one.status, 0) << one.err;
  EXPECT_EQ(one.out.substr(0, 44), "num docs: 1\nvocab size: 31\nnum params: 4320\n");
  EXPECT_NE(one.out.find("step    3 /    3 | loss "), std::string::npos);
  EXPECT_NE(one.out.find("sample  2: "), std::string::npos);
  const Result none = Run("--steps 0 --samples 0 --seed 18446744073709551621");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_EQ(none.out,
            "num docs: 32033\nvocab size: 27\nnum params: 4192\n\n"
            "--- inference (new, hallucinated names) ---\n");
}

// Whether process `pid` has used `seconds` of CPU time (utime + stime of /proc/PID/stat), waited
// for at most ten minutes; false if it ended first. As cli_test.cpp's Ctrl+C test waits: a
// signal sent after a fixed sleep could come before a loaded machine started the run.
bool WaitForCpuSeconds(pid_t pid, double seconds) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::minutes(10);
  while (std::chrono::steady_clock::now() < give_up) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    const std::string text((std::istreambuf_iterator<char>(stat)), {});
    const size_t close = text.rfind(')');
    if (close == std::string::npos) return false;
    std::istringstream fields(text.substr(close + 2));
    std::vector<std::string> f;
    for (std::string field; fields >> field;) f.push_back(field);
    if (f.size() < 13 || f[0] == "Z") return false;
    const double ticks = std::stod(f[11]) + std::stod(f[12]);
    if (ticks / static_cast<double>(sysconf(_SC_CLK_TCK)) >= seconds) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

TEST_F(MicrogptCli, StopsOnCtrlCAndWritesNothing) {
  for (const int signal : {SIGINT, SIGTERM}) {
    const std::string out = Path("run.json"), err = Path("err.txt");
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (!std::freopen(err.c_str(), "w", stderr)) _exit(99);
      if (!std::freopen("/dev/null", "w", stdout)) _exit(99);
      execl(ATTNLAB_CLI, ATTNLAB_CLI, "microgpt", "--steps", "1000000", "-o", out.c_str(),
            static_cast<char*>(nullptr));
      _exit(98);
    }
    // a million steps take half an hour; the signal comes once training has surely started
    // (3 s of CPU: reading and shuffling the names take milliseconds, an ASan start more)
    ASSERT_TRUE(WaitForCpuSeconds(pid, 3.0)) << "the run ended or hung before training";
    ASSERT_EQ(kill(pid, signal), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "killed instead of stopping: signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 128 + signal);
    const std::string text = ReadFile(err);
    EXPECT_NE(
        text.find(signal == SIGINT ? "stopped by Ctrl+C after " : "stopped by SIGTERM after "),
        std::string::npos)
        << text;
    EXPECT_NE(text.find("of 1000000 steps"), std::string::npos) << text;
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
    fs::remove(err);
    EXPECT_TRUE(fs::is_empty(dir_)) << "left behind: " << fs::directory_iterator(dir_)->path();
  }
}

}  // namespace
}  // namespace attnlab
