/* The exact search's inner loop (dnn64build/planner/exact.py, the reference).

   Every function here mirrors the method of exact.py's _Search with the same
   name, rule for rule and in the same order, so both searches visit the same
   nodes (tests/planner/test_exact_core.py checks it). Python drives the
   restart rounds and computes the preorders; a round's search, the tight
   windows' relaxations (small searches of their own) and the memos are here.

   Differences that change no node: state keys are kept modulo 2**128 (Python
   keeps the exact sums; they differ only on a 128-bit collision), the
   unplaced buffers of a section are kept in another order (no rule depends on
   it), and floor_profile's check sorts only the floors that can fail it.

   Built on first use by dnn64build/planner/native_core.py (cc -O2 -shared). */

#define _POSIX_C_SOURCE 199309L /* clock_gettime */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__extension__ typedef unsigned __int128 u128; /* gcc, clang */
typedef int64_t i64;

enum { NODE_OVERHEAD = 256, TIGHT_SLACK = 64, WINDOW_NODES = 32, WINDOW_SHARE = 4,
       WINDOW_SETUP = 8 * NODE_OVERHEAD };
/* Why a search stopped (the Python exceptions). */
enum { STOP_NONE, STOP_BUDGET, STOP_DEADLINE, STOP_ROUND };
/* The switches, in exact.SWITCHES order (the first eleven). */
enum { CANONICAL, SECTION_BOUND, SYMMETRIC, DOMINANCE, HATLESS, DECOMPOSITION,
       UNPLACED_FLOOR, STACKED_TWINS, FLOOR_PROFILE, FAILURE_MEMO, TIGHT_WINDOWS, NSWITCH };
/* The counters Python reads and writes (exact._CompiledSearch). */
enum { C_NODES, C_RELAXED, C_WINDOWED, C_UNITS, C_ROUND_END, C_WINDOWS, NCOUNTER };

/* A set of 128-bit keys (open addressing; 0 marks a free slot, so key 0 is kept aside). */
typedef struct {
    u128 *slots;
    size_t cap, used;
    int has_zero;
} KeySet;

static void keyset_free(KeySet *s) { free(s->slots); memset(s, 0, sizeof *s); }

static size_t key_hash(u128 k, size_t cap) {
    uint64_t h = (uint64_t)k ^ (uint64_t)(k >> 64);
    h *= 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 7) & (cap - 1);
}

static int keyset_has(const KeySet *s, u128 k) {
    if (!k) return s->has_zero;
    if (!s->cap) return 0;
    for (size_t p = key_hash(k, s->cap);; p = (p + 1) & (s->cap - 1)) {
        if (s->slots[p] == k) return 1;
        if (!s->slots[p]) return 0;
    }
}

static int keyset_add(KeySet *s, u128 k) {
    if (!k) { s->has_zero = 1; return 0; }
    if (2 * (s->used + 1) > s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        u128 *slots = calloc(cap, sizeof *slots);
        if (!slots) return -1;
        for (size_t q = 0; q < s->cap; q++) {
            if (!s->slots[q]) continue;
            size_t p = key_hash(s->slots[q], cap);
            while (slots[p]) p = (p + 1) & (cap - 1);
            slots[p] = s->slots[q];
        }
        free(s->slots);
        s->slots = slots;
        s->cap = cap;
    }
    size_t p = key_hash(k, s->cap);
    while (s->slots[p] && s->slots[p] != k) p = (p + 1) & (s->cap - 1);
    if (!s->slots[p]) { s->slots[p] = k; s->used++; }
    return 0;
}

/* One window verdict (exact._Search.window_verdicts). */
typedef struct { u128 key; int a, b; int verdict; } Verdict;

typedef struct Search Search;
struct Search {
    int n, sections;
    char sw[NSWITCH];
    i64 max_units, max_nodes; /* max_nodes < 0: no cap */
    double deadline;          /* CLOCK_MONOTONIC seconds; < 0: none */
    i64 *footprint, *alignment, *start_floor, *lower, *upper;
    int *first, *last;
    int *conf_at, *conf;       /* conflicts of i: conf[conf_at[i] .. conf_at[i+1]) */
    int *memb_at, *memb;       /* members of section k, likewise, the unplaced first */
    int *mpos_at, *mpos;       /* where i is among section k's: memb[mpos[mpos_at[i] + k - first[i]]] */
    i64 *total;
    int *twin_class, *class_at, *class_memb; /* the members of each class */
    char *stacked;
    const u128 *zobrist, *top_key, *where, *piece_keys;
    int *order, *rank, *twin;  /* twin: -1 for none; rank: the listing's (a piece's own) */
    int *order_rank;           /* the preorder's rank (stacked twins compare it) */
    char letters[4];           /* the preorder's keys (exact._Search.letters) */
    double *scale;             /* and its shuffle's factors */
    i64 *width, *area;         /* the W and A keys */
    u128 piece_key;            /* the piece being searched (exact._Search.piece_key) */
    /* state */
    i64 *offset, *floor, *tops, *remaining; /* offset -1: unplaced */
    int *unplaced_count, *cuts;
    int *hist_i, *hist_raised_at, depth;
    u128 *hist_key;
    int *raised;               /* the raised conflicts of every history entry */
    i64 *olds;
    int raised_top;
    i64 *stacked_top;          /* placed buffers with a stacked twin, sorted by (top, i) */
    int *stacked_i, stacked_count;
    i64 *scratch_floor, *scratch_size; /* floors_fit's, 2 n each */
    u128 state_key;
    i64 counters[NCOUNTER];
    i64 next_clock;
    int stop;
    /* memos: one per preorder (Python numbers them); the current one */
    KeySet *memos;
    int memo_count;
    KeySet *memo;
    Verdict *verdicts;
    size_t verdict_cap, verdict_used;
};

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static i64 align_up(i64 value, i64 alignment) { return (value + alignment - 1) / alignment * alignment; }

/* ---- building (exact._Search.__init__) ---- */

