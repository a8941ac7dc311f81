/* A main for the fuzz targets without libFuzzer (any compiler): runs
 * LLVMFuzzerTestOneInput once on each file named on the command line, so
 * the plain build replays the seed corpus (tests/fuzz/CMakeLists.txt) and
 * a crash file can be rerun under a debugger. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return fprintf(stderr, "cannot open %s\n", path), 1;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += got;
        if (n == cap) {
            unsigned char *p = realloc(buf, cap *= 2);
            if (!p) free(buf);
            buf = p;
        }
    }
    fclose(f);
    if (!buf) return fprintf(stderr, "out of memory reading %s\n", path), 1;
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    LLVMFuzzerInitialize(&argc, &argv);
    int rc = 0;
    for (int i = 1; i < argc; i++) rc |= replay(argv[i]);
    printf("replayed %d inputs\n", argc - 1);
    return rc;
}
