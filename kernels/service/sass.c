/* sass.c — static SASS checks: cuobjdump -sass on a cubin, counted by class.
 *
 * No GPU is needed: NVRTC builds the cubin (nvrtc.c) and cuobjdump, a
 * stand-alone binary from the PyPI wheel nvidia-cuda-cuobjdump (`make
 * sass-tools` puts it in build/venv), disassembles it. A listing holds one
 * instruction per line: its byte offset in a C comment, an optional guard
 * predicate, the opcode with its dot-separated modifiers, the operands and
 * the first half of its encoding in another comment; e.g. (comment markers
 * shown as <>)
 *
 *           Function : gs_69387689d86e9a3e
 *   <00a0>   LDG.E.128.CONSTANT R12, desc[UR6][R2.64] ;   <0x00000006020c7981>
 *   <0360>   @P1 BRA 0x240 ;                               <0xfffffffc00b41947>
 *
 * The next line, a comment holding the rest of the 128-bit encoding, starts
 * with a space after the comment marker and is not an instruction. nvdisasm
 * writes branch targets as labels, `(.L_x_4), defined by ".L_x_4:" lines
 * before the instruction; both forms are read. */
#include "kernels/service/service.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const struct {
    const char *label, *key;
} sass_names[GS_SASS_NCLASS] = {
    [GS_SASS_LDG128] = {"LDG.E.128", "ldg128"},     [GS_SASS_LDG] = {"LDG.other", "ldg_other"},
    [GS_SASS_LDS128] = {"LDS.128", "lds128"},       [GS_SASS_LDS64] = {"LDS.64", "lds64"},
    [GS_SASS_LDS] = {"LDS.other", "lds_other"},     [GS_SASS_STS128] = {"STS.128", "sts128"},
    [GS_SASS_STS] = {"STS.other", "sts_other"},     [GS_SASS_LDGSTS128] = {"LDGSTS.128", "ldgsts128"},
    [GS_SASS_LDGSTS] = {"LDGSTS.other", "ldgsts_other"},
    [GS_SASS_LDL] = {"LDL", "ldl"},                 [GS_SASS_STL] = {"STL", "stl"},
    [GS_SASS_SHFL] = {"SHFL", "shfl"},              [GS_SASS_ISETP] = {"ISETP", "isetp"},
    [GS_SASS_BAR] = {"BAR", "bar"},                 [GS_SASS_FFMA] = {"FFMA", "ffma"},
    [GS_SASS_HMMA] = {"HMMA", "hmma"},              [GS_SASS_LDSM] = {"LDSM", "ldsm"},
    [GS_SASS_TOTAL] = {"total", "total"},
};

const char *gs_sass_class_label(gs_sass_class c) {
    return (unsigned)c < GS_SASS_NCLASS ? sass_names[c].label : "?";
}
const char *gs_sass_class_key(gs_sass_class c) {
    return (unsigned)c < GS_SASS_NCLASS ? sass_names[c].key : "?";
}

/* ---- finding cuobjdump ------------------------------------------------------ */

static bool is_exec_file(const char *p) {
    struct stat st;
    return p && *p && !stat(p, &st) && S_ISREG(st.st_mode) && !access(p, X_OK);
}

static bool copy_path(const char *src, char *dst, size_t cap) {
    size_t n = strlen(src);
    if (n >= cap) return false;
    memcpy(dst, src, n + 1);
    return true;
}

/* The wheel installs nvidia/cu13/bin/cuobjdump under the venv's
 * site-packages; the python3.X and cuNN parts are globbed (root is escaped,
 * so a '[' or '*' in it is literal). */
static bool find_in_venv(const char *root, char *path, size_t cap) {
    gs_sb pat;
    gs_sb_init(&pat);
    for (const char *p = root; *p; p++) {
        if (strchr("*?[]\\", *p)) gs_sb_puts(&pat, "\\");
        gs_sb_printf(&pat, "%c", *p);
    }
    gs_sb_puts(&pat, "/build/venv/lib/python3*/site-packages/nvidia/*/bin/cuobjdump");
    bool found = false;
    glob_t g;
    if (pat.buf && !pat.oom && glob(pat.buf, 0, NULL, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc && !found; i++)
            if (is_exec_file(g.gl_pathv[i])) found = copy_path(g.gl_pathv[i], path, cap);
        globfree(&g);
    }
    gs_sb_free(&pat);
    return found;
}

static bool find_on_path(char *path, size_t cap) {
    const char *env = getenv("PATH");
    if (!env) return false;
    char buf[4096];
    for (const char *p = env;; p++) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        /* an empty PATH entry is the current directory */
        int w = snprintf(buf, sizeof buf, "%.*s/cuobjdump", n ? (int)n : 1, n ? p : ".");
        if (w > 0 && (size_t)w < sizeof buf && is_exec_file(buf)) return copy_path(buf, path, cap);
        if (!end) return false;
        p = end;
    }
}