typedef struct { i64 when; int is_start, i; } Event;

static int event_cmp(const void *pa, const void *pb) {
    const Event *a = pa, *b = pb;
    if (a->when != b->when) return a->when < b->when ? -1 : 1;
    if (a->is_start != b->is_start) return a->is_start - b->is_start;
    return a->i - b->i;
}

/* exact.maximal_cliques */
static int maximal_cliques(int n, const i64 *lower, const i64 *upper, int *first, int *last) {
    Event *events = malloc(2 * (size_t)n * sizeof *events);
    if (!events) return -1;
    for (int i = 0; i < n; i++) {
        events[2 * i] = (Event){upper[i], 0, i};
        events[2 * i + 1] = (Event){lower[i], 1, i};
    }
    qsort(events, 2 * (size_t)n, sizeof *events, event_cmp);
    int count = 0, opened = 0;
    for (int e = 0; e < 2 * n; e++) {
        int i = events[e].i;
        if (events[e].is_start) {
            first[i] = count;
            opened = 1;
        } else {
            if (opened) { count++; opened = 0; }
            last[i] = count;
        }
    }
    free(events);
    return count;
}

static const Search *sort_search; /* the search whose keys the comparators read */

/* conflicts[i] | {i} == conflicts[j] | {j} (mark: n bytes, all zero) */
static int same_conflicts(const Search *s, int i, int j, char *mark) {
    if (s->conf_at[i + 1] - s->conf_at[i] != s->conf_at[j + 1] - s->conf_at[j]) return 0;
    for (int c = s->conf_at[i]; c < s->conf_at[i + 1]; c++) mark[s->conf[c]] = 1;
    mark[i] = 1;
    int same = mark[j];
    for (int c = s->conf_at[j]; c < s->conf_at[j + 1] && same; c++)
        same = mark[s->conf[c]];
    for (int c = s->conf_at[i]; c < s->conf_at[i + 1]; c++) mark[s->conf[c]] = 0;
    mark[i] = 0;
    return same;
}

static void *alloc(size_t count, size_t size, int *failed) {
    void *p = calloc(count ? count : 1, size);
    if (!p) *failed = 1;
    return p;
}

static void search_free(Search *s);

/* The search over buffers [lower, upper) x footprint, placed at or above
   start_floor; rand holds 3 n + 4 random keys (exact._Search's zobrist,
   top_key, where_key and piece_keys draw them in this order). */
