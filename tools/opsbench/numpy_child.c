/* weft-ops-bench: the NumPy side of a row, in a child process started once
 * per run. The first python3 that imports numpy runs opsbench_numpy.py
 * (OPSBENCH_NUMPY_SCRIPT, the source folder's copy); per row the tool writes
 * the inputs and weft's result as .npy files (weft/npy.h) into a private
 * temporary folder, sends one job line on the child's stdin and reads one
 * answer line from its stdout (the protocol is in the script's header).
 * Writing the inputs, rather than regenerating them in Python, makes
 * NumPy's values exactly weft's. */
#define _POSIX_C_SOURCE 200809L /* fork, pipe, mkdtemp, fdopen */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "opsbench.h"

struct ob_numpy {
    pid_t pid;
    FILE *to, *from;   /* NULL after a failure: the child is gone */
    char dir[PATH_MAX]; /* the temporary folder of the .npy files */
};

/* python3 on PATH when it imports numpy, else Debian's /usr/bin/python3
 * (python3-numpy), else NULL. */
static const char *numpy_python(void)
{
    static const char *const candidates[] = {"python3", "/usr/bin/python3"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "%s -c 'import numpy' >/dev/null 2>&1", candidates[i]);
        if (system(cmd) == 0) {
            return candidates[i];
        }
    }
    return NULL;
}

/* Child: stdin from `to`, stdout into `from`, then the script. */
static void exec_child(const char *python, int to[2], int from[2])
{
    dup2(to[0], STDIN_FILENO);
    dup2(from[1], STDOUT_FILENO);
    close(to[0]);
    close(to[1]);
    close(from[0]);
    close(from[1]);
    execlp(python, python, OPSBENCH_NUMPY_SCRIPT, (char *)NULL);
    _exit(127);
}

static bool spawn(ob_numpy_t *py, const char *python)
{
    int to[2], from[2];
    if (pipe(to) != 0) {
        return false;
    }
    if (pipe(from) != 0) {
        close(to[0]);
        close(to[1]);
        return false;
    }
    fflush(NULL); /* nothing buffered is written twice */
    pid_t pid = fork();
    if (pid == 0) {
        exec_child(python, to, from);
    }
    close(to[0]);
    close(from[1]);
    py->pid = pid;
    py->to = pid > 0 ? fdopen(to[1], "w") : NULL;
    py->from = pid > 0 ? fdopen(from[0], "r") : NULL;
    if (!py->to || !py->from) {
        if (py->to) {
            fclose(py->to);
        } else {
            close(to[1]);
        }
        if (py->from) {
            fclose(py->from);
        } else {
            close(from[0]);
        }
        py->to = py->from = NULL;
        return false;
    }
    return true;
}

/* Ends the child (EOF on its stdin) and waits for it. */
static void shutdown_child(ob_numpy_t *py)
{
    if (py->to) {
        fclose(py->to);
        fclose(py->from);
        py->to = py->from = NULL;
    }
    if (py->pid > 0) {
        waitpid(py->pid, NULL, 0);
        py->pid = 0;
    }
}

/* The child's first line: "ready numpy=<version>". */
static bool handshake(ob_numpy_t *py)
{
    char line[128];
    if (!fgets(line, sizeof line, py->from) || strncmp(line, "ready ", 6) != 0) {
        fprintf(stderr, "weft-ops-bench: the NumPy script did not start (%s)\n",
                OPSBENCH_NUMPY_SCRIPT);
        return false;
    }
    return true;
}

static bool make_dir(ob_numpy_t *py)
{
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(py->dir, sizeof py->dir, "%s/weft-opsbench-", tmp && *tmp ? tmp : "/tmp");
    if (n < 0 || (size_t)n + 7 > sizeof py->dir) {
        fprintf(stderr, "weft-ops-bench: TMPDIR too long\n");
        py->dir[0] = '\0';
        return false;
    }
    memset(py->dir + n, 'X', 6); /* mkdtemp's six-letter template */
    py->dir[n + 6] = '\0';
    if (!mkdtemp(py->dir)) {
        perror("weft-ops-bench: mkdtemp");
        py->dir[0] = '\0';
        return false;
    }
    return true;
}

ob_numpy_t *ob_numpy_start(void)
{
    const char *python = numpy_python();
    if (!python || access(OPSBENCH_NUMPY_SCRIPT, R_OK) != 0) {
        fprintf(stderr, "weft-ops-bench: %s: numpy_ms=na\n",
                python ? "no " OPSBENCH_NUMPY_SCRIPT : "no python3 that imports numpy");
        return NULL;
    }
    ob_numpy_t *py = calloc(1, sizeof *py);
    if (!py) {
        return NULL;
    }
    if (!make_dir(py) || !spawn(py, python) || !handshake(py)) {
        ob_numpy_stop(py);
        return NULL;
    }
    return py;
}

/* Writes t as dir/name.npy; path receives the file's name. */
static bool save(ob_numpy_t *py, const char *name, weft_tensor_t *t, char *path, size_t cap)
{
    char msg[256];
    snprintf(path, cap, "%s/%s.npy", py->dir, name);
    if (weft_npy_save(path, t, msg, sizeof msg) != WEFT_OK) {
        fprintf(stderr, "weft-ops-bench: %s\n", msg);
        return false;
    }
    return true;
}

/* Sends the job and parses "ok <ms> yes|no"; anything else is reported. */
static bool ask(ob_numpy_t *py, const ob_row_t *row, int reps, const char *const paths[3],
                double *ms, bool *agree)
{
    char line[1024], verdict[8];
    fprintf(py->to, "%s\t%d\t%s\t%s\t%s\t%s\n", row->name, reps, paths[0], paths[1], paths[2],
            row->numpy);
    if (fflush(py->to) != 0 || !fgets(line, sizeof line, py->from)) {
        fprintf(stderr, "weft-ops-bench: the NumPy child exited\n");
        return false;
    }
    if (sscanf(line, "ok %lf %7s", ms, verdict) != 2) {
        fprintf(stderr, "weft-ops-bench: NumPy, op %s: %s", row->name, line);
        return false;
    }
    *agree = strcmp(verdict, "yes") == 0;
    return true;
}

bool ob_numpy_time(ob_numpy_t *py, const ob_row_t *row, weft_tensor_t *const *in,
                   weft_tensor_t *ref, int reps, double *ms, bool *agree)
{
    if (!py || !py->to) {
        return false;
    }
    char a[PATH_MAX + 8], b[PATH_MAX + 8] = "-", r[PATH_MAX + 8];
    const char *const paths[3] = {a, b, r};
    bool ok = save(py, "a", in[0], a, sizeof a) &&
              (row->n_in < 2 || save(py, "b", in[1], b, sizeof b)) &&
              save(py, "ref", ref, r, sizeof r) && ask(py, row, reps, paths, ms, agree);
    unlink(a);
    if (row->n_in > 1) {
        unlink(b);
    }
    unlink(r);
    if (!ok) {
        shutdown_child(py);
    }
    return ok;
}

void ob_numpy_stop(ob_numpy_t *py)
{
    if (!py) {
        return;
    }
    shutdown_child(py);
    if (py->dir[0]) {
        rmdir(py->dir);
    }
    free(py);
}
