/*
 * Times parts of the C yardstick (kdref.c, compiled in from its folder: cc -I DIR) for
 * bench_engine.py --compare-c: the same parts bench_engine times on the Numba engine.
 *
 *   yardstick_parts GAMES REPS SEED
 *
 * Plays GAMES random 4-player games with the yardstick's own code and keeps every position of a
 * placement decision (kingdom and domino) and every final kingdom, then times, REPS times over
 * all of them, and prints ns per unit:
 *   place_decision_ns  a random placement decision without playing it: count the legal
 *                      placements and select a uniformly random one (what do_place does)
 *   enumeration_ns     list every legal placement of the domino into an array
 *   scoring_ns         score a final kingdom with both bonuses (king_score)
 * Times are CPU time of this thread, as bench_engine takes them.
 */
#define main kdref_main
#include "kdref.c"
#undef main

typedef struct { King k; int tile; } Position;

static Position *positions, *finals;
static int n_positions, n_finals, cap;

static void keep(const King *k, int tile, void *ctx) {
    (void)ctx;
    if (tile >= 0 && n_positions < cap) { positions[n_positions].k = *k; positions[n_positions++].tile = tile; }
    if (tile < 0 && n_finals < cap) { finals[n_finals].k = *k; finals[n_finals++].tile = tile; }
}

static volatile uint64_t sink;

static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: %s GAMES REPS SEED\n", argv[0]); return 2; }
    const int games = atoi(argv[1]), reps = atoi(argv[2]);
    init_tables();
    Rng rng;
    rng_seed(&rng, strtoull(argv[3], NULL, 0));
    cap = games * 48;
    positions = malloc(sizeof *positions * (size_t)cap);
    finals = malloc(sizeof *finals * (size_t)cap);
    Stats st;
    memset(&st, 0, sizeof st);
    for (int g = 0; g < games; g++) play_game(POLICY_RANDOM, &rng, &st, keep, NULL);

    /* each part makes one untimed pass first (pass 0), as bench_engine does */
    uint64_t acc = 0;
    double t0 = 0;
    for (int pass = 0, n = 1; pass < 2; pass++, n = reps) {
      t0 = cpu_s();
      for (int r = 0; r < n; r++)
        for (int i = 0; i < n_positions; i++) {
            const King *k = &positions[i].k;
            const int tile = positions[i].tile;
            if (!k->started) { acc += rng_below(&rng, SYM[tile] ? 12 : 24); continue; }
            Moves mv;
            if (gen_moves(k, tile, &mv) == 0) continue;
            int kind, q;
            choose_random(&mv, &rng, &kind, &q);
            acc += (uint64_t)(kind * 64 + q);
        }
    }
    const double place_ns = (cpu_s() - t0) * 1e9 / ((double)reps * n_positions);

    static int out[2][400];
    for (int pass = 0, n_reps = 1; pass < 2; pass++, n_reps = reps) {
      t0 = cpu_s();
      for (int r = 0; r < n_reps; r++)
        for (int i = 0; i < n_positions; i++) {
            const King *k = &positions[i].k;
            const int tile = positions[i].tile;
            int n = 0;
            if (!k->started) {
                for (int j = 0; j < (SYM[tile] ? 12 : 24); j++) { out[0][n] = -1; out[1][n++] = j; }
            } else {
                Moves mv;
                gen_moves(k, tile, &mv);
                for (int kd = 0; kd < 4; kd++)
                    for (uint64_t m = mv.m[kd]; m; m &= m - 1) { out[0][n] = kd; out[1][n++] = __builtin_ctzll(m); }
            }
            acc += (uint64_t)n + (uint64_t)out[1][n ? n - 1 : 0];
        }
    }
    const double enum_ns = (cpu_s() - t0) * 1e9 / ((double)reps * n_positions);

    for (int pass = 0, n = 1; pass < 2; pass++, n = reps) {
        t0 = cpu_s();
        for (int r = 0; r < n; r++)
            for (int i = 0; i < n_finals; i++) acc += (uint64_t)king_score(&finals[i].k);
    }
    const double score_ns = (cpu_s() - t0) * 1e9 / ((double)reps * n_finals);

    sink = acc;
    printf("positions=%d finals=%d\n", n_positions, n_finals);
    printf("place_decision_ns=%.2f\nenumeration_ns=%.2f\nscoring_ns=%.2f\n", place_ns, enum_ns, score_ns);
    return 0;
}