static Search *search_new(int n, const i64 *lower, const i64 *upper, const i64 *footprint,
                          const i64 *alignment, const i64 *start_floor, const u128 *rand,
                          const char *sw, i64 max_units, i64 max_nodes, double deadline) {
    Search *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    int failed = 0;
    s->n = n;
    memcpy(s->sw, sw, NSWITCH);
    s->max_units = max_units;
    s->max_nodes = max_nodes;
    s->deadline = deadline;
    s->zobrist = rand;
    s->top_key = rand + n;
    s->where = rand + 2 * n;
    s->piece_keys = rand + 2 * n + 4;
    s->footprint = alloc(n, sizeof(i64), &failed);
    s->alignment = alloc(n, sizeof(i64), &failed);
    s->start_floor = alloc(n, sizeof(i64), &failed);
    s->lower = alloc(n, sizeof(i64), &failed);
    s->upper = alloc(n, sizeof(i64), &failed);
    s->first = alloc(n, sizeof(int), &failed);
    s->last = alloc(n, sizeof(int), &failed);
    s->conf_at = alloc(n + 1, sizeof(int), &failed);
    if (failed) { search_free(s); return NULL; }
    memcpy(s->footprint, footprint, n * sizeof(i64));
    memcpy(s->alignment, alignment, n * sizeof(i64));
    memcpy(s->start_floor, start_floor, n * sizeof(i64));
    memcpy(s->lower, lower, n * sizeof(i64));
    memcpy(s->upper, upper, n * sizeof(i64));
    s->sections = maximal_cliques(n, lower, upper, s->first, s->last);
    if (s->sections < 0) { search_free(s); return NULL; }
    int K = s->sections;
    /* conflicts: overlapping lifetimes, ascending */
    size_t nconf = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            nconf += j != i && lower[i] < upper[j] && lower[j] < upper[i];
    s->conf = alloc(nconf, sizeof(int), &failed);
    s->total = alloc(K, sizeof(i64), &failed);
    s->memb_at = alloc(K + 1, sizeof(int), &failed);
    if (failed) { search_free(s); return NULL; }
    nconf = 0;
    for (int i = 0; i < n; i++) {
        s->conf_at[i] = (int)nconf;
        for (int j = 0; j < n; j++)
            if (j != i && lower[i] < upper[j] && lower[j] < upper[i]) s->conf[nconf++] = j;
    }
    s->conf_at[n] = (int)nconf;
    size_t nmemb = 0;
    for (int i = 0; i < n; i++) {
        for (int k = s->first[i]; k < s->last[i]; k++) {
            s->total[k] += footprint[i];
            s->memb_at[k + 1]++;
        }
        nmemb += s->last[i] - s->first[i];
    }
    for (int k = 0; k < K; k++) s->memb_at[k + 1] += s->memb_at[k];
    s->memb = alloc(nmemb, sizeof(int), &failed);
    s->mpos = alloc(nmemb, sizeof(int), &failed);
    s->mpos_at = alloc(n, sizeof(int), &failed);
    int *fill = alloc(K, sizeof(int), &failed);
    if (failed) { free(fill); search_free(s); return NULL; }
    for (int i = 0, at = 0; i < n; at += s->last[i] - s->first[i], i++) {
        s->mpos_at[i] = at;
        for (int k = s->first[i]; k < s->last[i]; k++) {
            s->mpos[at + k - s->first[i]] = s->memb_at[k] + fill[k];
            s->memb[s->memb_at[k] + fill[k]++] = i;
        }
    }
    free(fill);
    /* stacked-twin classes: equal conflicts (with themselves), alignment and start floor */
    s->twin_class = alloc(n, sizeof(int), &failed);
    s->class_at = alloc(n + 1, sizeof(int), &failed);
    s->class_memb = alloc(n, sizeof(int), &failed);
    s->stacked = alloc(n, 1, &failed);
    if (failed) { search_free(s); return NULL; }
    /* a hash of each buffer's conflicts (with itself) picks the candidates */
    uint64_t *hash = alloc(n, sizeof *hash, &failed);
    int *reps = alloc(n, sizeof(int), &failed);
    char *mark = alloc(n, 1, &failed);
    if (failed) { free(hash); free(reps); free(mark); search_free(s); return NULL; }
    for (int i = 0; i < n; i++) {
        hash[i] = (uint64_t)rand[i];
        for (int c = s->conf_at[i]; c < s->conf_at[i + 1]; c++) hash[i] += (uint64_t)rand[s->conf[c]];
    }
    int classes = 0;
    for (int i = 0; i < n; i++) {
        s->twin_class[i] = -1;
        for (int c = 0; c < classes && s->twin_class[i] < 0; c++) {
            int j = reps[c];
            if (hash[j] == hash[i] && alignment[j] == alignment[i]
                    && start_floor[j] == start_floor[i] && same_conflicts(s, i, j, mark))
                s->twin_class[i] = c;
        }
        if (s->twin_class[i] < 0) reps[s->twin_class[i] = classes++] = i;
    }
    free(hash);
    free(reps);
    free(mark);
    /* members of each class, contiguous */
    memset(s->class_at, 0, (n + 1) * sizeof(int));
    for (int i = 0; i < n; i++) s->class_at[s->twin_class[i] + 1]++;
    for (int c = 0; c < classes; c++) s->class_at[c + 1] += s->class_at[c];
    int *cfill = alloc(classes, sizeof(int), &failed);
    if (failed) { free(cfill); search_free(s); return NULL; }
    for (int i = 0; i < n; i++) {
        int c = s->twin_class[i];
        s->class_memb[s->class_at[c] + cfill[c]++] = i;
    }
    free(cfill);
    for (int i = 0; i < n; i++) {
        int c = s->twin_class[i];
        s->stacked[i] = s->class_at[c + 1] - s->class_at[c] > 1;
    }
    /* state */
    s->order = alloc(n, sizeof(int), &failed);
    s->rank = alloc(n, sizeof(int), &failed);
    s->twin = alloc(n, sizeof(int), &failed);
    s->order_rank = alloc(n, sizeof(int), &failed);
    s->scale = alloc(n, sizeof(double), &failed);
    s->width = alloc(n, sizeof(i64), &failed);
    s->area = alloc(n, sizeof(i64), &failed);
    s->offset = alloc(n, sizeof(i64), &failed);
    s->floor = alloc(n, sizeof(i64), &failed);
    s->tops = alloc(n, sizeof(i64), &failed);
    s->remaining = alloc(K, sizeof(i64), &failed);
    s->unplaced_count = alloc(K, sizeof(int), &failed);
    s->cuts = alloc(K, sizeof(int), &failed);
    s->hist_i = alloc(n, sizeof(int), &failed);
    s->hist_raised_at = alloc(n + 1, sizeof(int), &failed);
    s->hist_key = alloc(n, sizeof(u128), &failed);
    s->raised = alloc(nconf, sizeof(int), &failed);
    s->olds = alloc(nconf, sizeof(i64), &failed);
    s->stacked_top = alloc(n, sizeof(i64), &failed);
    s->stacked_i = alloc(n, sizeof(int), &failed);
    s->scratch_floor = alloc(2 * (size_t)n, sizeof(i64), &failed);
    s->scratch_size = alloc(2 * (size_t)n, sizeof(i64), &failed);
    if (failed) { search_free(s); return NULL; }
    for (int i = 0; i < n; i++) {
        s->width[i] = upper[i] - lower[i];
        s->area[i] = s->width[i] * footprint[i];
    }
    s->counters[C_WINDOWS] = 1;
    s->counters[C_ROUND_END] = INT64_MAX;
    s->next_clock = 1;
    return s;
}

static void search_free(Search *s) {
    if (!s) return;
    void *arrays[] = {s->footprint, s->alignment, s->start_floor, s->lower, s->upper, s->first,
                      s->last, s->conf_at, s->conf, s->memb_at, s->memb, s->mpos_at, s->mpos, s->total,
                      s->twin_class, s->class_at, s->class_memb, s->stacked, s->order, s->rank,
                      s->twin, s->order_rank, s->scale, s->width, s->area, s->offset, s->floor, s->tops, s->remaining, s->unplaced_count,
                      s->cuts, s->hist_i, s->hist_raised_at, s->hist_key, s->raised, s->olds,
                      s->stacked_top, s->stacked_i, s->scratch_floor, s->scratch_size,
                      s->verdicts};
    for (size_t a = 0; a < sizeof arrays / sizeof *arrays; a++) free(arrays[a]);
    for (int m = 0; m < s->memo_count; m++) keyset_free(&s->memos[m]);
    free(s->memos);
    free(s);
}

/* exact._Search.reset */
static void reset(Search *s) {
    int n = s->n, K = s->sections;
    s->state_key = 0;
    for (int i = 0; i < n; i++) {
        s->offset[i] = -1;
        s->floor[i] = s->start_floor[i];
        s->tops[i] = s->floor[i] + s->footprint[i];
        s->state_key += s->zobrist[i] * (u128)(s->floor[i] + 1);
    }
    for (int k = 0; k < K; k++) {
        s->remaining[k] = s->total[k];
        s->unplaced_count[k] = s->memb_at[k + 1] - s->memb_at[k];
        s->cuts[k] = 0;
    }
    for (int i = 0; i < n; i++)
        for (int k = s->first[i]; k < s->last[i] - 1; k++) s->cuts[k]++;
    s->depth = 0;
    s->piece_key = 0;
    s->raised_top = 0;
    s->hist_raised_at[0] = 0;
    s->stacked_count = 0;
}

