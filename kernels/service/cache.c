/* cache.c — the kernel cache: compiled artifacts keyed by the descriptor hash.
 *
 * In memory: an open-addressing hash map from (key, backend) to a payload
 * (cubin, PTX or source bytes). On disk, when a directory is configured: one
 * file per entry, named <16-hex key>.<backend>.gsk, holding
 *
 *   offset  size  field (little-endian)
 *        0     4  magic "GSKC"
 *        4     4  format version (GS_KCACHE_FORMAT)
 *        8     8  key (gs_kdesc_hash of the zeroed descriptor: op structure,
 *                 ETIR, dialect, arch and codegen version)
 *       16     4  backend (gs_kbackend)
 *       20     4  header bytes (GS_KCACHE_HEADER_BYTES)
 *       24     8  payload length
 *       32     8  FNV-1a 64 of the payload
 *       40     -  payload
 *
 * Writes go through gs_write_file_atomic (util/): a temp file, fsync'd and
 * renamed over the final name, so a reader sees either no file or a complete one, and several
 * processes may fill one directory at once (the last rename wins; all
 * writers of a key write the same bytes). Reads check every header field
 * and the checksum; an entry that fails is counted as corrupt, deleted (best
 * effort) and reported as a miss, so the caller rebuilds it. The disk is an
 * optimisation: an unwritable directory makes gs_kcache_put return
 * GS_ERR_IO, while the in-memory entry is kept and gets keep working.
 *
 * Thread-safe: one mutex guards the map and the counters. Payloads handed
 * out by gs_kcache_get stay valid until gs_kcache_close (a replaced payload
 * is retired, not freed). */
#include "kernels/service/service.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

_Static_assert(sizeof GS_KCACHE_MAGIC - 1 == 4, "magic is 4 bytes");

static const char *const kb_names[GS_KB_COUNT_] = {
    [GS_KB_CUDA_CUBIN] = "cuda-cubin",
    [GS_KB_CUDA_PTX] = "cuda-ptx",
    [GS_KB_CUDA_SOURCE] = "cuda-source",
    [GS_KB_OPENCL_SOURCE] = "opencl-source",
    [GS_KB_NVRTC_OUT] = "nvrtc-out",
};

const char *gs_kbackend_name(gs_kbackend b) {
    return (int)b >= 0 && b < GS_KB_COUNT_ ? kb_names[b] : "unknown";
}

typedef struct kc_entry {
    uint64_t key;
    gs_kbackend backend;
    unsigned char *data; /* len bytes + a NUL */
    size_t len;
} kc_entry;

struct gs_kcache {
    pthread_mutex_t mu;
    char *dir;           /* NULL: memory only */
    kc_entry *slots;     /* open addressing; data == NULL marks an empty slot */
    size_t cap, n;
    unsigned char **retired; /* replaced payloads, freed at close */
    size_t nretired, capretired;
    gs_kcache_stats st;
};

/* ---- little-endian helpers --------------------------------------------------- */
static void put_u32(unsigned char *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)p[i] << (8 * i);
    return v;
}
static uint64_t get_u64(const unsigned char *p) {
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v |= (uint64_t)p[i] << (8 * i);
    return v;
}

void gs_kcache_header_encode(unsigned char *h, uint64_t key, gs_kbackend b, const void *payload, size_t len) {
    memcpy(h, GS_KCACHE_MAGIC, 4);
    put_u32(h + 4, GS_KCACHE_FORMAT);
    put_u64(h + 8, key);
    put_u32(h + 16, (uint32_t)b);
    put_u32(h + 20, GS_KCACHE_HEADER_BYTES);
    put_u64(h + 24, (uint64_t)len);
    put_u64(h + 32, gs_fnv1a64(payload, len));
}

/* ---- the in-memory map ---------------------------------------------------------- */
static size_t slot_of(uint64_t key, gs_kbackend b, size_t cap) {
    uint64_t h = key ^ ((uint64_t)(b + 1) * 0x9e3779b97f4a7c15ull);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return (size_t)(h & (cap - 1));
}

static kc_entry *map_find(gs_kcache *c, uint64_t key, gs_kbackend b) {
    if (!c->cap) return NULL;
    for (size_t i = slot_of(key, b, c->cap);; i = (i + 1) & (c->cap - 1)) {
        kc_entry *e = &c->slots[i];
        if (!e->data) return NULL;
        if (e->key == key && e->backend == b) return e;
    }
}