gs_status gs_sass_find_tool(gs_ctx *ctx, const char *root, char *path, size_t cap) {
    if (!path || cap == 0) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_sass_find_tool: no path buffer");
    path[0] = '\0';
    const char *env = getenv("GS_CUOBJDUMP");
    if (env && *env) {
        /* an explicit choice is never silently replaced by another tool */
        if (is_exec_file(env) && copy_path(env, path, cap)) return GS_OK;
        struct stat sb;
        const char *why = stat(env, &sb) ? strerror(errno)
                          : !S_ISREG(sb.st_mode) ? "not a regular file"
                          : access(env, X_OK) ? strerror(errno)
                          : "path too long";
        return gs_err(ctx, GS_ERR_TOOL_MISSING,
                      "cuobjdump not found: GS_CUOBJDUMP=%s is not an executable file (%s); fix or unset it, "
                      "or run make sass-tools",
                      env, why);
    }
    if (!root || !*root) root = ".";
    if (find_in_venv(root, path, cap) || find_on_path(path, cap)) return GS_OK;
    const char *home = getenv("CUDA_HOME");
    char buf[4096];
    if (home && *home) {
        snprintf(buf, sizeof buf, "%s/bin/cuobjdump", home);
        if (is_exec_file(buf) && copy_path(buf, path, cap)) return GS_OK;
    }
#ifdef GS_CUDA_HOME
    snprintf(buf, sizeof buf, "%s/bin/cuobjdump", GS_CUDA_HOME);
    if (is_exec_file(buf) && copy_path(buf, path, cap)) return GS_OK;
#else
    buf[0] = '\0';
#endif
    return gs_err(ctx, GS_ERR_TOOL_MISSING,
                  "cuobjdump not found: run make sass-tools (looked in %s/build/venv, on PATH%s%s; "
                  "or set GS_CUOBJDUMP)",
                  root, buf[0] ? " and in " : "", buf[0] ? buf : "");
}

/* ---- running it ----------------------------------------------------------------- */

/* Create a temp file from a template under $TMPDIR (or /tmp). */
static int make_temp(gs_ctx *ctx, const char *what, char *name, size_t cap, gs_status *st) {
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir) dir = "/tmp";
    int w = snprintf(name, cap, "%s/gensor-%s-XXXXXX", dir, what);
    int fd = w > 0 && (size_t)w < cap ? mkstemp(name) : -1;
    if (fd < 0) {
        *st = gs_err(ctx, GS_ERR_IO, "cannot create a temp file in %s: %s", dir,
                     w > 0 && (size_t)w < cap ? strerror(errno) : "path too long");
        name[0] = '\0';
    }
    return fd;
}