static int twin_cmp(const void *pa, const void *pb) {
    const Search *s = sort_search;
    int a = *(const int *)pa, b = *(const int *)pb;
    const i64 ka[] = {s->lower[a], s->upper[a], s->footprint[a], s->alignment[a], s->start_floor[a]};
    const i64 kb[] = {s->lower[b], s->upper[b], s->footprint[b], s->alignment[b], s->start_floor[b]};
    for (int k = 0; k < 5; k++)
        if (ka[k] != kb[k]) return ka[k] < kb[k] ? -1 : 1;
    return s->rank[a] - s->rank[b];
}

/* The rank from the order (of the preorder ``letters``, shuffled by ``scale``)
   and, with symmetric_buffers, each buffer's identical buffer just before it
   in rank (exact._Search.use_preorder, _twins). */
static int set_order(Search *s, const int *order, const double *scale, const char *letters) {
    int n = s->n;
    for (int r = 0; r < n; r++) {
        s->order[r] = order[r];
        s->rank[order[r]] = s->order_rank[order[r]] = r;
        s->twin[r] = -1;
        s->scale[r] = scale ? scale[r] : 1.0;
    }
    strncpy(s->letters, letters, sizeof s->letters - 1);
    if (!s->sw[SYMMETRIC]) return 0;
    int *byk = malloc((size_t)n * sizeof *byk);
    if (!byk) return -1;
    memcpy(byk, order, (size_t)n * sizeof *byk);
    sort_search = s;
    qsort(byk, (size_t)n, sizeof *byk, twin_cmp);
    for (int q = 1; q < n; q++) {
        int a = byk[q - 1], b = byk[q];
        if (s->lower[a] == s->lower[b] && s->upper[a] == s->upper[b]
                && s->footprint[a] == s->footprint[b] && s->alignment[a] == s->alignment[b]
                && s->start_floor[a] == s->start_floor[b])
            s->twin[b] = a;
    }
    free(byk);
    return 0;
}

/* The keys of the preorder "TWA" (exact.PREORDERS[0]), for relaxations. */
static i64 *twa_keys;

static int twa_cmp(const void *pa, const void *pb) {
    int a = *(const int *)pa, b = *(const int *)pb;
    for (int k = 0; k < 3; k++)
        if (twa_keys[3 * a + k] != twa_keys[3 * b + k])
            return twa_keys[3 * a + k] > twa_keys[3 * b + k] ? -1 : 1;
    return a - b;
}

static int use_twa(Search *s) {
    int n = s->n;
    i64 *keys = malloc(3 * (size_t)n * sizeof *keys);
    int *order = malloc((size_t)n * sizeof *order);
    if (!keys || !order) { free(keys); free(order); return -1; }
    for (int i = 0; i < n; i++) {
        i64 t = 0;
        for (int k = s->first[i]; k < s->last[i]; k++) t = s->total[k] > t ? s->total[k] : t;
        i64 w = s->upper[i] - s->lower[i];
        keys[3 * i] = t;
        keys[3 * i + 1] = w;
        keys[3 * i + 2] = w * s->footprint[i];
        order[i] = i;
    }
    twa_keys = keys;
    qsort(order, (size_t)n, sizeof *order, twa_cmp);
    int rc = set_order(s, order, NULL, "TWA");
    free(keys);
    free(order);
    return rc;
}

/* ---- place / unplace ---- */

static int place(Search *s, int i, i64 at) {
    i64 size = s->footprint[i], top = at + size;
    u128 saved = s->state_key, key = saved;
    int r = s->raised_top;
    for (int c = s->conf_at[i]; c < s->conf_at[i + 1]; c++) {
        int j = s->conf[c];
        i64 old = s->floor[j];
        if (old < top && s->offset[j] < 0) {
            s->raised[r] = j;
            s->olds[r++] = old;
            i64 fresh = align_up(top, s->alignment[j]);
            s->floor[j] = fresh;
            s->tops[j] = fresh + s->footprint[j];
            key += s->zobrist[j] * (u128)(fresh - old);
        }
    }
    s->state_key = key - s->zobrist[i] * (u128)(s->floor[i] + 1);
    int split = 0;
    for (int k = s->first[i]; k < s->last[i]; k++) {
        s->remaining[k] -= size;
        /* i swaps places with the last unplaced member; unplace (LIFO) finds it there */
        int *at = &s->mpos[s->mpos_at[i] + k - s->first[i]];
        int end = s->memb_at[k] + --s->unplaced_count[k], j = s->memb[end];
        s->memb[*at] = j;
        s->mpos[s->mpos_at[j] + k - s->first[j]] = *at;
        s->memb[end] = i;
        *at = end;
    }
    for (int k = s->first[i]; k < s->last[i] - 1; k++) {
        s->cuts[k]--;
        split = split || !s->cuts[k];
    }
    s->offset[i] = at;
    if (s->stacked[i]) {
        int q = s->stacked_count;
        while (q > 0 && (s->stacked_top[q - 1] > top
                         || (s->stacked_top[q - 1] == top && s->stacked_i[q - 1] > i))) {
            s->stacked_top[q] = s->stacked_top[q - 1];
            s->stacked_i[q] = s->stacked_i[q - 1];
            q--;
        }
        s->stacked_top[q] = top;
        s->stacked_i[q] = i;
        s->stacked_count++;
    }
    s->hist_i[s->depth] = i;
    s->hist_key[s->depth] = saved;
    s->raised_top = r;
    s->hist_raised_at[++s->depth] = r;
    return split;
}