static bool map_grow(gs_kcache *c) {
    size_t ncap = c->cap ? c->cap * 2 : 64;
    kc_entry *ns = calloc(ncap, sizeof *ns);
    if (!ns) return false;
    for (size_t i = 0; i < c->cap; i++) {
        kc_entry *e = &c->slots[i];
        if (!e->data) continue;
        size_t j = slot_of(e->key, e->backend, ncap);
        while (ns[j].data) j = (j + 1) & (ncap - 1);
        ns[j] = *e;
    }
    free(c->slots);
    c->slots = ns;
    c->cap = ncap;
    return true;
}

static bool retire(gs_kcache *c, unsigned char *p) {
    if (c->nretired == c->capretired) {
        size_t nc = c->capretired ? c->capretired * 2 : 8;
        unsigned char **nr = realloc(c->retired, nc * sizeof *nr);
        if (!nr) return false;
        c->retired = nr;
        c->capretired = nc;
    }
    c->retired[c->nretired++] = p;
    return true;
}

/* Insert (taking ownership of data, which has len bytes + a NUL). Returns the
 * entry, or NULL on OOM (data is then freed). */
static kc_entry *map_insert(gs_kcache *c, uint64_t key, gs_kbackend b, unsigned char *data, size_t len) {
    kc_entry *e = map_find(c, key, b);
    if (e) {
        if (e->len == len && memcmp(e->data, data, len) == 0) {
            free(data);
            return e;
        }
        if (!retire(c, e->data)) {
            free(data);
            return NULL;
        }
        c->st.bytes += (int64_t)len - (int64_t)e->len;
        e->data = data;
        e->len = len;
        return e;
    }
    if ((c->n + 1) * 4 > c->cap * 3 && !map_grow(c)) {
        free(data);
        return NULL;
    }
    size_t i = slot_of(key, b, c->cap);
    while (c->slots[i].data) i = (i + 1) & (c->cap - 1);
    c->slots[i] = (kc_entry){.key = key, .backend = b, .data = data, .len = len};
    c->n++;
    c->st.entries = (int64_t)c->n;
    c->st.bytes += (int64_t)len;
    return &c->slots[i];
}

/* ---- open / close ---------------------------------------------------------------- */
/* mkdir -p; returns 0 or an errno. */
static int mkdir_p(const char *dir) {
    char buf[4096];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf) return ENAMETOOLONG;
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char saved = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            int e = errno;
            buf[i] = saved;
            return e;
        }
        buf[i] = saved;
    }
    struct stat sb;
    if (stat(dir, &sb) != 0) return errno;
    if (!S_ISDIR(sb.st_mode)) return ENOTDIR;
    return 0;
}

gs_status gs_kcache_open(gs_ctx *ctx, const char *dir, gs_kcache **out) {
    if (!out) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kcache_open: out is NULL");
    *out = NULL;
    if (!dir) dir = getenv("GS_CACHE_DIR");
    gs_kcache *c = calloc(1, sizeof *c);
    if (!c) return gs_err(ctx, GS_ERR_NOMEM, "gs_kcache_open: out of memory");
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return gs_err(ctx, GS_ERR_NOMEM, "gs_kcache_open: cannot create a mutex");
    }
    if (dir && *dir) {
        size_t n = strlen(dir);
        while (n > 1 && dir[n - 1] == '/') n--;
        if (n >= 3800) {
            gs_kcache_close(c);
            return gs_err(ctx, GS_ERR_INVALID_ARG, "kernel cache directory name too long (%zu bytes)", n);
        }
        c->dir = malloc(n + 1);
        if (!c->dir) {
            gs_kcache_close(c);
            return gs_err(ctx, GS_ERR_NOMEM, "gs_kcache_open: out of memory");
        }
        memcpy(c->dir, dir, n);
        c->dir[n] = '\0';
        /* Best effort: a directory that cannot be made only costs the disk
         * level; each put then reports GS_ERR_IO naming it. */
        (void)mkdir_p(c->dir);
    }
    *out = c;
    return GS_OK;
}

void gs_kcache_close(gs_kcache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->cap; i++) free(c->slots[i].data);
    for (size_t i = 0; i < c->nretired; i++) free(c->retired[i]);
    free(c->retired);
    free(c->slots);
    free(c->dir);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

const char *gs_kcache_dir(const gs_kcache *c) { return c ? c->dir : NULL; }

void gs_kcache_stats_get(gs_kcache *c, gs_kcache_stats *s) {
    if (!s) return;
    memset(s, 0, sizeof *s);
    if (!c) return;
    pthread_mutex_lock(&c->mu);
    *s = c->st;
    pthread_mutex_unlock(&c->mu);
}

