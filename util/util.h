/* util.h — the bottom layer: plumbing every other room uses, and nothing of
 * gensor's own (no operators, no hardware). libc and POSIX only.
 *
 *   util.c  status strings and per-context errors, the string builder, the
 *           arena, FNV-1a, the monotonic clock, atomic file writes, dlopen
 *           and symbol tables, trimming
 *   pcg.c   PCG32 random numbers (util/pcg.h)
 *
 * Everything here is internal: the public API is include/gensor.h. */
#ifndef GS_UTIL_H
#define GS_UTIL_H

#include "gensor.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- context and errors ------------------------------------------------ */
#define GS_MSG_MAX 1024 /* bytes of a context's message */
struct gs_ctx {
    char msg[GS_MSG_MAX];
};
/* Record a printf-style message on ctx (if non-NULL) and return s. */
gs_status gs_err(gs_ctx *ctx, gs_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A copy of ctx's message in buf[n] ("" for NULL ctx), so that a new message
 * can wrap it: gs_err(ctx, s, "cache: %s", gs_ctx_msg_copy(ctx, buf, sizeof buf)). */
const char *gs_ctx_msg_copy(const gs_ctx *ctx, char *buf, size_t n);

/* ---- growable string builder ------------------------------------------- */
typedef struct gs_sb {
    char *buf;
    size_t len, cap;
    bool oom; /* sticky: an append failed; buf holds what fit */
} gs_sb;
void gs_sb_init(gs_sb *sb);
/* The builder formats in the C locale (gs_vsnprintf_c): what it builds is
 * kernel source, specs and reports. */
void gs_sb_printf(gs_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void gs_sb_vprintf(gs_sb *sb, const char *fmt, va_list ap);
void gs_sb_puts(gs_sb *sb, const char *s);
/* Hand the buffer to the caller (NULL if oom) and reset the builder. */
char *gs_sb_take(gs_sb *sb);
void gs_sb_free(gs_sb *sb);

/* ---- numbers in text that a program reads: the C locale -----------------
 * A spec, a kernel's source and the numbers read from a spec take '.' for the
 * decimal point whatever LC_NUMERIC the embedding program set: after
 * setlocale(LC_ALL, "") in a German locale, printf writes 0.5 as "0,5" (a
 * spec no other process parses; in kernel source "(0,5f)" is the comma
 * operator, 5) and strtod stops at "0.5"'s '.'. These switch the calling
 * thread alone to the C locale for the call (uselocale), so other threads
 * keep theirs. */
int gs_snprintf_c(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int gs_vsnprintf_c(char *buf, size_t n, const char *fmt, va_list ap);
double gs_strtod_c(const char *s, char **end);

/* ---- arena: states of one construction are freed together -------------- */
typedef struct gs_arena_block gs_arena_block;
typedef struct gs_arena {
    gs_arena_block *head;
    size_t block_size;
} gs_arena;
void gs_arena_init(gs_arena *a, size_t block_size);
void *gs_arena_alloc(gs_arena *a, size_t size); /* 16-byte aligned, zeroed; NULL on OOM */
/* The same, not zeroed: for tables whose slots are written before they are read
 * (a memo's values behind its keys, a pool's items behind its count). */
void *gs_arena_alloc_raw(gs_arena *a, size_t size);
void gs_arena_free(gs_arena *a);

/* ---- hashing: 64-bit FNV-1a, the one implementation -------------------- */
/* FNV-1a over bytes, from the offset basis 0xcbf29ce484222325 xor seed. */
uint64_t gs_hash_bytes(const void *p, size_t n, uint64_t seed);
/* Plain FNV-1a 64 (seed 0): the kernel cache's entry checksum. */
static inline uint64_t gs_fnv1a64(const void *p, size_t n) { return gs_hash_bytes(p, n, 0); }

/* ---- time ---------------------------------------------------------------- */
/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for intervals only. */
double gs_now_s(void);
/* CPU seconds of the calling thread (CLOCK_THREAD_CPUTIME_ID); 0 if unknown. */
double gs_thread_cpu_s(void);

/* ---- files --------------------------------------------------------------- */
/* Write all len bytes to fd, retrying short writes and EINTR; false with
 * errno set on failure. */
bool gs_write_full(int fd, const void *p, size_t len);
/* Replace the file at path atomically with the bytes a[0..alen) followed by
 * b[0..blen) (either may be empty): write "<path>.tmp.<pid>.<n>" in the same
 * directory, fsync it, rename it over path, then sync the directory (best
 * effort). A reader sees the old file or the whole new one, and processes
 * and threads may write one directory at once. On failure the temp file is
 * removed, the old file is left as it was, and GS_ERR_IO names the step:
 * "cannot create TMP: ERR", "cannot write TMP: ERR", "cannot sync TMP: ERR",
 * "cannot rename TMP to PATH: ERR". Thread-safe. */
gs_status gs_write_file_atomic(gs_ctx *ctx, const char *path, const void *a, size_t alen, const void *b,
                               size_t blen);

/* ---- shared libraries loaded at run time (NVRTC, the CUDA driver, cuBLAS) -- */
/* dlopen(path, RTLD_NOW | RTLD_LOCAL). On failure NULL, and why[n] gets
 * dlerror's text, prefixed with "PATH: " when it does not name the path
 * already. dlerror is per-process state: callers that load from several
 * threads hold a lock around the call. */
void *gs_dlopen(const char *path, char *why, size_t n);
/* One entry point of such a library: the function-pointer member at offset
 * in the caller's table, found under name or, where the library lacks that,
 * under alt (an older name; NULL for none). */
typedef struct gs_dlsym_entry {
    size_t offset;
    const char *name, *alt;
} gs_dlsym_entry;
/* Resolve the n entries from handle into the struct at table. dlsym gives a
 * void *, which POSIX lets convert to a function pointer; the bytes are
 * copied into the member. On the first missing entry: false, *missing its
 * name (the members before it are set). */
bool gs_dlsym_table(void *handle, void *table, const gs_dlsym_entry *e, size_t n, const char **missing);
/* Clear the n members of table that e names (before closing the library). */
void gs_dlsym_clear(void *table, const gs_dlsym_entry *e, size_t n);

/* ---- strings ------------------------------------------------------------- */
/* Remove trailing white space in place. */
void gs_trim_right(char *s);

#endif