static void unplace(Search *s) {
    int d = --s->depth, i = s->hist_i[d];
    s->state_key = s->hist_key[d];
    i64 size = s->footprint[i];
    for (int r = s->hist_raised_at[d]; r < s->hist_raised_at[d + 1]; r++) {
        int j = s->raised[r];
        s->floor[j] = s->olds[r];
        s->tops[j] = s->olds[r] + s->footprint[j];
    }
    s->raised_top = s->hist_raised_at[d];
    for (int k = s->first[i]; k < s->last[i]; k++) {
        s->remaining[k] += size;
        s->unplaced_count[k]++;
    }
    for (int k = s->first[i]; k < s->last[i] - 1; k++) s->cuts[k]++;
    if (s->stacked[i]) {
        i64 top = s->offset[i] + size;
        int q = 0;
        while (s->stacked_top[q] != top || s->stacked_i[q] != i) q++;
        s->stacked_count--;
        memmove(s->stacked_top + q, s->stacked_top + q + 1,
                (size_t)(s->stacked_count - q) * sizeof(i64));
        memmove(s->stacked_i + q, s->stacked_i + q + 1,
                (size_t)(s->stacked_count - q) * sizeof(int));
    }
    s->offset[i] = -1;
}

static void rollback(Search *s, int depth) {
    while (s->depth > depth) unplace(s);
}

/* ---- the search ---- */

static int tick(Search *s, i64 units) {
    i64 *c = s->counters;
    c[C_NODES]++;
    c[C_WINDOWED] += c[C_WINDOWS];
    c[C_UNITS] += units;
    if (c[C_UNITS] > s->max_units
            || (s->max_nodes >= 0 && c[C_NODES] + c[C_RELAXED] > s->max_nodes))
        return s->stop = STOP_BUDGET;
    if (c[C_NODES] > c[C_ROUND_END]) return s->stop = STOP_ROUND;
    if (s->deadline >= 0 && c[C_NODES] >= s->next_clock) {
        s->next_clock = c[C_NODES] + 64;
        if (now() > s->deadline) return s->stop = STOP_DEADLINE;
    }
    return 0;
}

static u128 state(const Search *s, int lo, int hi, i64 last_at, int last_rank) {
    const u128 *w = s->where;
    u128 key = s->state_key + w[0] * (u128)lo + w[1] * (u128)hi + w[2] * (u128)last_at
               + w[3] * (u128)(i64)(last_rank + 1) + s->piece_key;
    if (s->sw[STACKED_TWINS]) {
        int q = 0;
        while (q < s->stacked_count && s->stacked_top[q] < last_at) q++;
        for (; q < s->stacked_count; q++)
            key += s->top_key[s->stacked_i[q]] * (u128)(s->stacked_top[q] + 1);
    }
    return key;
}

/* Sort key[0..n) highest first, val alongside (tk, tv: n of scratch each). */
static void sort_desc(i64 *key, i64 *val, i64 *tk, i64 *tv, int n) {
    if (n <= 16) {
        for (int q = 1; q < n; q++) {
            i64 k = key[q], v = val[q];
            int p = q;
            for (; p > 0 && key[p - 1] < k; p--) {
                key[p] = key[p - 1];
                val[p] = val[p - 1];
            }
            key[p] = k;
            val[p] = v;
        }
        return;
    }
    i64 *k0 = key, *v0 = val;
    for (int width = 1; width < n; width *= 2) { /* bottom-up merge sort */
        for (int lo = 0; lo < n; lo += 2 * width) {
            int mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
            int a = lo, b = mid, o = lo;
            while (a < mid || b < hi) {
                int left = b >= hi || (a < mid && key[a] >= key[b]);
                tk[o] = left ? key[a] : key[b];
                tv[o++] = left ? val[a++] : val[b++];
            }
        }
        i64 *t = key; key = tk; tk = t;
        t = val; val = tv; tv = t;
    }
    if (key != k0) {
        memcpy(k0, key, (size_t)n * sizeof *key);
        memcpy(v0, val, (size_t)n * sizeof *val);
    }
}

/* exact._Search._floors_fit */
static int floors_fit(Search *s, int lo, int hi, i64 capacity) {
    int d = s->depth - 1, ra = s->hist_raised_at[d], rb = s->hist_raised_at[d + 1];
    if (ra == rb) return 1;
    i64 highest = INT64_MIN;
    int start = s->n ? s->sections : 0, stop = 0;
    for (int r = ra; r < rb; r++) {
        int j = s->raised[r];
        if (s->floor[j] > highest) highest = s->floor[j];
        if (s->first[j] < start) start = s->first[j];
        if (s->last[j] > stop) stop = s->last[j];
    }
    if (start < lo) start = lo;
    if (stop > hi) stop = hi;
    for (int k = start; k < stop; k++) {
        i64 left = s->remaining[k];
        if (highest + left <= capacity || !s->unplaced_count[k]) continue;
        /* only floors above capacity - left can fail: floor + the bytes at or
           above it (all of them above that too) */
        i64 *floors = s->scratch_floor, *sizes = s->scratch_size, lowest = INT64_MAX;
        i64 threshold = capacity - left;
        int count = 0;
        for (int m = s->memb_at[k]; m < s->memb_at[k] + s->unplaced_count[k]; m++) {
            int j = s->memb[m];
            lowest = s->floor[j] < lowest ? s->floor[j] : lowest;
            if (s->floor[j] > threshold) {
                floors[count] = s->floor[j];
                sizes[count++] = s->footprint[j];
            }
        }
        if (lowest + left > capacity) return 0;
        if (!s->sw[FLOOR_PROFILE]) continue;
        /* the same again with the bytes kept (their floors' all above them):
           those at or below capacity - kept fit, until none is dropped */
        for (int kept = -1; kept != count;) {
            i64 bytes = 0;
            for (int q = 0; q < count; q++) bytes += sizes[q];
            kept = count;
            count = 0;
            for (int q = 0; q < kept; q++)
                if (floors[q] > capacity - bytes) {
                    floors[count] = floors[q];
                    sizes[count++] = sizes[q];
                }
        }
        /* by floor, highest first; ties in floor: the largest floor + bytes
           above is reached after the last of them, in any order */
        sort_desc(floors, sizes, s->scratch_floor + s->n, s->scratch_size + s->n, count);
        i64 above = 0;
        int fits = 1;
        for (int q = 0; q < count && fits; q++) {
            above += sizes[q];
            fits = floors[q] + above <= capacity;
        }
        if (!fits) return 0;
    }
    return 1;
}