gs_status gs_kcache_path(const gs_kcache *c, uint64_t key, gs_kbackend b, char *buf, size_t n) {
    if (!c || !buf || n == 0 || (int)b < 0 || b >= GS_KB_COUNT_) return GS_ERR_INVALID_ARG;
    if (!c->dir) {
        buf[0] = '\0';
        return GS_ERR_UNSUPPORTED;
    }
    int w = snprintf(buf, n, "%s/%016llx.%s.gsk", c->dir, (unsigned long long)key, gs_kbackend_name(b));
    return w < 0 || (size_t)w >= n ? GS_ERR_INVALID_ARG : GS_OK;
}

/* ---- disk ---------------------------------------------------------------------------- */
/* Read exactly n bytes (retrying short reads); returns bytes read. */
static size_t read_full(int fd, void *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    return got;
}


/* Outcome of reading one disk entry. */
typedef enum { DISK_MISS, DISK_OK, DISK_CORRUPT } disk_result;

/* Read and check the entry at path. On DISK_OK *data (len + NUL) is
 * malloc'd; on DISK_CORRUPT why says what was wrong and *seen identifies
 * the file that was read (to delete that file and no newer one). */
static disk_result disk_read(const char *path, uint64_t key, gs_kbackend b, unsigned char **data, size_t *len,
                             char *why, size_t whyn, struct stat *seen) {
    *data = NULL;
    *len = 0;
    /* O_NONBLOCK: a FIFO under the entry's name opens at once (and is found
     * not to be a regular file) instead of waiting for a writer */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return DISK_MISS; /* absent (or unreadable: treated as absent) */
    disk_result res = DISK_CORRUPT;
    unsigned char h[GS_KCACHE_HEADER_BYTES];
    if (fstat(fd, seen) != 0) {
        snprintf(why, whyn, "cannot stat: %s", strerror(errno));
        goto done;
    }
    if (!S_ISREG(seen->st_mode)) {
        snprintf(why, whyn, "not a regular file");
        goto done;
    }
    uint64_t size = (uint64_t)seen->st_size;
    if (size < GS_KCACHE_HEADER_BYTES || read_full(fd, h, sizeof h) != sizeof h) {
        snprintf(why, whyn, "truncated header (%llu bytes)", (unsigned long long)size);
        goto done;
    }
    if (memcmp(h, GS_KCACHE_MAGIC, 4) != 0) {
        snprintf(why, whyn, "bad magic (not a gensor cache entry)");
        goto done;
    }
    uint32_t ver = get_u32(h + 4), hb = get_u32(h + 20), eb = get_u32(h + 16);
    uint64_t ek = get_u64(h + 8), plen = get_u64(h + 24), sum = get_u64(h + 32);
    if (ver != GS_KCACHE_FORMAT || hb != GS_KCACHE_HEADER_BYTES) {
        snprintf(why, whyn, "format version %u, header %u bytes (expected %u, %u)", ver, hb, GS_KCACHE_FORMAT,
                 (unsigned)GS_KCACHE_HEADER_BYTES);
        goto done;
    }
    if (ek != key || eb != (uint32_t)b) {
        snprintf(why, whyn, "holds key %016llx backend %u, expected %016llx backend %u", (unsigned long long)ek, eb,
                 (unsigned long long)key, (unsigned)b);
        goto done;
    }
    if (plen > GS_KCACHE_MAX_PAYLOAD || plen != size - GS_KCACHE_HEADER_BYTES) {
        snprintf(why, whyn, "payload length %llu but %llu bytes follow the header", (unsigned long long)plen,
                 (unsigned long long)(size - GS_KCACHE_HEADER_BYTES));
        goto done;
    }
    unsigned char *p = malloc((size_t)plen + 1);
    if (!p) {
        res = DISK_MISS; /* no memory: not the entry's fault */
        goto done;
    }
    if (read_full(fd, p, (size_t)plen) != plen) {
        free(p);
        snprintf(why, whyn, "short read of the payload");
        goto done;
    }
    p[plen] = '\0';
    if (gs_fnv1a64(p, (size_t)plen) != sum) {
        free(p);
        snprintf(why, whyn, "checksum mismatch");
        goto done;
    }
    *data = p;
    *len = (size_t)plen;
    res = DISK_OK;
done:
    close(fd);
    return res;
}

