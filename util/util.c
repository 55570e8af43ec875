/* util.c — status strings, per-context errors, string builder, arena, hash,
 * the clock, atomic file writes. */
#include "util/util.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const status_msgs[] = {
    [0] = "ok",
    [-GS_ERR_INVALID_ARG] = "invalid argument",
    [-GS_ERR_PARSE] = "malformed specification",
    [-GS_ERR_UNKNOWN_OP] = "unknown operator",
    [-GS_ERR_BAD_SHAPE] = "invalid shape",
    [-GS_ERR_NOMEM] = "out of memory",
    [-GS_ERR_HW_UNKNOWN] = "unknown hardware profile",
    [-GS_ERR_HW_INVALID] = "invalid hardware profile",
    [-GS_ERR_JSON] = "malformed JSON",
    [-GS_ERR_IO] = "I/O error",
    [-GS_ERR_NO_CANDIDATE] = "no configuration passes the resource check",
    [-GS_ERR_NVRTC_MISSING] = "NVRTC library not available",
    [-GS_ERR_NVRTC_COMPILE] = "NVRTC compilation failed",
    [-GS_ERR_ARCH_UNSUPPORTED] = "architecture not supported by the installed NVRTC",
    [-GS_ERR_OPENCL_MISSING] = "no OpenCL platform or device",
    [-GS_ERR_OPENCL] = "OpenCL error",
    [-GS_ERR_CUDA_MISSING] = "no CUDA device: measurement-free mode",
    [-GS_ERR_CUDA] = "CUDA driver error",
    [-GS_ERR_MISMATCH] = "result does not match the reference",
    [-GS_ERR_UNSUPPORTED] = "unsupported request",
    [-GS_ERR_TOOL_MISSING] = "external tool not found",
    [-GS_ERR_TOOL] = "external tool failed",
};
_Static_assert(sizeof status_msgs / sizeof status_msgs[0] == 1 - GS_STATUS_MIN_,
               "status message table must cover every gs_status");

const char *gs_status_str(gs_status s) {
    if (s > 0 || s < GS_STATUS_MIN_ || !status_msgs[-s]) return "unknown status";
    return status_msgs[-s];
}

gs_ctx *gs_ctx_create(void) { return calloc(1, sizeof(gs_ctx)); }
void gs_ctx_destroy(gs_ctx *ctx) { free(ctx); }
const char *gs_ctx_errmsg(const gs_ctx *ctx) { return ctx ? ctx->msg : ""; }

gs_status gs_err(gs_ctx *ctx, gs_status s, const char *fmt, ...) {
    if (ctx) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->msg, sizeof ctx->msg, fmt, ap);
        va_end(ap);
    }
    return s;
}

const char *gs_ctx_msg_copy(const gs_ctx *ctx, char *buf, size_t n) {
    if (!n) return "";
    snprintf(buf, n, "%s", ctx ? ctx->msg : "");
    return buf;
}

/* ---- the C locale for numbers -------------------------------------------- */
/* The C locale for numbers, made once for the process (pthread_once) and
 * shared by every thread (a locale object is read-only once made; it is
 * never freed): a newlocale per call cost an allocation per formatted
 * piece of kernel source (+5 % of an emission's instructions). */
static locale_t c_numeric;
static void c_numeric_make(void) { c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0); }

/* The calling thread's locale before it was switched to the C locale for
 * numbers, or (locale_t)0 when it could not be (no memory for the locale
 * at the first call: the thread's own locale stays). */
static locale_t c_numeric_enter(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, c_numeric_make);
    return c_numeric ? uselocale(c_numeric) : (locale_t)0;
}

static void c_numeric_leave(locale_t old) {
    if (old) uselocale(old);
}

int gs_vsnprintf_c(char *buf, size_t n, const char *fmt, va_list ap) {
    locale_t old = c_numeric_enter();
    int w = vsnprintf(buf, n, fmt, ap);
    c_numeric_leave(old);
    return w;
}

