/* greedy_bot.c: a Kingdomino bot in C that speaks KDTP/1 (kdtourney's docs/protocol.md).
 *
 * Strategy: claim the free domino with the most crowns (the higher number on a tie); place the
 * domino where the kingdom scores most right after placing it (the first such placement on a tie).
 *
 * Build: cc -O2 -o greedy_bot greedy_bot.c     (c-greedy.toml runs ./greedy_bot)
 *
 * One JSON object per line in, one per line out. A small JSON reader is included, so the file
 * needs nothing but the C standard library.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- a small JSON reader ---------------------------------------------------------------------- */

typedef enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ } JType;

typedef struct J {
    JType type;
    double num;          /* J_NUM, J_BOOL (0 or 1) */
    char *str;           /* J_STR */
    char *key;           /* set when the value is a member of an object */
    struct J *first;     /* J_ARR, J_OBJ: the first element */
    struct J *next;      /* the next element of the enclosing array or object */
} J;

static const char *p;    /* the reading position */

static J *node(JType type) {
    J *j = calloc(1, sizeof *j);
    if (!j) { perror("calloc"); exit(1); }
    j->type = type;
    return j;
}

static void skip(void) { while (isspace((unsigned char)*p)) p++; }

static char *string(void) {           /* at the opening quote; escapes kept simple */
    const char *end = p + 1;
    while (*end && *end != '"') end += end[0] == '\\' && end[1] ? 2 : 1;
    char *out = malloc(end - p), *o = out;
    if (!out) { perror("malloc"); exit(1); }
    for (p++; *p && *p != '"'; p++) {
        if (*p == '\\' && p[1]) {
            p++;
            switch (*p) {
            case 'n': *o++ = '\n'; break;
            case 't': *o++ = '\t'; break;
            case 'u': *o++ = '?'; p += 4; break;   /* no non-ASCII in KDTP's own fields */
            default: *o++ = *p;                     /* \" \\ \/ and the rest as themselves */
            }
        } else {
            *o++ = *p;
        }
    }
    if (*p == '"') p++;
    *o = '\0';
    return out;
}

static J *value(void) {
    skip();
    J *j;
    if (*p == '{' || *p == '[') {
        char close = *p == '{' ? '}' : ']';
        j = node(*p == '{' ? J_OBJ : J_ARR);
        J **tail = &j->first;
        for (p++, skip(); *p && *p != close; skip()) {
            char *key = NULL;
            if (j->type == J_OBJ) {
                key = string();
                skip();
                p++;                                 /* the ':' */
            }
            *tail = value();
            (*tail)->key = key;
            tail = &(*tail)->next;
            skip();
            if (*p == ',') p++;
        }
        if (*p) p++;
    } else if (*p == '"') {
        j = node(J_STR);
        j->str = string();
    } else if (!strncmp(p, "true", 4) || !strncmp(p, "false", 5)) {
        j = node(J_BOOL);
        j->num = *p == 't';
        p += *p == 't' ? 4 : 5;
    } else if (!strncmp(p, "null", 4)) {
        j = node(J_NULL);
        p += 4;
    } else {
        char *end;
        j = node(J_NUM);
        j->num = strtod(p, &end);
        p = end > p ? end : p + 1;
    }
    return j;
}

static void drop(J *j) {
    while (j) {
        J *next = j->next;
        drop(j->first);
        free(j->str);
        free(j->key);
        free(j);
        j = next;
    }
}

static J *get(J *obj, const char *key) {
    for (J *m = obj ? obj->first : NULL; m; m = m->next)
        if (m->key && !strcmp(m->key, key)) return m;
    return NULL;
}

static J *at(J *arr, int i) {
    J *e = arr ? arr->first : NULL;
    while (e && i-- > 0) e = e->next;
    return e;
}

static int num(J *j) { return j ? (int)j->num : 0; }

/* --- the game --------------------------------------------------------------------------------- */

#define G 13                /* a grid large enough for any kingdom, the castle at (C, C) */
#define C 6

static char terrain[49][2]; /* per domino number: the terrain letters of halves a and b */
static int crowns[49][2];
static int seat;

typedef struct { char t[G][G]; int k[G][G]; } Grid;   /* t: terrain letter or 0; k: crowns */