/* Delete the corrupt file we read, unless another process has meanwhile
 * renamed a fresh entry over it. */
static void disk_delete_if_same(const char *path, const struct stat *seen) {
    struct stat now;
    if (stat(path, &now) == 0 && now.st_ino == seen->st_ino && now.st_dev == seen->st_dev) (void)unlink(path);
}

/* gs_kcache_get; a miss is counted only with count_miss (single flight looks
 * twice and counts one). */
static bool kc_lookup(gs_ctx *ctx, gs_kcache *c, uint64_t key, gs_kbackend b, const void **bytes, size_t *len,
                      bool count_miss) {
    if (bytes) *bytes = NULL;
    if (len) *len = 0;
    if (!c || (int)b < 0 || b >= GS_KB_COUNT_) return false;
    pthread_mutex_lock(&c->mu);
    kc_entry *e = map_find(c, key, b);
    if (e) {
        c->st.hits++;
        if (bytes) *bytes = e->data;
        if (len) *len = e->len;
        pthread_mutex_unlock(&c->mu);
        return true;
    }
    bool hit = false;
    if (c->dir) {
        char path[4096];
        gs_kcache_path(c, key, b, path, sizeof path);
        unsigned char *data = NULL;
        size_t dlen = 0;
        char why[256] = "";
        struct stat seen;
        disk_result r = disk_read(path, key, b, &data, &dlen, why, sizeof why, &seen);
        if (r == DISK_OK) {
            e = map_insert(c, key, b, data, dlen);
            if (e) {
                hit = true;
                c->st.hits++;
                c->st.disk_hits++;
                if (bytes) *bytes = e->data;
                if (len) *len = e->len;
            }
        } else if (r == DISK_CORRUPT) {
            c->st.corrupt++;
            disk_delete_if_same(path, &seen);
            gs_err(ctx, GS_OK, "kernel cache: corrupt entry %s (%s): deleted, it will be rebuilt", path, why);
        }
    }
    if (!hit && count_miss) c->st.misses++;
    pthread_mutex_unlock(&c->mu);
    return hit;
}

bool gs_kcache_get(gs_ctx *ctx, gs_kcache *c, uint64_t key, gs_kbackend b, const void **bytes, size_t *len) {
    return kc_lookup(ctx, c, key, b, bytes, len, true);
}

gs_status gs_kcache_put(gs_ctx *ctx, gs_kcache *c, uint64_t key, gs_kbackend b, const void *bytes, size_t len) {
    if (!c || (int)b < 0 || b >= GS_KB_COUNT_ || (!bytes && len))
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kcache_put: bad arguments");
    if (len > GS_KCACHE_MAX_PAYLOAD)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_kcache_put: payload of %zu bytes exceeds the %u-byte limit", len,
                      (unsigned)GS_KCACHE_MAX_PAYLOAD);
    unsigned char *copy = malloc(len + 1);
    if (!copy) return gs_err(ctx, GS_ERR_NOMEM, "gs_kcache_put: out of memory (%zu bytes)", len);
    if (len) memcpy(copy, bytes, len);
    copy[len] = '\0';
    pthread_mutex_lock(&c->mu);
    c->st.puts++;
    if (!map_insert(c, key, b, copy, len)) {
        pthread_mutex_unlock(&c->mu);
        return gs_err(ctx, GS_ERR_NOMEM, "gs_kcache_put: out of memory");
    }
    char *dir = c->dir;
    pthread_mutex_unlock(&c->mu);
    if (!dir) return GS_OK;

    /* The disk write runs outside the lock: it only reads the caller's bytes. */
    char path[4096];
    gs_kcache_path(c, key, b, path, sizeof path);
    unsigned char h[GS_KCACHE_HEADER_BYTES];
    gs_kcache_header_encode(h, key, b, bytes, len);
    if (gs_write_file_atomic(ctx, path, h, sizeof h, bytes, len) == GS_OK) return GS_OK;
    pthread_mutex_lock(&c->mu);
    c->st.write_errors++;
    pthread_mutex_unlock(&c->mu);
    char why[GS_MSG_MAX];
    return gs_err(ctx, GS_ERR_IO, "kernel cache directory %s: %s (the entry is kept in memory only)", dir,
                  gs_ctx_msg_copy(ctx, why, sizeof why));
}