static int search(Search *s, const int *part, int plen, int lo, int hi, i64 capacity,
                  i64 last_at, int last_rank);
static int solve_part(Search *s, const int *part, int plen, i64 capacity);

/* exact._Search._window_fits: 1 fits (or no verdict), 0 refuted, -1 stopped */
static int window_fits(Search *s, const int *inside, const i64 *floors, int m, int a, int b,
                       i64 capacity) {
    int rc = -1;
    i64 *buf = malloc(4 * (size_t)m * sizeof *buf);
    int *order = malloc((size_t)m * sizeof *order);
    Search *relaxed = NULL;
    if (buf && order) {
        for (int q = 0; q < m; q++) {
            int j = inside[q];
            buf[q] = s->first[j] > a ? s->first[j] : a;
            buf[m + q] = s->last[j] < b ? s->last[j] : b;
            buf[2 * m + q] = s->footprint[j];
            buf[3 * m + q] = s->alignment[j];
        }
        char sw[NSWITCH];
        memcpy(sw, s->sw, NSWITCH);
        sw[TIGHT_WINDOWS] = 0;
        relaxed = search_new(m, buf, buf + m, buf + 2 * m, buf + 3 * m, floors, s->zobrist, sw,
                             INT64_MAX, (i64)WINDOW_NODES * m, s->deadline);
    }
    if (relaxed && use_twa(relaxed) == 0) {
        reset(relaxed);
        KeySet memo = {0};
        relaxed->memo = &memo;
        int fits = solve_part(relaxed, relaxed->order, m, capacity);
        keyset_free(&memo);
        if (fits < 0 && relaxed->stop == STOP_DEADLINE) s->stop = STOP_DEADLINE;
        else if (fits < 0 && relaxed->stop == STOP_BUDGET) rc = 1; /* no verdict */
        else rc = fits; /* out of memory stays -1 */
        s->counters[C_RELAXED] += relaxed->counters[C_NODES] + relaxed->counters[C_RELAXED];
        s->counters[C_UNITS] += relaxed->counters[C_UNITS] + WINDOW_SETUP;
    }
    search_free(relaxed);
    free(buf);
    free(order);
    return rc;
}

static Verdict *verdict_slot(Search *s, int a, int b, u128 key) {
    if (2 * (s->verdict_used + 1) > s->verdict_cap) {
        size_t cap = s->verdict_cap ? 2 * s->verdict_cap : 256;
        Verdict *slots = calloc(cap, sizeof *slots);
        if (!slots) return NULL;
        for (size_t q = 0; q < s->verdict_cap; q++) {
            Verdict *v = &s->verdicts[q];
            if (!v->b) continue;
            size_t p = key_hash(v->key + (u128)v->a * 31 + (u128)v->b, cap);
            while (slots[p].b) p = (p + 1) & (cap - 1);
            slots[p] = *v;
        }
        free(s->verdicts);
        s->verdicts = slots;
        s->verdict_cap = cap;
    }
    size_t p = key_hash(key + (u128)a * 31 + (u128)b, s->verdict_cap);
    for (;; p = (p + 1) & (s->verdict_cap - 1)) {
        Verdict *v = &s->verdicts[p];
        if (!v->b) return v; /* free: b > a >= 0 in a used slot */
        if (v->a == a && v->b == b && v->key == key) return v;
    }
}

/* exact._Search._windows_fit */
static int windows_fit(Search *s, int lo, int hi, i64 capacity, i64 last_at) {
    i64 limit = capacity / TIGHT_SLACK;
    int rc = 1;
    int *inside = malloc((size_t)s->n * sizeof *inside);
    i64 *floors = malloc((size_t)s->n * sizeof *floors);
    char *seen = calloc((size_t)s->n, 1);
    if (!inside || !floors || !seen) rc = -1;
    for (int a = lo; a < hi && rc == 1;) {
        int b = a;
        for (; b < hi && s->unplaced_count[b]; b++) {
            i64 lowest = INT64_MAX;
            for (int q = s->memb_at[b]; q < s->memb_at[b] + s->unplaced_count[b]; q++) {
                int j = s->memb[q];
                if (s->floor[j] < lowest) lowest = s->floor[j];
            }
            if (capacity - s->remaining[b] - (last_at > lowest ? last_at : lowest) > limit)
                break;
        }
        if (b == a) { a++; continue; }
        int m = 0;
        for (int k = a; k < b; k++)
            for (int q = s->memb_at[k]; q < s->memb_at[k] + s->unplaced_count[k]; q++) {
                int j = s->memb[q];
                if (!seen[j]) { seen[j] = 1; inside[m++] = j; }
            }
        m = 0;
        for (int j = 0; j < s->n; j++) /* ascending, as sorted() */
            if (seen[j]) { seen[j] = 0; inside[m++] = j; }
        if (m >= 2) {
            u128 key = 0;
            for (int q = 0; q < m; q++) {
                int j = inside[q];
                i64 f = align_up(last_at, s->alignment[j]);
                floors[q] = s->floor[j] > f ? s->floor[j] : f;
                key += s->zobrist[j] * (u128)(floors[q] + 1);
            }
            Verdict *v = verdict_slot(s, a, b, key);
            if (!v) { rc = -1; break; }
            if (!v->b) {
                int fits = window_fits(s, inside, floors, m, a, b, capacity);
                if (fits < 0) { rc = -1; break; }
                v = verdict_slot(s, a, b, key); /* the table may have moved */
                if (!v) { rc = -1; break; }
                *v = (Verdict){key, a, b, fits};
                s->verdict_used++;
            }
            if (!v->verdict) rc = 0;
        }
        a = b;
    }
    free(inside);
    free(floors);
    free(seen);
    return rc;
}