/* The first line of a file (at most cap-1 bytes); "" when empty. */
static void first_line(const char *file, char *buf, size_t cap) {
    buf[0] = '\0';
    FILE *f = fopen(file, "r");
    if (!f) return;
    size_t n = fread(buf, 1, cap - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
}

gs_status gs_sass_disasm(gs_ctx *ctx, const char *tool, const void *cubin, size_t len, char **text) {
    if (!text) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_sass_disasm: text is NULL");
    *text = NULL;
    if (!tool || !*tool || !cubin || !len)
        return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_sass_disasm: need a tool path and a non-empty cubin");
    gs_status st = GS_OK;
    char cpath[4096], epath[4096];
    epath[0] = '\0';
    int efd = -1, pfd[2] = {-1, -1};
    gs_sb out;
    gs_sb_init(&out);

    int cfd = make_temp(ctx, "cubin", cpath, sizeof cpath, &st);
    if (cfd < 0) goto done;
    const char *p = cubin;
    for (size_t left = len; left;) {
        ssize_t w = write(cfd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            st = gs_err(ctx, GS_ERR_IO, "cannot write %s: %s", cpath, w < 0 ? strerror(errno) : "short write");
            break;
        }
        p += w, left -= (size_t)w;
    }
    if (close(cfd) && st == GS_OK) st = gs_err(ctx, GS_ERR_IO, "cannot write %s: %s", cpath, strerror(errno));
    if (st != GS_OK) goto done;
    /* stderr goes to a file: its first line names the problem on failure */
    efd = make_temp(ctx, "cuobjdump-err", epath, sizeof epath, &st);
    if (efd < 0) goto done;
    if (pipe(pfd)) {
        st = gs_err(ctx, GS_ERR_IO, "pipe: %s", strerror(errno));
        goto done;
    }
    fcntl(pfd[0], F_SETFD, FD_CLOEXEC);

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, efd, 2);
    if (pfd[1] > 2) posix_spawn_file_actions_addclose(&fa, pfd[1]);
    if (efd > 2) posix_spawn_file_actions_addclose(&fa, efd);
    char *argv[] = {(char *)tool, "-sass", cpath, NULL};
    pid_t pid;
    int e = posix_spawn(&pid, tool, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[1]);
    pfd[1] = -1;
    if (e) {
        st = gs_err(ctx, GS_ERR_TOOL_MISSING, "cannot run %s: %s; run make sass-tools or set GS_CUOBJDUMP", tool,
                    strerror(e));
        goto done;
    }
    char buf[8193];
    for (;;) {
        ssize_t r = read(pfd[0], buf, sizeof buf - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        buf[r] = '\0';
        gs_sb_puts(&out, buf);
    }
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {}
    char msg[512];
    first_line(epath, msg, sizeof msg);
    if (!WIFEXITED(ws) || WEXITSTATUS(ws) != 0) {
        if (WIFSIGNALED(ws))
            st = gs_err(ctx, GS_ERR_TOOL, "%s -sass was killed by signal %d%s%s", tool, WTERMSIG(ws), *msg ? ": " : "",
                        msg);
        else
            st = gs_err(ctx, GS_ERR_TOOL, "%s -sass failed (exit %d)%s%s", tool, WEXITSTATUS(ws), *msg ? ": " : "",
                        msg);
    } else if (out.oom) {
        st = gs_err(ctx, GS_ERR_NOMEM, "no memory for the SASS listing");
    }

done:
    if (pfd[0] >= 0) close(pfd[0]);
    if (pfd[1] >= 0) close(pfd[1]);
    if (efd >= 0) close(efd);
    if (epath[0]) unlink(epath);
    if (cpath[0]) unlink(cpath);
    if (st == GS_OK) {
        *text = gs_sb_take(&out);
        if (!*text) *text = calloc(1, 1);
        if (!*text) st = gs_err(ctx, GS_ERR_NOMEM, "no memory for the SASS listing");
    }
    gs_sb_free(&out);
    return st;
}

/* ---- parsing ---------------------------------------------------------------- */

#define SASS_MAX_SRC 8
typedef struct sass_ins {
    int func;        /* function index (addresses restart per function) */
    int64_t addr;    /* byte offset */
    int cls;         /* gs_sass_class, or -1: counted in the total only, -2: not counted (NOP, @!PT) */
    bool bra;
    bool jump;       /* BRA, or CALL.REL.NOINC: ptxas' jump out of a loop it made (no return) */
    bool uncond;     /* an unguarded BRA (no fall-through), EXIT or RET */
    bool intop;      /* integer / address arithmetic (IMAD, IADD3, LEA, SHF, LOP3, ISETP, SEL, ...) */
    int gbytes;      /* bytes a global load (LDG, LDGSTS) moves per thread; 0 otherwise */
    int sbytes;      /* bytes a shared store (STS, LDGSTS) writes per thread; 0 otherwise */
    int64_t target;  /* branch target offset; -1 unknown */
    int label;       /* nvdisasm label index of the target; -1 none */
    int16_t dst, ndst;          /* first general register written and how many (0: none) */
    int16_t src[SASS_MAX_SRC];  /* first general register of each register range read (RZ and
                                   beyond SASS_MAX_SRC dropped) */
    int8_t srcw[SASS_MAX_SRC];  /* registers in each range: 2 for a 64-bit address, an HMMA
                                   operand's fragment registers (hmma_widths) */
    int nsrc;
    int8_t mma_k;    /* HMMA: the instruction's k (16, 8 or 4; m16n8 on sm_80 and later) */
    int reuse;       /* operands flagged .reuse (the register reuse cache) */
    bool cold;       /* PMTRIG: the printer's mark of cold code (lower.c: the last tile's
                        bounded compute) */
} sass_ins;

typedef struct sass_label {
    char name[64];
    int func;
    size_t ins;      /* index of the instruction that follows the label */
} sass_label;

typedef struct sass_parse {
    sass_ins *ins;
    size_t n, cap;
    sass_label *labels;
    size_t nl, capl;
    int func;
    bool oom;
} sass_parse;

static void *grow(void *p, size_t *cap, size_t need, size_t elem, bool *oom) {
    if (need <= *cap) return p;
    size_t c = *cap ? *cap * 2 : 256;
    while (c < need) c *= 2;
    void *q = realloc(p, c * elem);
    if (!q) {
        *oom = true;
        return p;
    }
    *cap = c;
    return q;
}

/* Is m one of the dot-separated modifiers in mods (".E.128.CONSTANT")? */
static bool has_mod(const char *mods, const char *m) {
    size_t n = strlen(m);
    for (const char *p = mods; (p = strchr(p, '.')); p++)
        if (!strncmp(p + 1, m, n) && (p[1 + n] == '.' || p[1 + n] == '\0')) return true;
    return false;
}

/* Class of an opcode such as "LDG.E.128.CONSTANT". */
static int classify(const char *op) {
    char base[32];
    size_t bl = strcspn(op, ".");
    if (bl >= sizeof base) return -1;
    memcpy(base, op, bl);
    base[bl] = '\0';
    const char *mods = op + bl;
    bool wide = has_mod(mods, "128") || has_mod(mods, "256"); /* sm_100 adds 256-bit loads */
    if (!strcmp(base, "NOP")) return -2;
    if (!strcmp(base, "LDG")) return wide ? GS_SASS_LDG128 : GS_SASS_LDG;
    if (!strcmp(base, "LDS")) return has_mod(mods, "128") ? GS_SASS_LDS128 : has_mod(mods, "64") ? GS_SASS_LDS64 : GS_SASS_LDS;
    if (!strcmp(base, "STS")) return has_mod(mods, "128") ? GS_SASS_STS128 : GS_SASS_STS;
    if (!strcmp(base, "LDGSTS")) return has_mod(mods, "128") ? GS_SASS_LDGSTS128 : GS_SASS_LDGSTS;
    if (!strcmp(base, "LDL")) return GS_SASS_LDL;
    if (!strcmp(base, "STL")) return GS_SASS_STL;
    if (!strcmp(base, "SHFL")) return GS_SASS_SHFL;
    if (!strcmp(base, "ISETP")) return GS_SASS_ISETP;
    if (!strcmp(base, "BAR")) return GS_SASS_BAR;
    if (!strcmp(base, "FFMA") || !strcmp(base, "FFMA2")) return GS_SASS_FFMA;
    if (!strcmp(base, "HMMA")) return GS_SASS_HMMA;
    if (!strcmp(base, "LDSM")) return GS_SASS_LDSM;
    return -1;
}

/* Integer and address arithmetic: what index computations and loop control
 * cost in issue slots (uniform-datapath forms U... included). */
static bool is_intop(const char *op) {
    static const char *const names[] = {"IMAD", "IADD3", "IADD", "IADD32I", "LEA", "SHF", "SHL", "SHR", "LOP3",
                                        "LOP", "LOP32I", "ISETP", "SEL", "IMNMX", "VIMNMX", "IABS", "IMUL",
                                        "FLO", "POPC", "BREV", "PRMT", "ISCADD", "XMAD", "IMUL32I", "ICMP"};
    size_t bl = strcspn(op, ".");
    const char *b = op;
    if (b[0] == 'U' && bl > 1 && strncmp(b, "UMOV", 4)) b++, bl--; /* UIADD3, ULEA, USHF, UISETP, ... */
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (strlen(names[i]) == bl && !strncmp(b, names[i], bl)) return true;
    return false;
}

/* Bytes per thread of a global load (LDG or cp.async's LDGSTS) from its
 * modifiers; 0 for anything else. */
static int global_bytes(const char *op) {
    size_t bl = strcspn(op, ".");
    if (!((bl == 3 && !strncmp(op, "LDG", 3)) || (bl == 6 && !strncmp(op, "LDGSTS", 6)))) return 0;
    const char *mods = op + bl;
    if (has_mod(mods, "128")) return 16;
    if (has_mod(mods, "64")) return 8;
    if (has_mod(mods, "U8") || has_mod(mods, "S8")) return 1;
    if (has_mod(mods, "U16") || has_mod(mods, "S16")) return 2;
    return 4;
}

static int store_bytes(const char *op) {
    size_t bl = strcspn(op, ".");
    if (bl != 3 || strncmp(op, "STS", 3)) return 0;
    const char *mods = op + bl;
    return has_mod(mods, "128") ? 16 : has_mod(mods, "64") ? 8 : has_mod(mods, "U8") ? 1 : has_mod(mods, "U16") ? 2 : 4;
}

/* The registers of an HMMA's operands D, A, B and C (w[0..3]) from its
 * opcode, HMMA.<m><n><k>.<accumulator>[.<inputs>] (HMMA.16816.F32.BF16,
 * HMMA.1688.F32.TF32, HMMA.16816.F16): per lane, the 16 x k A tile, the
 * k x 8 B tile and the 16 x 8 accumulators, in 32-bit registers. Returns
 * the k, or 0 for a shape other than m16n8 (sm_70's HMMA.884). */
static int hmma_widths(const char *op, int w[4]) {
    const char *mods = op + strcspn(op, ".");
    int k = has_mod(mods, "16816") ? 16 : has_mod(mods, "1688") ? 8 : has_mod(mods, "1684") ? 4 : 0;
    if (!k) return 0;
    const int eb = has_mod(mods, "TF32") ? 4 : 2; /* bytes per input element */
    w[0] = w[3] = has_mod(mods, "F32") ? 4 : 2;   /* 128 accumulators of f32 or f16 */
    w[1] = 16 * k * eb / (32 * 4);
    w[2] = 8 * k * eb / (32 * 4);
    return k;
}

/* Registers a destination of op writes from its first: a 128-bit or 64-bit
 * access, an ldmatrix of .x4 or .x2 (one register per 8x8 matrix), an
 * HMMA's accumulators. */
static int dst_width(const char *op) {
    const char *mods = op + strcspn(op, ".");
    int w[4];
    if (!strncmp(op, "HMMA.", 5) && hmma_widths(op, w)) return w[0];
    if (!strncmp(op, "LDSM.", 5)) return has_mod(mods, "4") ? 4 : has_mod(mods, "2") ? 2 : 1;
    if (has_mod(mods, "128")) return 4;
    return has_mod(mods, "64") || has_mod(mods, "WIDE") || !strncmp(op, "CS2R", 4) ? 2 : 1;
}

/* Registers an operand names: R<n> not preceded by a letter or digit (so
 * UR4, SR_TID and RZ are not), with ".64" widening an address; w > 0 is the
 * operand's width (an HMMA fragment). */
static void operand_regs(sass_ins *in, const char *s, size_t n, bool as_dst, const char *op, int w) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] != 'R' || i + 1 >= n || !isdigit((unsigned char)s[i + 1])) continue;
        if (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_')) continue;
        int r = 0;
        size_t j = i + 1;
        while (j < n && isdigit((unsigned char)s[j])) r = r * 10 + (s[j++] - '0');
        if (as_dst) {
            in->dst = (int16_t)r;
            in->ndst = (int16_t)dst_width(op);
            return;
        }
        if (in->nsrc < SASS_MAX_SRC) {
            in->src[in->nsrc] = (int16_t)r;
            in->srcw[in->nsrc++] = (int8_t)(w > 0 ? w : j + 3 <= n && !strncmp(s + j, ".64", 3) ? 2 : 1);
        }
        i = j - 1;
    }
}