static int fill(Grid *g, char seen[G][G], int r, int c, char t, int *crowns_found) {
    if (r < 0 || r >= G || c < 0 || c >= G || seen[r][c] || g->t[r][c] != t) return 0;
    seen[r][c] = 1;
    *crowns_found += g->k[r][c];
    return 1 + fill(g, seen, r + 1, c, t, crowns_found) + fill(g, seen, r - 1, c, t, crowns_found)
             + fill(g, seen, r, c + 1, t, crowns_found) + fill(g, seen, r, c - 1, t, crowns_found);
}

static int score(Grid *g) {   /* sum over territories of squares x crowns (the castle scores 0) */
    char seen[G][G] = {{0}};
    int total = 0;
    for (int r = 0; r < G; r++)
        for (int c = 0; c < G; c++)
            if (g->t[r][c] && g->t[r][c] != 'C' && !seen[r][c]) {
                int found = 0;
                int squares = fill(g, seen, r, c, g->t[r][c], &found);
                total += squares * found;
            }
    return total;
}

static void answer_place(J *action) {
    J *place = get(action, "place");
    if (!place) {
        printf("{\"type\":\"action\",\"action\":{\"discard\":true}}\n");
        return;
    }
    printf("{\"type\":\"action\",\"action\":{\"place\":[[%d,%d],[%d,%d]]}}\n",
           num(at(at(place, 0), 0)), num(at(at(place, 0), 1)),
           num(at(at(place, 1), 0)), num(at(at(place, 1), 1)));
}

static void act(J *msg) {
    J *state = get(msg, "state"), *legal = get(msg, "legal");
    if (!strcmp(get(msg, "phase")->str, "claim")) {
        int best = 0, best_crowns = -1;
        for (J *a = legal->first; a; a = a->next) {
            int n = num(get(a, "claim")), k = crowns[n][0] + crowns[n][1];
            if (k > best_crowns || (k == best_crowns && n > best)) { best = n; best_crowns = k; }
        }
        printf("{\"type\":\"action\",\"action\":{\"claim\":%d}}\n", best);
        return;
    }
    Grid mine;
    memset(&mine, 0, sizeof mine);
    for (J *sq = at(get(state, "kingdoms"), seat)->first; sq; sq = sq->next) {
        int r = num(at(sq, 0)) + C, c = num(at(sq, 1)) + C;
        mine.t[r][c] = at(sq, 2)->str[0];
        mine.k[r][c] = num(at(sq, 3));
    }
    int d = num(get(state, "to_place")), best_score = -1;
    J *best = legal->first;                     /* a lone {"discard": true} stays the answer */
    for (J *a = legal->first; a; a = a->next) {
        J *place = get(a, "place");
        if (!place) continue;
        Grid g = mine;
        for (int half = 0; half < 2; half++) {
            int r = num(at(at(place, half), 0)) + C, c = num(at(at(place, half), 1)) + C;
            g.t[r][c] = terrain[d][half];
            g.k[r][c] = crowns[d][half];
        }
        int s = score(&g);
        if (s > best_score) { best_score = s; best = a; }
    }
    answer_place(best);
}

int main(void) {
    static char line[1 << 20];
    while (fgets(line, sizeof line, stdin)) {
        p = line;
        J *msg = value();
        const char *type = get(msg, "type") ? get(msg, "type")->str : "";
        if (!strcmp(type, "hello")) {
            printf("{\"type\":\"hello\",\"name\":\"c-greedy\",\"version\":\"1.0\"}\n");
        } else if (!strcmp(type, "game")) {
            seat = num(get(msg, "seat"));
            for (J *t = get(msg, "dominoes")->first; t; t = t->next) {
                int n = num(at(t, 0));
                terrain[n][0] = at(t, 1)->str[0];
                crowns[n][0] = num(at(t, 2));
                terrain[n][1] = at(t, 3)->str[0];
                crowns[n][1] = num(at(t, 4));
            }
        } else if (!strcmp(type, "act")) {
            act(msg);
        } else if (!strcmp(type, "quit")) {
            drop(msg);
            break;
        }                                        /* result, and anything newer: nothing to say */
        fflush(stdout);
        drop(msg);
    }
    return 0;
}