typedef struct { i64 at; int rank, i; } Child;

static int child_cmp(const void *pa, const void *pb) {
    const Child *a = pa, *b = pb;
    if (a->at != b->at) return a->at < b->at ? -1 : 1;
    return a->rank - b->rank;
}

static void span(const Search *s, const int *piece, int count, int *lo, int *hi) {
    *lo = s->sections;
    *hi = 0;
    for (int q = 0; q < count; q++) {
        int i = piece[q];
        if (s->first[i] < *lo) *lo = s->first[i];
        if (s->last[i] > *hi) *hi = s->last[i];
    }
}

/* exact._Search._rank_piece: its buffers' sort keys (the preorder's letters,
   T from the bytes still unplaced, each times the buffer's scale; then the
   preorder's rank) */
static const Search *piece_search;
static const double *piece_keys_of; /* 3 per buffer */

static int piece_cmp(const void *pa, const void *pb) {
    int a = *(const int *)pa, b = *(const int *)pb;
    const double *ka = piece_keys_of + 3 * a, *kb = piece_keys_of + 3 * b;
    for (int k = 0; k < 3; k++)
        if (ka[k] != kb[k]) return ka[k] > kb[k] ? -1 : 1;
    return piece_search->order_rank[a] - piece_search->order_rank[b];
}

static int rank_piece(Search *s, int *piece, int m, double *keys) {
    int nletters = (int)strlen(s->letters);
    for (int q = 0; q < m; q++) {
        int i = piece[q];
        i64 busiest = INT64_MIN;
        for (int k = s->first[i]; k < s->last[i]; k++)
            busiest = s->remaining[k] > busiest ? s->remaining[k] : busiest;
        for (int c = 0; c < 3; c++) {
            char l = c < nletters ? s->letters[c] : 0;
            i64 v = l == 'T' ? busiest : l == 'W' ? s->width[i] : l == 'A' ? s->area[i] : 0;
            keys[3 * i + c] = (double)v * s->scale[i];
        }
    }
    piece_search = s;
    piece_keys_of = keys;
    qsort(piece, (size_t)m, sizeof *piece, piece_cmp);
    u128 key = 0;
    for (int q = 0; q < m; q++) {
        s->rank[piece[q]] = q;
        key += s->piece_keys[piece[q]];
    }
    s->piece_key = key;
    return 0;
}

/* exact._Search._solve_pieces */
static int solve_pieces(Search *s, const int *part, int plen, int lo, int hi, i64 capacity) {
    int *starts = malloc((size_t)(hi - lo + 1) * sizeof *starts);
    int *pieces = malloc((size_t)plen * sizeof *pieces);
    int *piece_of = malloc((size_t)plen * sizeof *piece_of);
    if (!starts || !pieces || !piece_of) {
        free(starts); free(pieces); free(piece_of);
        return -1;
    }
    int nstarts = 0;
    for (int k = lo; k < hi - 1; k++)
        if (!s->cuts[k]) starts[nstarts++] = k + 1;
    /* the pieces in order, each keeping the part's order: bisect_right(starts, first) */
    int count = 0;
    for (int q = 0; q < plen; q++) {
        int i = part[q];
        if (s->offset[i] >= 0) continue;
        int x = 0;
        while (x < nstarts && starts[x] <= s->first[i]) x++;
        piece_of[count] = x;
        pieces[count++] = i;
    }
    int depth = s->depth, rc = 1;
    u128 outer = s->piece_key;
    int *piece = malloc((size_t)(count ? count : 1) * sizeof *piece);
    int *ranks = malloc((size_t)plen * sizeof *ranks);
    double *keys = malloc(3 * (size_t)s->n * sizeof *keys);
    if (!piece || !ranks || !keys) rc = -1;
    for (int q = 0; q < plen && ranks; q++) ranks[q] = s->rank[part[q]];
    for (int x = 0; x <= nstarts && rc == 1; x++) {
        int m = 0;
        for (int q = 0; q < count; q++)
            if (piece_of[q] == x) piece[m++] = pieces[q];
        if (!m) continue;
        rank_piece(s, piece, m, keys);
        int plo, phi;
        span(s, piece, m, &plo, &phi);
        rc = search(s, piece, m, plo, phi, capacity, 0, -1);
        if (rc == 0) rollback(s, depth);
    }
    /* the enclosing search goes on with its own ranks */
    s->piece_key = outer;
    for (int q = 0; q < plen && ranks; q++) s->rank[part[q]] = ranks[q];
    free(piece);
    free(ranks);
    free(keys);
    free(starts);
    free(pieces);
    free(piece_of);
    return rc;
}

/* exact._Search.solve */
static int solve_part(Search *s, const int *part, int plen, i64 capacity) {
    int lo, hi;
    span(s, part, plen, &lo, &hi);
    if (s->sw[DECOMPOSITION])
        for (int k = lo; k < hi - 1; k++)
            if (!s->cuts[k]) return solve_pieces(s, part, plen, lo, hi, capacity);
    return search(s, part, plen, lo, hi, capacity, 0, -1);
}

