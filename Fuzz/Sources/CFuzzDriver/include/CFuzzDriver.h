#ifndef CALWATCH_FUZZ_DRIVER_H
#define CALWATCH_FUZZ_DRIVER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's entry point for programs that keep their own main (compiler-rt's FuzzerInterface.h).
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