/* ---- single flight -------------------------------------------------------------------
 * The lock file sits beside the entry and is removed by its holder after the
 * put (or a failed build), before the unlock. Waiters on the removed file
 * move to the current one (kc_lock), so one builder holds a key at a time:
 * after a put the next finds the entry; after a failed build the next builds
 * it. Where the lock file cannot be made (an unwritable directory cannot
 * hold the entry either) or the wait runs out, a builder builds without the
 * lock: the entries stay correct (atomic renames), only the work is
 * repeated. A holder that dies releases the lock but leaves the file, which
 * the key's next build takes and removes. flock excludes threads and
 * processes on a local file system (on NFS it may not). The descriptor is
 * close-on-exec; a child forked (without an exec) while a build holds it
 * shares the lock until it closes its copy too. */
static bool lock_path(const gs_kcache *c, uint64_t key, gs_kbackend b, char *buf, size_t n) {
    if (gs_kcache_path(c, key, b, buf, n) != GS_OK) return false;
    size_t l = strlen(buf);
    if (l + sizeof ".lock" > n) return false;
    memcpy(buf + l, ".lock", sizeof ".lock");
    return true;
}

/* The entry's lock (see gs_kcache_get_or_lock): its descriptor, or -1. A
 * lock counts only on the file now in the directory: a waiter that gets the
 * lock of a file its holder has removed opens the current one (made afresh
 * if need be) and locks again, so one builder holds the key at a time and
 * only that builder removes the file by its name. */
static int kc_lock(gs_kcache *c, uint64_t key, gs_kbackend b, double *waited_s) {
    *waited_s = 0;
    char path[4096];
    if (!c->dir || !lock_path(c, key, b, path, sizeof path)) return -1;
    double t0 = gs_now_s(), pause = 1e-3;
    int fd = -1;
    for (;;) {
        /* read-only: a lock file another user left is still lockable;
         * O_NONBLOCK: a FIFO left under its name does not block the open */
        fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0666);
        if (fd < 0) break;
        int err = 0;
        while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            err = errno;
            if ((err != EWOULDBLOCK && err != EINTR) || gs_now_s() - t0 >= GS_KCACHE_LOCK_WAIT_S) break;
            struct timespec ts = {0, (long)(pause * 1e9)};
            nanosleep(&ts, NULL);
            if (pause < 16e-3) pause *= 2;
            err = 0;
        }
        if (err) {
            close(fd);
            fd = -1;
            break;
        }
        struct stat held, now;
        if (fstat(fd, &held) == 0 && stat(path, &now) == 0 && held.st_ino == now.st_ino && held.st_dev == now.st_dev)
            break;
        close(fd); /* a removed file's lock: open the current one */
        fd = -1;
        if (gs_now_s() - t0 >= GS_KCACHE_LOCK_WAIT_S) break;
    }
    *waited_s = gs_now_s() - t0;
    return fd;
}

bool gs_kcache_get_or_lock(gs_ctx *ctx, gs_kcache *c, uint64_t key, gs_kbackend b, const void **bytes, size_t *len,
                           int *lock, double *waited_s) {
    *lock = -1;
    if (waited_s) *waited_s = 0;
    if (kc_lookup(ctx, c, key, b, bytes, len, false)) return true;
    if (!c || (int)b < 0 || b >= GS_KB_COUNT_) return false;
    double waited = 0;
    int fd = kc_lock(c, key, b, &waited);
    if (waited_s) *waited_s = waited;
    /* under the lock, or after waiting for it in vain, the entry may be there now */
    if ((fd >= 0 || waited > 0) && kc_lookup(ctx, c, key, b, bytes, len, false)) {
        gs_kcache_unlock(c, key, b, fd);
        return true;
    }
    pthread_mutex_lock(&c->mu);
    c->st.misses++;
    pthread_mutex_unlock(&c->mu);
    *lock = fd;
    return false;
}

void gs_kcache_unlock(gs_kcache *c, uint64_t key, gs_kbackend b, int fd) {
    if (fd < 0) return;
    char path[4096];
    if (c && lock_path(c, key, b, path, sizeof path)) (void)unlink(path);
    close(fd); /* releases the flock */
}

/* ---- NVRTC compiles through the cache ------------------------------------------------
 * A GS_KB_NVRTC_OUT payload: three little-endian u64 lengths (PTX, cubin,
 * log), then those bytes. The cache's checksum guards the bytes; the lengths
 * are checked against the payload so that an entry of another layout is a
 * miss (and is overwritten), never a read past its end. */