int gs_snprintf_c(char *buf, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int w = gs_vsnprintf_c(buf, n, fmt, ap);
    va_end(ap);
    return w;
}

double gs_strtod_c(const char *s, char **end) {
    locale_t old = c_numeric_enter();
    double x = strtod(s, end);
    int e = errno; /* ERANGE survives the switch back */
    c_numeric_leave(old);
    errno = e;
    return x;
}

/* ---- string builder: geometric growth, sticky OOM ------------------------ */
void gs_sb_init(gs_sb *sb) { memset(sb, 0, sizeof *sb); }

static bool sb_reserve(gs_sb *sb, size_t extra) {
    if (sb->oom) return false;
    size_t need = sb->len + extra + 1;
    if (need <= sb->cap) return true;
    size_t cap = sb->cap ? sb->cap : 256;
    while (cap < need) cap *= 2;
    char *nb = realloc(sb->buf, cap);
    if (!nb) {
        sb->oom = true;
        return false;
    }
    sb->buf = nb;
    sb->cap = cap;
    return true;
}

void gs_sb_vprintf(gs_sb *sb, const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    char tmp[256];
    int n = gs_vsnprintf_c(tmp, sizeof tmp, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !sb_reserve(sb, (size_t)n)) return;
    if ((size_t)n < sizeof tmp)
        memcpy(sb->buf + sb->len, tmp, (size_t)n + 1);
    else
        gs_vsnprintf_c(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void gs_sb_printf(gs_sb *sb, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    gs_sb_vprintf(sb, fmt, ap);
    va_end(ap);
}

void gs_sb_puts(gs_sb *sb, const char *s) {
    size_t n = strlen(s);
    if (!sb_reserve(sb, n)) return;
    memcpy(sb->buf + sb->len, s, n + 1);
    sb->len += n;
}

char *gs_sb_take(gs_sb *sb) {
    char *b = NULL;
    if (!sb->oom) {
        if (!sb->buf) sb_reserve(sb, 0);
        if (sb->buf) sb->buf[sb->len] = 0;
        b = sb->buf;
        sb->buf = NULL;
    }
    gs_sb_free(sb);
    return b;
}

void gs_sb_free(gs_sb *sb) {
    free(sb->buf);
    gs_sb_init(sb);
}

/* ---- arena ---------------------------------------------------------------- */
struct gs_arena_block {
    gs_arena_block *next;
    size_t used, size;
    _Alignas(16) unsigned char data[];
};

void gs_arena_init(gs_arena *a, size_t block_size) {
    a->head = NULL;
    a->block_size = block_size ? block_size : 64 * 1024;
}

void *gs_arena_alloc(gs_arena *a, size_t size) {
    void *p = gs_arena_alloc_raw(a, size);
    if (p) memset(p, 0, size);
    return p;
}

void *gs_arena_alloc_raw(gs_arena *a, size_t size) {
    if (size > SIZE_MAX / 2) return NULL; /* no rounding or header overflow */
    size = (size + 15u) & ~(size_t)15u;
    gs_arena_block *b = a->head;
    if (!b || b->size - b->used < size) {
        size_t bs = size > a->block_size ? size : a->block_size;
        b = malloc(sizeof *b + bs);
        if (!b) return NULL;
        b->next = a->head;
        b->used = 0;
        b->size = bs;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += size;
    return p;
}

void gs_arena_free(gs_arena *a) {
    gs_arena_block *b = a->head;
    while (b) {
        gs_arena_block *n = b->next;
        free(b);
        b = n;
    }
    a->head = NULL;
}

uint64_t gs_hash_bytes(const void *p, size_t n, uint64_t seed) {
    const unsigned char *s = p;
    uint64_t h = 14695981039346656037ull ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* ---- time ------------------------------------------------------------------ */
double gs_now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double gs_thread_cpu_s(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- atomic file writes ------------------------------------------------------ */
bool gs_write_full(int fd, const void *p, size_t len) {
    const unsigned char *b = p;
    while (len > 0) {
        ssize_t w = write(fd, b, len);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = EIO;
            return false;
        }
        b += w;
        len -= (size_t)w;
    }
    return true;
}

/* Best effort: make the rename itself durable by syncing the directory. */
static void sync_parent_dir(const char *path) {
    const char *slash = strrchr(path, '/');
    char dir[4096];
    if (!slash) {
        strcpy(dir, ".");
    } else if (slash == path) {
        strcpy(dir, "/");
    } else {
        size_t n = (size_t)(slash - path);
        if (n >= sizeof dir) return;
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
    int dfd = open(dir, O_RDONLY | O_CLOEXEC);
    if (dfd < 0) return;
    (void)fsync(dfd);
    close(dfd);
}

/* Temp names carry the pid and a process-wide counter, so threads of one
 * process and processes sharing a directory never write the same file. */
static uint64_t tmp_counter;

gs_status gs_write_file_atomic(gs_ctx *ctx, const char *path, const void *a, size_t alen, const void *b,
                               size_t blen) {
    if (!path || !*path || (!a && alen) || (!b && blen))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_write_file_atomic: NULL or empty argument");
    size_t tlen = strlen(path) + 64;
    char *tmp = malloc(tlen);
    if (!tmp) return gs_err(ctx, GS_ERR_NOMEM, "out of memory writing %s", path);
    unsigned long long n = __atomic_add_fetch(&tmp_counter, 1, __ATOMIC_RELAXED);
    snprintf(tmp, tlen, "%s.tmp.%ld.%llu", path, (long)getpid(), n);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) {
        /* left over by an earlier process with our pid that died mid-write */
        (void)unlink(tmp);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    if (fd < 0) {
        gs_status s = gs_err(ctx, GS_ERR_IO, "cannot create %s: %s", tmp, strerror(errno));
        free(tmp);
        return s;
    }
    const char *step = NULL;
    int err = 0;
    if (!gs_write_full(fd, a, alen) || !gs_write_full(fd, b, blen)) {
        step = "write";
        err = errno ? errno : EIO;
    } else if (fsync(fd) != 0 && errno != EINVAL) { /* EINVAL: a file system without fsync */
        step = "sync";
        err = errno;
    }
    if (close(fd) != 0 && !step) {
        step = "write"; /* a deferred write error (NFS, quota) shows at close */
        err = errno;
    }
    gs_status s = GS_OK;
    if (!step && rename(tmp, path) != 0) {
        err = errno;
        s = gs_err(ctx, GS_ERR_IO, "cannot rename %s to %s: %s", tmp, path, strerror(err));
    } else if (step) {
        s = gs_err(ctx, GS_ERR_IO, "cannot %s %s: %s", step, tmp, strerror(err));
    }
    if (s != GS_OK) (void)unlink(tmp);
    else sync_parent_dir(path);
    free(tmp);
    return s;
}

/* ---- shared libraries -------------------------------------------------------- */
void *gs_dlopen(const char *path, char *why, size_t n) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    const char *e = dlerror();
    /* dlerror() usually names the path already; add it when not. */
    if (e && strstr(e, path)) snprintf(why, n, "%s", e);
    else snprintf(why, n, "%s: %s", path, e ? e : "dlopen failed");
    return NULL;
}

bool gs_dlsym_table(void *handle, void *table, const gs_dlsym_entry *e, size_t n, const char **missing) {
    for (size_t i = 0; i < n; i++) {
        void *p = dlsym(handle, e[i].name);
        if (!p && e[i].alt) p = dlsym(handle, e[i].alt);
        if (!p) {
            *missing = e[i].name;
            return false;
        }
        memcpy((char *)table + e[i].offset, &p, sizeof p);
    }
    return true;
}

void gs_dlsym_clear(void *table, const gs_dlsym_entry *e, size_t n) {
    void *none = NULL;
    for (size_t i = 0; i < n; i++) memcpy((char *)table + e[i].offset, &none, sizeof none);
}

/* ---- strings ------------------------------------------------------------------ */
void gs_trim_right(char *s) {
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
}