/* exact._Search._search: 1 placed, 0 failed, -1 stopped (s->stop says why) */
static int search(Search *s, const int *part, int plen, int lo, int hi, i64 capacity,
                  i64 last_at, int last_rank) {
    const char *sw = s->sw;
    int *todo = malloc((size_t)plen * sizeof *todo);
    if (!todo) return -1;
    int ntodo = 0;
    for (int q = 0; q < plen; q++)
        if (s->offset[part[q]] < 0) todo[ntodo++] = part[q];
    if (!ntodo) { free(todo); return 1; }
    if (tick(s, NODE_OVERHEAD + plen + hi - lo)) { free(todo); return -1; }
    u128 key = 0;
    if (sw[FAILURE_MEMO]) {
        key = state(s, lo, hi, last_at, last_rank);
        if (keyset_has(s->memo, key)) { free(todo); return 0; }
    }
    if (sw[TIGHT_WINDOWS] && s->counters[C_WINDOWS]
            && s->counters[C_RELAXED] <= WINDOW_SHARE * s->counters[C_WINDOWED]) {
        int fits = windows_fit(s, lo, hi, capacity, last_at);
        if (fits <= 0) {
            free(todo);
            if (fits == 0 && sw[FAILURE_MEMO] && keyset_add(s->memo, key)) return -1;
            return fits;
        }
    }
    int canonical = sw[CANONICAL], stacked = canonical && sw[STACKED_TWINS];
    int dominance = canonical && sw[DOMINANCE], bound = sw[SECTION_BOUND];
    i64 gap_bound = INT64_MAX;
    if (dominance)
        for (int q = 0; q < ntodo; q++)
            if (s->tops[todo[q]] < gap_bound) gap_bound = s->tops[todo[q]];
    i64 ceiling = capacity;
    if (bound && canonical) {
        i64 most = INT64_MIN;
        for (int k = lo; k < hi; k++) most = s->remaining[k] > most ? s->remaining[k] : most;
        ceiling = capacity - most;
    }
    i64 low = canonical ? last_at : 0;
    i64 high = ceiling + 1 < gap_bound ? ceiling + 1 : gap_bound;
    Child *children = malloc((size_t)ntodo * sizeof *children);
    if (!children) { free(todo); return -1; }
    int nchildren = 0;
    for (int q = 0; q < ntodo; q++) {
        int i = todo[q];
        i64 at = s->floor[i];
        if (at < low || at >= high || at + s->footprint[i] > capacity) continue;
        if (canonical && at == last_at && s->rank[i] < last_rank) continue;
        int t = s->twin[i];
        if (t >= 0 && s->offset[t] < 0) continue;
        if (bound && !canonical) {
            i64 most = INT64_MIN;
            for (int k = s->first[i]; k < s->last[i]; k++)
                most = s->remaining[k] > most ? s->remaining[k] : most;
            if (at + most > capacity) continue;
        }
        if (stacked) {
            int c = s->twin_class[i], below = -1;
            for (int m = s->class_at[c]; m < s->class_at[c + 1]; m++) {
                int j = s->class_memb[m];
                if (s->offset[j] >= 0 && s->offset[j] + s->footprint[j] == at) below = j;
            }
            if (below >= 0 && s->order_rank[below] > s->order_rank[i]) continue;
        }
        children[nchildren++] = (Child){at, s->rank[i], i};
    }
    free(todo);
    qsort(children, (size_t)nchildren, sizeof *children, child_cmp);
    int depth = s->depth, rc = 0;
    for (int q = 0; q < nchildren; q++) {
        int i = children[q].i;
        int split = place(s, i, children[q].at);
        int ok = sw[UNPLACED_FLOOR] ? floors_fit(s, lo, hi, capacity) : 1;
        if (ok > 0) {
            if (split && sw[DECOMPOSITION]) ok = solve_pieces(s, part, plen, lo, hi, capacity);
            else ok = search(s, part, plen, lo, hi, capacity, children[q].at, children[q].rank);
        }
        if (ok) { rc = ok; break; }
        rollback(s, depth);
        if (sw[HATLESS]) {
            int hat = 0;
            for (int c = s->conf_at[i]; c < s->conf_at[i + 1] && !hat; c++)
                hat = s->offset[s->conf[c]] < 0;
            if (!hat) break;
        }
    }
    free(children);
    if (rc == 0 && sw[FAILURE_MEMO] && keyset_add(s->memo, key)) return -1;
    return rc;
}

/* ---- the interface (exact._CompiledSearch) ---- */

Search *exact_new(int n, const i64 *lower, const i64 *upper, const i64 *footprint,
                  const i64 *alignment, const u128 *rand, const char *switches,
                  i64 max_units, i64 max_nodes, double seconds_left) {
    i64 *zeros = calloc(n ? (size_t)n : 1, sizeof *zeros);
    if (!zeros) return NULL;
    Search *s = search_new(n, lower, upper, footprint, alignment, zeros, rand, switches,
                           max_units, max_nodes, seconds_left < 0 ? -1.0 : now() + seconds_left);
    free(zeros);
    return s;
}

void exact_free(Search *s) { search_free(s); }

i64 *exact_counters(Search *s) { return s->counters; }

int exact_set_order(Search *s, const int *order, const double *scale, const char *letters) {
    return set_order(s, order, scale, letters);
}

void exact_reset(Search *s) { reset(s); }

/* A new probe: the memos and window verdicts of the last one say nothing. */
void exact_forget(Search *s) {
    for (int m = 0; m < s->memo_count; m++) keyset_free(&s->memos[m]);
    s->memo_count = 0;
    free(s->verdicts);
    s->verdicts = NULL;
    s->verdict_cap = s->verdict_used = 0;
}

/* The memo numbered ``id`` (0, 1, ... in the order Python first asks for them). */
int exact_use_memo(Search *s, int id) {
    if (id >= s->memo_count) {
        KeySet *memos = realloc(s->memos, (size_t)(id + 1) * sizeof *memos);
        if (!memos) return -1;
        s->memos = memos;
        memset(memos + s->memo_count, 0, (size_t)(id + 1 - s->memo_count) * sizeof *memos);
        s->memo_count = id + 1;
    }
    s->memo = &s->memos[id];
    return 0;
}

/* Every buffer under ``capacity``, in the order set: 1 placed (offsets in
   ``offsets``), 0 none fits, else -STOP_* (-4 out of memory). */
int exact_solve(Search *s, i64 capacity, i64 *offsets) {
    s->stop = STOP_NONE;
    int rc = solve_part(s, s->order, s->n, capacity);
    if (rc == 1) memcpy(offsets, s->offset, (size_t)s->n * sizeof *offsets);
    if (rc >= 0) return rc;
    return s->stop == STOP_NONE ? -4 : -s->stop;
}
