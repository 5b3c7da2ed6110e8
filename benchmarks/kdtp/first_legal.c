/* first_legal.c: a KDTP bot that answers the first legal action, copied as it came; the cost of
 * the protocol without a bot (benchmarks/bench_kdtp.py). It relies on kdtourney writing compact
 * JSON ("type":"act", "legal":[...]): a real bot should parse its input (see examples/c). */
#include <stdio.h>
#include <string.h>

int main(void) {
    static char line[1 << 20];
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"type\":\"act\"")) {
            char *first = strstr(line, "\"legal\":[") + 9, *end = first;
            int depth = 0;
            do {
                depth += (*end == '{' || *end == '[') - (*end == '}' || *end == ']');
                end++;
            } while (depth > 0);
            printf("{\"type\":\"action\",\"action\":%.*s}\n", (int)(end - first), first);
        } else if (strstr(line, "\"type\":\"hello\"")) {
            puts("{\"type\":\"hello\",\"name\":\"first-legal-c\"}");
        } else if (strstr(line, "\"type\":\"quit\"")) {
            break;
        }
        fflush(stdout);
    }
    return 0;
}