/* The operands of an instruction (the text between its opcode and ';'),
 * comma by comma: the first, when it is a plain register, is written; every
 * other register named is read (including the first operand's when it is
 * an address). An HMMA's operands take their fragments' widths. */
static void parse_operands(sass_ins *in, const char *op, const char *ops, size_t n) {
    int w[4] = {0, 0, 0, 0};
    if (!strncmp(op, "HMMA.", 5)) in->mma_k = (int8_t)hmma_widths(op, w);
    size_t i = 0;
    for (int k = 0; i < n; k++) {
        while (i < n && (ops[i] == ' ' || ops[i] == '\t')) i++;
        size_t from = i;
        while (i < n && ops[i] != ',') i++;
        bool plain = k == 0 && from < n && ops[from] == 'R' && from + 1 < n && isdigit((unsigned char)ops[from + 1]);
        operand_regs(in, ops + from, i - from, plain, op, k < 4 ? w[k] : 0);
        if (i < n) i++; /* the comma */
    }
}

static void add_label(sass_parse *ps, const char *s, size_t n) {
    ps->labels = grow(ps->labels, &ps->capl, ps->nl + 1, sizeof *ps->labels, &ps->oom);
    if (ps->oom) return;
    sass_label *l = &ps->labels[ps->nl++];
    if (n >= sizeof l->name) n = sizeof l->name - 1;
    memcpy(l->name, s, n);
    l->name[n] = '\0';
    l->func = ps->func;
    l->ins = ps->n;
}

