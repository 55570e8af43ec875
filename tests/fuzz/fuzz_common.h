/* fuzz_common.h — shared by the libFuzzer targets of tests/fuzz/ (make fuzz).
 * FUZZ_CHECK is an invariant check that stays on in every build: a broken
 * invariant prints what broke and aborts, which libFuzzer reports as a
 * crash with its input saved. */
#ifndef GS_FUZZ_COMMON_H
#define GS_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                   \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "%s:%d: invariant broken: %s: ", __FILE__, __LINE__, \
                    #cond);                                                     \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            abort();                                                            \
        }                                                                       \
    } while (0)

/* The input as a NUL-terminated string (at most cap-1 bytes; a NUL inside
 * ends it early, as it would for a C caller). Caller frees. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size, size_t cap) {
    if (size >= cap) size = cap - 1;
    char *s = malloc(size + 1);
    if (!s) abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
