// The declaration in include/ is the whole module; the definition is libFuzzer's
// (linked by -sanitize=fuzzer). SwiftPM needs one source file per C target.
#include "CLibFuzzer.h"