/* Branch target of the operands after "BRA": a label `(.L_x_4) or the last
 * hex number (BRA 0x240, BRA.U !UP0, 0x3c0, BRA.DIV UR4, 0x540). */
static void branch_target(sass_parse *ps, const char *ops, sass_ins *in) {
    const char *lab = strstr(ops, "`(");
    if (lab) {
        lab += 2;
        size_t n = strcspn(lab, ")");
        for (size_t i = 0; i < ps->nl; i++)
            if (ps->labels[i].func == ps->func && strlen(ps->labels[i].name) == n && !strncmp(ps->labels[i].name, lab, n)) {
                in->label = (int)i;
                return;
            }
        /* a forward label: resolved once the whole listing is read */
        add_label(ps, lab, n);
        if (!ps->oom) {
            ps->labels[ps->nl - 1].ins = (size_t)-1;
            in->label = (int)(ps->nl - 1);
        }
        return;
    }
    const char *last = NULL;
    for (const char *p = ops; (p = strstr(p, "0x")); p += 2) last = p;
    if (last) in->target = strtoll(last, NULL, 16);
}

/* A directive line of nvdisasm: ".text.<kernel>:" opens a kernel's section,
 * ".L_x_N:" defines a label (resolving a forward reference to it, or adding
 * a new name). */
static void parse_directive(sass_parse *ps, const char *line) {
    size_t n = strcspn(line, ": \t");
    if (line[n] != ':' || line[n + 1] != '\0') return;
    if (!strncmp(line, ".text.", 6)) {
        ps->func++;
        return;
    }
    if (strncmp(line, ".L", 2)) return;
    for (size_t i = 0; i < ps->nl; i++)
        if (ps->labels[i].ins == (size_t)-1 && ps->labels[i].func == ps->func && strlen(ps->labels[i].name) == n &&
            !strncmp(ps->labels[i].name, line, n)) {
            ps->labels[i].ins = ps->n;
            return;
        }
    add_label(ps, line, n);
}

/* An instruction line such as "/" "*0240*" "/  @P0 BRA 0x3c0 ;", from p just
 * after its address: its class, and for a branch its target. */
static void parse_instruction(sass_parse *ps, long long addr, const char *p) {
    while (*p == ' ' || *p == '\t' || *p == '{') p++;
    /* guard predicate: @P0, @UP1, ...; @!PT never executes (ptxas pads
     * cp.async with such dummy LDS), so it counts as a NOP */
    bool never = !strncmp(p, "@!PT", 4) && (p[4] == ' ' || p[4] == '\t');
    bool guarded = *p == '@' && !(!strncmp(p, "@PT", 3) && (p[3] == ' ' || p[3] == '\t'));
    if (*p == '@') p += strcspn(p, " \t");
    while (*p == ' ' || *p == '\t') p++;
    if (!isupper((unsigned char)*p)) return; /* .byte, .word, ... data */
    char op[64];
    size_t ol = strcspn(p, " \t;");
    if (ol >= sizeof op) ol = sizeof op - 1;
    memcpy(op, p, ol);
    op[ol] = '\0';
    ps->ins = grow(ps->ins, &ps->cap, ps->n + 1, sizeof *ps->ins, &ps->oom);
    if (ps->oom) return;
    sass_ins *in = &ps->ins[ps->n];
    *in = (sass_ins){.func = ps->func, .addr = addr, .cls = never ? -2 : classify(op), .target = -1, .label = -1};
    char ops[256];
    size_t n = strcspn(p + ol, ";");
    if (n >= sizeof ops) n = sizeof ops - 1;
    memcpy(ops, p + ol, n);
    ops[n] = '\0';
    if (!never) {
        in->intop = is_intop(op);
        in->gbytes = global_bytes(op);
        in->sbytes = store_bytes(op) ? store_bytes(op) : in->gbytes * (op[3] == 'S'); /* LDGSTS: both */
        parse_operands(in, op, ops, n);
        for (const char *r = strstr(ops, ".reuse"); r; r = strstr(r + 6, ".reuse")) in->reuse++;
        in->cold = !strncmp(op, "PMTRIG", 6);
    }
    bool is_bra = !strncmp(op, "BRA", 3) && (op[3] == '\0' || op[3] == '.');
    if (!never && !guarded && (is_bra || !strcmp(op, "EXIT") || !strcmp(op, "RET") || !strncmp(op, "RET.", 4)))
        in->uncond = !(is_bra && (strchr(ops, ',') || strchr(op, '.'))); /* BRA.U !UP0, x; BRA.DIV UR4, x */
    bool noinc = !strncmp(op, "CALL.REL.NOINC", 14) && (op[14] == '\0' || op[14] == '.');
    if (!never && noinc) {
        in->jump = true;
        branch_target(ps, ops, in);
    }
    if (!never && is_bra) {
        in->bra = in->jump = true;
        branch_target(ps, ops, in);
    }
    ps->n++;
}

