// memory_probe.h: the limit probe of tests/memory_test.py. The memory rule (scenario.h,
// kMaxStageBytes, CheckCommandMemory) refuses a command before it allocates; this hook lets a
// test learn that a command was accepted from its exit status alone, without running it.
#pragma once

namespace attnlab {

/// The limit probe of tests/memory_test.py: when `hook` is set, MemoryChecksPassed() calls it
/// once a command's memory checks have passed and before the command allocates its work (the
/// end of a passing CheckCommandMemory, the start of RunScenario once the scenario is valid).
/// The command line sets a hook that exits 0 when ATTNLAB_MEMORY_PROBE=1, so that the test
/// learns "accepted" or "refused" from the exit status alone, never from how long a command
/// takes. Null (the default) does nothing. Not thread-safe: set it before any work starts.
void SetMemoryChecksPassedHook(void (*hook)());

/// Calls the hook of SetMemoryChecksPassedHook, if any (see there).
void MemoryChecksPassed();

}  // namespace attnlab
