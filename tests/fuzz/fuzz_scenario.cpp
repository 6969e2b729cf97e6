// fuzz_scenario.cpp: any bytes as a scenario file: ParseScenario + ValidateScenario must either
// accept or throw ScenarioError; an accepted (small) scenario must run, dump, generate its
// PyTorch program and survive WriteScenario -> ParseScenario unchanged (scenario.h's promise).
#include <string>

#include "attnlab/model/pipeline.h"
#include "attnlab/python/codegen.h"
#include "attnlab/python/stages_json.h"
#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attnlab;
  const std::optional<Scenario> s =
      fuzz::SmallScenario(std::string(reinterpret_cast<const char*>(data), size));
  if (!s) return 0;
  const Stages stages = RunScenario(*s);
  if (DumpStages(stages).empty()) fuzz::Violated("DumpStages returned nothing");
  if (GeneratePyTorchCode(*s).empty()) fuzz::Violated("GeneratePyTorchCode returned nothing");
  Scenario again;
  try {
    again = ParseScenario(WriteScenario(*s));
  } catch (const ScenarioError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    fuzz::Violated("WriteScenario wrote a scenario ParseScenario refuses");
  }
  if (!(again == *s)) fuzz::Violated("ParseScenario(WriteScenario(s)) != s");
  return 0;
}