static void parse_line(sass_parse *ps, const char *line) {
    while (*line == ' ' || *line == '\t') line++;
    if (!strncmp(line, "Function :", 10)) { /* cuobjdump: one per kernel */
        ps->func++;
        return;
    }
    if (line[0] == '.') {
        parse_directive(ps, line);
        return;
    }
    if (line[0] != '/' || line[1] != '*' || !isxdigit((unsigned char)line[2])) return;
    char *end;
    long long addr = strtoll(line + 2, &end, 16);
    if (end[0] != '*' || end[1] != '/') return;
    parse_instruction(ps, addr, end + 2);
}

static void count_range(const sass_parse *ps, size_t from, size_t to, int64_t *c) {
    memset(c, 0, GS_SASS_NCLASS * sizeof *c);
    for (size_t i = from; i < to; i++) {
        int k = ps->ins[i].cls;
        if (k == -2) continue;
        if (k >= 0) c[k]++;
        c[GS_SASS_TOTAL]++;
    }
}

/* ---- the steady-state iteration ---------------------------------------------------
 * The main loop's body holds cold code too: the bounded compute of the last
 * reduce tile, the predicated copies of edge tiles, the prologue's guards.
 * The steady state is one path through the body's basic blocks, from the
 * loop head to the backward branch, chosen over the acyclic graph (other
 * backward branches dropped, so an inner loop's body is passed once; edges
 * leaving the body dropped) by, in order: the most math (FFMA, or the
 * tensor cores' HMMA) outside inner loops (a full tile's unrolled compute,
 * not the last tile's bounded loops, whose partly unrolled nests can hold
 * more FFMA in one pass than the full tile),
 * then the most math inside inner loops (a full tile whose k-steps are
 * unrolled only partly runs an inner loop too), then the most bytes copied
 * (loaded from global memory plus stored to shared memory, where cp.async
 * counts as both: the next tile's copies are issued, not skipped), then
 * the fewest instructions (a copy's vector fast path, not its predicated
 * scalar one). A block holding PMTRIG, the printer's mark on the last
 * tile's bounded compute (lower.c's cold spelling), is never on it: that
 * branch's remainder code can hold more FFMA outside inner loops than a
 * partly unrolled full tile's. */
typedef struct path_score {
    int64_t ffma, ffma_inner, bytes, total; /* (ffma: FFMA and HMMA) */
    bool set;
    bool cold; /* (a block's own) it holds the printer's cold mark */
} path_score;

static bool score_better(const path_score *a, const path_score *b) {
    if (!b->set) return a->set;
    if (a->ffma != b->ffma) return a->ffma > b->ffma;
    if (a->ffma_inner != b->ffma_inner) return a->ffma_inner > b->ffma_inner;
    if (a->bytes != b->bytes) return a->bytes > b->bytes;
    return a->total < b->total;
}

/* Index of the instruction at byte offset addr in function func within
 * [lo, hi]; -1 when none. */
static ptrdiff_t index_of(const sass_parse *ps, size_t lo, size_t hi, int func, int64_t addr) {
    for (size_t i = lo; i <= hi; i++)
        if (ps->ins[i].func == func && ps->ins[i].addr == addr) return (ptrdiff_t)i;
    return -1;
}

static int64_t branch_addr(const sass_parse *ps, const sass_ins *b) {
    if (b->label >= 0) {
        size_t li = ps->labels[b->label].ins;
        return li < ps->n && ps->ins[li].func == b->func ? ps->ins[li].addr : -1;
    }
    return b->target;
}

/* Shared loads that feed the math: LDS of every width, and ldmatrix. */
static bool is_lds(int cls) {
    return cls == GS_SASS_LDS128 || cls == GS_SASS_LDS64 || cls == GS_SASS_LDS || cls == GS_SASS_LDSM;
}

/* The math of either core: FFMA, or the tensor cores' HMMA. */
static bool is_math(int cls) { return cls == GS_SASS_FFMA || cls == GS_SASS_HMMA; }

/* The shared-load-to-math distances along the steady path p[0..n)
 * (instruction indices, NOPs left out), which repeats: a load late in the
 * iteration may feed the next iteration's first FFMA or HMMA. */
static void lds_distances(const sass_parse *ps, const size_t *p, size_t n, gs_sass_steady *st) {
    int64_t sum = 0;
    st->lds_min_slots = -1;
    for (size_t i = 0; i < n; i++) {
        const sass_ins *ld = &ps->ins[p[i]];
        if (!is_lds(ld->cls) || ld->ndst <= 0) continue;
        bool live[4] = {false};
        int nlive = 0;
        for (int k = 0; k < ld->ndst && k < 4; k++) live[k] = true, nlive++;
        int64_t between = 0; /* math instructions between the load and its consumer */
        for (size_t d = 1; d < n && nlive > 0; d++) {
            const sass_ins *q = &ps->ins[p[(i + d) % n]];
            bool reads = false;
            if (is_math(q->cls))
                for (int s = 0; s < q->nsrc && !reads; s++)
                    for (int r = 0; r < q->srcw[s] && !reads; r++) {
                        int k = q->src[s] + r - ld->dst;
                        reads = k >= 0 && k < 4 && live[k];
                    }
            if (reads) {
                st->lds_fed++;
                sum += (int64_t)d;
                if (st->lds_min_slots < 0 || (int64_t)d < st->lds_min_slots) st->lds_min_slots = (int64_t)d;
                if ((int64_t)d < GS_SASS_NEAR_SLOTS) {
                    if (st->lds_near < GS_SASS_NEAR_LIST)
                        st->near[st->lds_near] = (gs_sass_near){ld->addr, q->addr, (int64_t)d, between};
                    st->lds_near++;
                }
                break;
            }
            between += is_math(q->cls);
            for (int k = 0; k < q->ndst; k++) {
                int r = q->dst + k - ld->dst;
                if (r >= 0 && r < 4 && live[r]) live[r] = false, nlive--;
            }
        }
    }
    st->lds_mean_slots = st->lds_fed ? (double)sum / (double)st->lds_fed : 0.0;
}