static uint64_t nvrtc_key(const char *src, const char *name, int sm, bool want_ptx, bool want_cubin) {
    char tail[160];
    int n = snprintf(tail, sizeof tail, "|%s|sm_%d|ptx%d|cubin%d|nvrtc-out", name, sm, want_ptx, want_cubin);
    uint64_t h = gs_fnv1a64(src, strlen(src));
    return h ^ gs_fnv1a64(tail, (size_t)(n > 0 ? n : 0)) * 0x9e3779b97f4a7c15ull;
}

/* Copy LEN bytes of P into a new NUL-terminated buffer (NULL when len is 0). */
static void *dup_part(const unsigned char *p, uint64_t len, bool *ok) {
    if (!len) return NULL;
    char *d = malloc((size_t)len + 1);
    if (!d) {
        *ok = false;
        return NULL;
    }
    memcpy(d, p, (size_t)len);
    d[len] = '\0';
    return d;
}

/* Fill *out from a cached payload; false when its layout does not hold. */
static bool nvrtc_out_decode(const unsigned char *p, size_t len, bool want_cubin, gs_nvrtc_out *out) {
    if (len < 24) return false;
    uint64_t lp = get_u64(p), lc = get_u64(p + 8), ll = get_u64(p + 16);
    if (lp > len || lc > len || ll > len || 24 + lp + lc + ll != len) return false;
    bool ok = true;
    memset(out, 0, sizeof *out);
    out->ptx = dup_part(p + 24, lp, &ok);
    out->ptx_len = (size_t)lp;
    out->cubin = dup_part(p + 24 + lp, lc, &ok);
    out->cubin_len = (size_t)lc;
    out->log = dup_part(p + 24 + lp + lc, ll, &ok);
    if (!ok) {
        gs_nvrtc_out_free(out);
        return false;
    }
    if (want_cubin && out->log) gs_ptxas_parse(out->log, &out->stats);
    return true;
}

/* Compile and store a GS_KB_NVRTC_OUT payload (not stored: too large, or no memory). */
static gs_status compile_and_put(gs_ctx *ctx, gs_kcache *c, uint64_t key, const char *src, const char *name, int sm,
                                 bool want_ptx, bool want_cubin, gs_nvrtc_out *out) {
    gs_status s = gs_nvrtc_compile(ctx, src, name, sm, want_ptx, want_cubin, out);
    if (s != GS_OK) return s;
    size_t lp = out->ptx ? out->ptx_len : 0, lc = out->cubin ? out->cubin_len : 0;
    size_t ll = out->log ? strlen(out->log) : 0, total = 24 + lp + lc + ll;
    unsigned char *p = total <= GS_KCACHE_MAX_PAYLOAD ? malloc(total) : NULL;
    if (!p) return GS_OK; /* too large or no memory: compiled, not cached */
    put_u64(p, lp);
    put_u64(p + 8, lc);
    put_u64(p + 16, ll);
    if (lp) memcpy(p + 24, out->ptx, lp);
    if (lc) memcpy(p + 24 + lp, out->cubin, lc);
    if (ll) memcpy(p + 24 + lp + lc, out->log, ll);
    /* an unwritable directory is counted (write_errors); the compile stands */
    gs_status ps = gs_kcache_put(ctx, c, key, GS_KB_NVRTC_OUT, p, total);
    free(p);
    if (ps != GS_OK && ps != GS_ERR_IO) return ps;
    return GS_OK;
}

uint64_t gs_kcache_src_key(uint64_t desc_key, const char *src) {
    return gs_hash_bytes(src, strlen(src), desc_key);
}

gs_status gs_nvrtc_compile_cached(gs_ctx *ctx, gs_kcache *c, const char *src, const char *name, int sm, bool want_ptx,
                                  bool want_cubin, gs_nvrtc_out *out, bool *hit) {
    if (hit) *hit = false;
    if (!c || !src || !name || !out) return gs_nvrtc_compile(ctx, src, name, sm, want_ptx, want_cubin, out);
    uint64_t key = nvrtc_key(src, name, sm, want_ptx, want_cubin);
    const void *bytes;
    size_t len;
    int lk = -1;
    if (gs_kcache_get_or_lock(ctx, c, key, GS_KB_NVRTC_OUT, &bytes, &len, &lk, NULL) &&
        nvrtc_out_decode(bytes, len, want_cubin, out)) {
        if (hit) *hit = true;
        return GS_OK;
    }
    gs_status s = compile_and_put(ctx, c, key, src, name, sm, want_ptx, want_cubin, out);
    gs_kcache_unlock(c, key, GS_KB_NVRTC_OUT, lk);
    return s;
}
