// The declaration is all this module offers; libFuzzer itself is linked by -sanitize=fuzzer.
#include "CFuzzDriver.h"