/* The steady path of the loop [lo, hi] (hi: its backward branch). */
static bool steady_state(const sass_parse *ps, size_t lo, size_t hi, gs_sass_steady *st, bool *oom) {
    memset(st, 0, sizeof *st);
    st->lds_min_slots = -1;
    size_t n = hi - lo + 1;
    /* block leaders: the head, branch targets inside, instructions after a branch */
    bool *lead = calloc(n, sizeof *lead);
    ptrdiff_t *tgt = malloc(n * sizeof *tgt); /* forward in-body branch target, or -1 */
    size_t *blk = malloc(n * sizeof *blk);     /* block of each instruction */
    bool *inner = calloc(n, sizeof *inner);    /* inside an inner loop's body */
    if (!lead || !tgt || !blk || !inner) goto nomem;
    lead[0] = true;
    for (size_t i = lo; i <= hi; i++) {
        const sass_ins *in = &ps->ins[i];
        tgt[i - lo] = -1;
        if (!in->jump && !in->uncond) continue;
        if (i + 1 <= hi) lead[i + 1 - lo] = true;
        if (!in->jump || i == hi) continue;
        int64_t a = branch_addr(ps, in);
        if (a >= ps->ins[lo].addr && a <= in->addr) /* an inner loop [a, this branch] */
            for (size_t j = i + 1; j-- > lo && ps->ins[j].addr >= a;) inner[j - lo] = true;
        ptrdiff_t t = a < 0 || a <= in->addr ? -1 : index_of(ps, i + 1, hi, in->func, a);
        if (t >= 0) {
            lead[(size_t)t - lo] = true;
            tgt[i - lo] = t;
        }
    }
    size_t nb = 0;
    for (size_t i = 0; i < n; i++) {
        if (lead[i]) nb++;
        blk[i] = nb - 1;
    }
    size_t *first = malloc(nb * sizeof *first), *prev = malloc(nb * sizeof *prev);
    path_score *sc = calloc(nb, sizeof *sc), *own = calloc(nb, sizeof *own);
    bool found = false;
    if (!first || !prev || !sc || !own) {
        free(first), free(prev), free(sc), free(own);
        goto nomem;
    }
    for (size_t i = 0; i < n; i++) {
        const sass_ins *in = &ps->ins[lo + i];
        if (lead[i]) first[blk[i]] = i;
        path_score *o = &own[blk[i]];
        if (in->cold) o->cold = true;
        if (in->cls == -2) continue;
        o->ffma += is_math(in->cls) && !inner[i];
        o->ffma_inner += is_math(in->cls) && inner[i];
        o->bytes += in->gbytes + in->sbytes;
        o->total++;
    }
    sc[0] = own[0];
    sc[0].set = true;
    for (size_t b = 0; b < nb; b++) {
        if (!sc[b].set) continue;
        size_t last = (b + 1 < nb ? first[b + 1] : n) - 1;
        const sass_ins *in = &ps->ins[lo + last];
        size_t succ[2];
        int ns = 0;
        if (lo + last == hi) continue; /* the backward branch ends the iteration */
        if (!in->uncond && b + 1 < nb) succ[ns++] = b + 1;
        if (tgt[last] >= 0) succ[ns++] = blk[(size_t)tgt[last] - lo];
        for (int k = 0; k < ns; k++) {
            if (own[succ[k]].cold) continue; /* marked cold by the printer: never steady */
            path_score c = {sc[b].ffma + own[succ[k]].ffma, sc[b].ffma_inner + own[succ[k]].ffma_inner,
                            sc[b].bytes + own[succ[k]].bytes, sc[b].total + own[succ[k]].total, true, false};
            if (score_better(&c, &sc[succ[k]])) sc[succ[k]] = c, prev[succ[k]] = b;
        }
    }
    size_t end = blk[n - 1];
    if (sc[end].set) {
        /* walk back from the branch's block, then list the path forward */
        size_t *path = malloc(n * sizeof *path), np = 0;
        bool *on = calloc(nb, sizeof *on);
        if (!path || !on) {
            free(path), free(on), free(first), free(prev), free(sc), free(own);
            goto nomem;
        }
        for (size_t b = end;; b = prev[b]) {
            on[b] = true;
            st->blocks++;
            if (b == 0) break;
        }
        for (size_t i = 0; i < n; i++) {
            const sass_ins *in = &ps->ins[lo + i];
            if (!on[blk[i]]) continue;
            /* the runs of consecutive instructions on the path (NOPs in them too) */
            if (i == 0 || !on[blk[i - 1]]) {
                if (st->nspan < GS_SASS_SPANS) st->span[st->nspan][0] = in->addr;
                st->nspan++;
            }
            if (st->nspan <= GS_SASS_SPANS) st->span[st->nspan - 1][1] = in->addr;
            if (in->cls == -2) continue;
            path[np++] = lo + i;
            if (in->cls >= 0) st->count[in->cls]++;
            st->count[GS_SASS_TOTAL]++;
            st->intops += in->intop;
            st->gbytes += in->gbytes;
            st->ffma_inner += in->cls == GS_SASS_FFMA && inner[i];
            if (in->cls == GS_SASS_FFMA) st->ffma_reuse += in->reuse;
            if (in->cls == GS_SASS_HMMA && !st->mma_k) st->mma_k = in->mma_k;
        }
        lds_distances(ps, path, np, st);
        st->found = found = true;
        st->begin = ps->ins[lo].addr;
        st->end = ps->ins[hi].addr;
        free(path), free(on);
    }
    free(first), free(prev), free(sc), free(own);
    free(lead), free(tgt), free(blk), free(inner);
    return found;
nomem:
    free(lead), free(tgt), free(blk), free(inner);
    *oom = true;
    return false;
}

gs_status gs_sass_parse(gs_ctx *ctx, const char *text, gs_sass_summary *out) {
    if (!out || !text) return gs_err(ctx, GS_ERR_INVALID_ARG, "gs_sass_parse: NULL argument");
    memset(out, 0, sizeof *out);
    sass_parse ps = {0};
    char line[1024];
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        size_t m = n < sizeof line - 1 ? n : sizeof line - 1;
        memcpy(line, p, m);
        line[m] = '\0';
        if (m && line[m - 1] == '\r') line[m - 1] = '\0';
        parse_line(&ps, line);
        p += n;
        if (*p) p++;
    }
    gs_status st = GS_OK;
    if (ps.oom) {
        st = gs_err(ctx, GS_ERR_NOMEM, "no memory to parse the SASS listing");
        goto done;
    }
    if (!ps.n) {
        st = gs_err(ctx, GS_ERR_PARSE, "no SASS instructions in the listing (expected cuobjdump -sass output)");
        goto done;
    }
    out->functions = ps.func > 0 ? ps.func : 1;
    count_range(&ps, 0, ps.n, out->all);

    /* main loop: among backward branches, the body [target, branch] with the
     * most FFMA and HMMA (the math of either core), then the most
     * instructions (an outer loop over an inner one) */
    int64_t best_ffma = -1, best_total = -1;
    for (size_t i = 0; i < ps.n; i++) {
        sass_ins *b = &ps.ins[i];
        if (!b->bra) continue;
        int64_t t = b->target;
        if (b->label >= 0) {
            size_t li = ps.labels[b->label].ins;
            t = li < ps.n && ps.ins[li].func == b->func ? ps.ins[li].addr : -1;
        }
        if (t < 0 || t >= b->addr) continue; /* forward, unknown, or the BRA-to-self trap at the end */
        out->loops++;
        size_t from = i;
        while (from > 0 && ps.ins[from - 1].func == b->func && ps.ins[from - 1].addr >= t) from--;
        int64_t c[GS_SASS_NCLASS];
        count_range(&ps, from, i + 1, c);
        int64_t math = c[GS_SASS_FFMA] + c[GS_SASS_HMMA];
        if (math > best_ffma || (math == best_ffma && c[GS_SASS_TOTAL] > best_total)) {
            best_ffma = math;
            best_total = c[GS_SASS_TOTAL];
            memcpy(out->loop, c, sizeof c);
            out->has_loop = true;
            out->loop_begin = ps.ins[from].addr;
            out->loop_end = b->addr;
        }
        /* the steady state: over every loop, the steady path that holds a
         * barrier (a tile loop, not an inner k-loop or the last tile's
         * bounded loops), then the most math (FFMA and HMMA), then the fewest instructions
         * (a peeled steady loop beside the general loop of the same tile) */
        gs_sass_steady cand;
        bool oom = false;
        if (steady_state(&ps, from, i, &cand, &oom)) {
            const gs_sass_steady *bs = &out->steady;
            bool cb = cand.count[GS_SASS_BAR] > 0, bb = bs->count[GS_SASS_BAR] > 0;
            int64_t cf = cand.count[GS_SASS_FFMA] + cand.count[GS_SASS_HMMA],
                    bf = bs->count[GS_SASS_FFMA] + bs->count[GS_SASS_HMMA];
            if (!bs->found || cb > bb ||
                (cb == bb && (cf > bf || (cf == bf && cand.count[GS_SASS_TOTAL] < bs->count[GS_SASS_TOTAL]))))
                out->steady = cand;
        }
        if (oom) {
            st = gs_err(ctx, GS_ERR_NOMEM, "no memory for the steady-state path");
            break;
        }
    }
done:
    free(ps.ins);
    free(ps.labels);
    return st;
}

gs_status gs_sass_cubin(gs_ctx *ctx, const char *root, const void *cubin, size_t len, gs_sass_summary *out,
                        char **text, char *tool_path, size_t tool_cap) {
    if (text) *text = NULL;
    char tool[4096];
    gs_status st = gs_sass_find_tool(ctx, root, tool, sizeof tool);
    if (st != GS_OK) return st;
    if (tool_path && tool_cap) snprintf(tool_path, tool_cap, "%s", tool);
    char *t = NULL;
    st = gs_sass_disasm(ctx, tool, cubin, len, &t);
    if (st == GS_OK) st = gs_sass_parse(ctx, t, out);
    if (st == GS_OK && text) *text = t;
    else free(t);
    return st;
}
